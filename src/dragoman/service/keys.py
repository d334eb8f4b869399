"""API keys: stored only as sha256 digests, in a file (one `<hex digest> [name]` a line) and/or
given raw in `DRAGOMAN_API_KEYS` (hashed at load). Off when neither is set. The file is re-read
when it changes, so `dragoman keys revoke` takes effect without a restart. Keys never reach
logs or metric labels; a key's name (from the file) may."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic_settings import CliPositionalArg

from dragoman.errors import ConfigError, InvalidApiKey, MissingApiKey
from dragoman.settings import _Base


class KeysSettings(_Base):
    api_keys_file: Path
    """The API keys file a server reads (`dragoman serve --api-keys-file`)."""


class KeyNameSettings(KeysSettings):
    name: CliPositionalArg[str]
    """The key's name (shown in metrics and `dragoman keys list`; the key itself never is)."""


log = logging.getLogger(__name__)

_DIGEST = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
_RECHECK_SECONDS = 1.0  # how often a request may look at the file's mtime


@dataclass(frozen=True)
class Caller:
    """Who sent a request: a key's digest and its name, or nobody when keys are off."""

    key: str | None = None
    name: str | None = None


ANONYMOUS = Caller()


def hash_key(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def new_key() -> str:
    return "dm-" + secrets.token_urlsafe(32)


def parse_keys_file(text: str, source: str) -> dict[str, str | None]:
    """Digest -> name. Blank lines and `#` comments are skipped; anything else malformed is
    a ConfigError naming the line (a typo must not silently lock everyone out, or let anyone in)."""
    keys: dict[str, str | None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        digest, name = fields[0].lower(), fields[1] if len(fields) > 1 else None
        if not _DIGEST.fullmatch(digest) or len(fields) > 2:
            raise ConfigError(
                f"{source}:{number}: expected '<sha256 hex digest> [name]' (the digest of a key, "
                "never the key itself; `dragoman keys add NAME` writes one)"
            )
        if name is not None and not _NAME.fullmatch(name):
            raise ConfigError(f"{source}:{number}: bad key name {name!r}")
        keys[digest] = name
    return keys


class KeyStore:
    def __init__(self, path: Path | None, raw_keys: str | None) -> None:
        self.path = path
        self._env = {hash_key(k.strip()): None for k in (raw_keys or "").split(",") if k.strip()}
        self._file: dict[str, str | None] = {}
        self._stamp: tuple[int, int] | None = None
        self._checked = 0.0
        if path is not None:
            self._load()  # a malformed file stops the server at start (ConfigError)
            if self._stamp is None:
                log.warning(
                    "keys file %s does not exist: every request is refused until it is "
                    "written (`dragoman keys add NAME --api-keys-file %s`)",
                    path,
                    path,
                )

    @property
    def enabled(self) -> bool:
        return self.path is not None or bool(self._env)

    def names(self) -> list[str]:
        return sorted({n for n in self._file.values() if n})

    def _load(self) -> None:
        assert self.path is not None
        try:
            st = self.path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
            if stamp != self._stamp:
                self._file = parse_keys_file(_text(self.path), str(self.path))
                self._stamp = stamp
        except FileNotFoundError:
            # A missing file means no keys from it (every request refused), not "keys off".
            self._file, self._stamp = {}, None

    def authenticate(self, raw: str | None, how: str = "Authorization: Bearer <key>") -> Caller:
        """The caller a key belongs to; MissingApiKey or InvalidApiKey otherwise. `how` is the
        surface's convention, named in the error."""
        if not self.enabled:
            return ANONYMOUS
        if not raw:
            raise MissingApiKey(f"an API key is required: send {how}")
        now = time.monotonic()
        if self.path is not None and now - self._checked >= _RECHECK_SECONDS:
            self._checked = now
            try:
                self._load()
            except ConfigError as exc:  # a bad edit keeps the keys that were good
                log.error("keys file not reloaded: %s", exc)
        digest = hash_key(raw)
        if digest in self._env:
            return Caller(digest, None)
        if digest in self._file:
            return Caller(digest, self._file[digest])
        raise InvalidApiKey("the API key is not valid")


# -- `dragoman keys`: the file's editor ------------------------------------------------------


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError) as exc:  # a directory, unreadable, not UTF-8
        raise ConfigError(f"{path}: cannot read the keys file: {exc}") from None


@contextlib.contextmanager
def _editing(path: Path) -> Iterator[None]:
    """One editor of the keys file at a time (`dragoman keys` run twice at once lost keys):
    an exclusive lock on a file beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def add_key(path: Path, name: str) -> str:
    """Append a new key's digest under `name` and return the key (shown once, stored nowhere)."""
    if not _NAME.fullmatch(name):
        raise ConfigError(f"bad key name {name!r}: letters, digits and _ . @ - (up to 64)")
    with _editing(path):
        text = _text(path) if path.exists() else ""
        if name in parse_keys_file(text, str(path)).values():
            raise ConfigError(f"{path} already has a key named {name!r}")
        key = new_key()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as f:
            # a file edited by hand may end without a line break: the key gets a line of its own
            f.write(
                ("\n" if text and not text.endswith("\n") else "") + f"{hash_key(key)} {name}\n"
            )
    return key


def revoke_key(path: Path, name: str) -> bool:
    """Remove the key named `name`; False when there is none. The file is replaced whole (a
    server reading it meanwhile sees the old one or the new one, never half of one)."""
    with _editing(path):
        if not path.exists():
            return False
        lines = _text(path).splitlines(keepends=True)
        kept = [line for line in lines if line.split("#", 1)[0].split()[1:2] != [name]]
        if len(kept) == len(lines):
            return False
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                f.write("".join(kept))
            st = path.stat()
            os.chmod(tmp, st.st_mode & 0o777)
            if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                # the server's user must still read it (`sudo dragoman keys revoke`)
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except PermissionError:
                    raise ConfigError(
                        f"{path} belongs to another user: revoke as that user or as root"
                    ) from None
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    return True


def list_keys(path: Path) -> list[tuple[str, str]]:
    """(name, first 12 hex digits of the digest) for every key in the file."""
    if not path.exists():
        return []
    keys = parse_keys_file(_text(path), str(path))
    return [(name or "-", digest[:12]) for digest, name in keys.items()]
