"""A document job as it is stored: what was sent, how far its translation got, how it ended,
and who may read it. A job is named by an unguessable id and read with its key (DeepL's
`document_key`; native and LibreTranslate clients get both as one handle, the id followed by
the key) or by the API key that sent it; only the key's digest is stored."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import socket
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Literal

from dragoman.errors import JobNotFound
from dragoman.service.keys import Caller

Status = Literal["queued", "translating", "done", "error"]
FINAL: frozenset[str] = frozenset({"done", "error"})

ID_LENGTH = 22
"""Characters of an id: `secrets.token_urlsafe(16)`, 128 random bits."""
_ID = re.compile(rf"[A-Za-z0-9_-]{{{ID_LENGTH}}}")
_KEY = re.compile(r"[A-Za-z0-9_-]{20,100}")

RESTARTED = "the server restarted while it was translating this document; submit it again"


def new_id() -> str:
    return secrets.token_urlsafe(16)


def new_key() -> str:
    return secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def is_id(value: str) -> bool:
    """Whether `value` can be an id (checked before it names a file or a store key)."""
    return _ID.fullmatch(value) is not None


def split_handle(handle: str) -> tuple[str, str | None]:
    """(id, key) of a native or LibreTranslate handle; a bare id has no key. JobNotFound for
    anything that is neither."""
    job_id, key = handle[:ID_LENGTH], handle[ID_LENGTH:]
    if not is_id(job_id) or (key and _KEY.fullmatch(key) is None):
        raise JobNotFound("no document by that id (it may have expired)")
    return job_id, key or None


@dataclass(frozen=True)
class Instance:
    """The server process translating a job: its host, its pid, and a token of its own (a
    container restarted gets the same host name and pid 1 again)."""

    host: str
    pid: int
    token: str

    @classmethod
    def here(cls) -> Instance:
        return cls(socket.gethostname(), os.getpid(), secrets.token_hex(8))

    def __str__(self) -> str:
        return f"{self.host}|{self.pid}|{self.token}"

    @classmethod
    def parse(cls, text: str) -> Instance | None:
        host, _, rest = text.rpartition("|")
        host, _, pid = host.rpartition("|")
        return cls(host, int(pid), rest) if pid.isdigit() else None


@dataclass
class JobRecord:
    id: str
    key_digest: str
    owner: str | None
    """The digest of the API key that sent it (None with keys off)."""
    filename: str
    format: str
    media_type: str
    source: str | None
    target: str
    segments_total: int
    characters: int
    """The document's characters (its segments')."""
    server: str
    """The server process translating it (`Instance`)."""
    status: Status = "queued"
    segments_done: int = 0
    billed_characters: int = 0
    error: str | None = None
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    beat: float = field(default_factory=time.time)
    """When its server last said it was still at work (a wall clock: servers share it)."""
    upload_bytes: int = 0
    result_bytes: int = 0

    @property
    def final(self) -> bool:
        return self.status in FINAL

    def expires(self, ttl: float) -> float | None:
        """When a finished job is removed (None while it runs)."""
        return None if self.finished is None else self.finished + ttl

    def seconds_remaining(self, now: float | None = None) -> int | None:
        """An estimate from the pace so far; None before a segment is done or once final."""
        if self.final or self.started is None or not self.segments_done:
            return None
        pace = ((now or time.time()) - self.started) / self.segments_done
        return max(1, round(pace * (self.segments_total - self.segments_done)))

    def failed(self, message: str, now: float | None = None) -> None:
        self.status, self.error = "error", message
        self.finished = self.beat = now or time.time()

    def readable_by(self, key: str | None, caller: Caller) -> bool:
        if key is not None and hmac.compare_digest(digest(key), self.key_digest):
            return True
        return caller.key is not None and caller.key == self.owner

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes | str) -> JobRecord | None:
        """The record, or None for what is not one (a torn or foreign file)."""
        try:
            data = json.loads(raw)
            names = {f.name for f in fields(cls)}
            record = cls(**{k: v for k, v in data.items() if k in names})
        except (ValueError, TypeError):
            return None
        return record if is_id(record.id) else None


def orphaned(record: JobRecord, me: Instance, stale: float, now: float | None = None) -> bool:
    """Whether an unfinished job has no server translating it any more: its server has not
    said so for `stale` seconds, or it ran on this host in a process that is gone (or in an
    earlier life of this one's pid: a restarted container)."""
    if record.final:
        return False
    if (now or time.time()) - record.beat > stale:
        return True
    server = Instance.parse(record.server)
    if server is None:
        return True
    if server.host != me.host or server.token == me.token:
        return False
    if server.pid == me.pid:
        return True
    return not _alive(server.pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True
