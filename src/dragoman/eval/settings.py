"""`dragoman eval`'s settings: the server to evaluate, the set, and where the results go."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from dragoman.settings import _Base, comma_list


class EvalSettings(_Base):
    url: str
    """Base URL of the server to evaluate (dragoman, `dragoman route`, or any OpenAI-compatible
    server with --api openai)."""

    api: Literal["native", "openai"] = "native"
    """native: POST /v1/translate; openai: POST /v1/chat/completions with a plain "Translate
    ... Output only the translation." prompt at temperature 0."""

    pairs: list[str] = ["en-fr", "en-de", "en-es", "en-ko", "en-zh", "en-ja"]
    """Language pairs (comma separated, "en-fr")."""

    kinds: list[Literal["ui", "sentence", "paragraph"]] = ["ui", "sentence", "paragraph"]
    """Input kinds: ui (catalogue strings of 2-7 words), sentence (8-40 words), paragraph
    (2-6 Bible verses, 60-130 words)."""

    per_pair: int = Field(default=20, ge=1)
    """Texts per pair and kind."""

    seed: int = 0
    """Seed of the set: the same seed picks the same texts."""

    concurrency: int = Field(default=8, ge=1)
    """Requests in flight at once (one text each)."""

    timeout: float = Field(default=600.0, gt=0)
    """Seconds one request may take."""

    candidates: Literal["auto"] | int = Field(default="auto", union_mode="left_to_right")
    """Candidates per sentence each request asks for (native API): N (1-8), or auto (none
    asked: the server's --candidates)."""

    openai_model: str | None = None
    """Model name for --api openai; default: the first of the server's /v1/models."""

    max_tokens: int = Field(default=512, ge=1)
    """max_tokens of each chat completion (--api openai); dragoman's own output cap."""

    api_key: SecretStr | None = None
    """Bearer key for a server with keys on (prefer DRAGOMAN_API_KEY to the flag)."""

    server_flags: str = ""
    """How the server was started, recorded in the results (a server does not report it)."""

    out: Path = Path("benchmarks/results/eval-latest")
    """Results folder: eval.json (settings, host, rows, every text and output) and eval.md."""

    label: str = ""
    """Free text naming the run (server, host, purpose)."""

    @field_validator("pairs", "kinds", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return comma_list(value)

    @field_validator("pairs")
    @classmethod
    def _pairs(cls, value: list[str]) -> list[str]:
        from dragoman.languages import NAMES, parse_pair

        pairs = [parse_pair(p) for p in value]
        for a, b in pairs:
            if a == b or a not in NAMES or b not in NAMES:
                raise ValueError(f"pair {a}-{b}: two different codes of {', '.join(NAMES)}")
        # Once each: en-fr,EN-FR sent every text twice and counted it twice.
        return list(dict.fromkeys(f"{a}-{b}" for a, b in pairs))

    @field_validator("candidates")
    @classmethod
    def _candidates(cls, value: str | int) -> str | int:
        if value != "auto" and not 1 <= int(value) <= 8:
            raise ValueError("candidates is auto or 1 to 8")
        return value

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        import httpx

        try:
            url = httpx.URL(value)
        except httpx.InvalidURL as exc:
            raise ValueError(f"url {value!r}: {exc}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"url {value!r}: give http://HOST[:PORT] or https://...")
        return value
