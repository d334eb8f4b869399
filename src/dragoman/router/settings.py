"""`dragoman route`'s settings: the backends and how the proxy checks and reaches them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from dragoman.settings import HostChecked, MetricsKeyed


class BackendSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str
    """Base URL of a dragoman server, e.g. http://127.0.0.1:8001."""

    name: str = ""
    """Label in metrics and logs (default b0, b1, ...)."""

    pairs: list[str] = []
    """Pairs it serves ("en-fr"); empty: learned from its /v1/languages."""

    @field_validator("pairs")
    @classmethod
    def _pairs(cls, value: list[str]) -> list[str]:
        from dragoman.languages import parse_pair

        for pair in value:
            parse_pair(pair)  # ValueError: a validation error naming the pair
        return value

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"backend url {value!r} must start with http:// or https://")
        return value.rstrip("/")


class RouteSettings(MetricsKeyed, HostChecked):
    backends: list[BackendSpec] = []
    """Backends: in a TOML config ([[backends]] url/name/pairs), or as a JSON list on the
    command line; `--backend-urls` is the short form."""

    backend_urls: list[str] = []
    """Backend URLs whose pairs are learned from their /v1/languages (comma separated)."""

    host: str = "127.0.0.1"
    """Address to bind."""

    port: int = Field(default=8080, ge=0, le=65535)
    """Port to bind."""

    check_interval: float = Field(default=2.0, gt=0)
    """Seconds between active health checks of each backend's /ready."""

    check_timeout: float = Field(default=2.0, gt=0)
    """Seconds a health check may take."""

    fail_threshold: int = Field(default=2, ge=1)
    """Consecutive failed checks (or 5xx answers) that eject a backend."""

    recover_threshold: int = Field(default=2, ge=1)
    """Consecutive passed checks that (re)admit a backend."""

    max_in_flight: int = Field(default=64, ge=1)
    """Most requests in flight to one backend; beyond it, 503 backends_busy."""

    max_connections: int = Field(default=256, ge=1)
    """Pooled connections to all backends together."""

    timeout: float = Field(default=300.0, gt=0)
    """Seconds a backend may take to answer one request."""

    connect_timeout: float = Field(default=2.0, gt=0)
    """Seconds to open a connection to a backend."""

    max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Largest request body the proxy reads (413 `body_too_large`)."""

    max_file_bytes: int = Field(default=30 * 2**20, ge=1024)
    """Largest file a document upload through the proxy may carry (413 `file_too_large`): as
    the servers' --max-file-bytes, on their upload routes only."""

    keep_alive_seconds: int = Field(default=30, ge=1)
    """Idle client connections close after this long (longer than HTTP clients' pools keep
    theirs, as on `dragoman serve`)."""

    cors_origins: str = "*"
    """Access-Control-Allow-Origin for browser clients, as on `dragoman serve`; empty: none."""

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """Log level."""

    log_format: Literal["text", "json"] = "text"
    """Log lines: `text`, or `json` (one JSON object a line on stderr), as on `dragoman
    serve`."""

    gc_freeze: bool = True
    """As on `dragoman serve`: once started, freeze what is alive out of Python's garbage
    collector's sight and raise its thresholds, so a full collection walks only what
    requests allocate (the proxy's imports: ~70,000 objects)."""

    @field_validator("backend_urls", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        items = value.split(",") if isinstance(value, str) else value
        return [v.strip() for v in items if v.strip()] if isinstance(items, list) else items

    @model_validator(mode="after")
    def _merge(self) -> RouteSettings:
        self.backends = [*self.backends, *(BackendSpec(url=u) for u in self.backend_urls)]
        if not self.backends:
            raise ValueError("no backends: give --backend-urls or [[backends]] in the config")
        return self
