"""`dragoman translate FILE --to de [-o OUT]`: a file translated whole, its format kept, through
a running server's /v1/documents (uploaded, its progress shown while it is polled, the result
written), or, when no server answers, through the jobs runner on an engine started here. The
command's settings and its choice between a text and a file are cli_translate.py's; this module
gets what it needs as a `FileJob`. Wrong input (a format no reader handles, a bad file, a
language not served) raises ConfigError (exit 2), before any engine starts."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dragoman import files
from dragoman.engine.protocol import Translator
from dragoman.errors import (
    BadFile,
    ConfigError,
    DragomanError,
    FileTooLarge,
    JobFailed,
    UnsupportedFormat,
)
from dragoman.files.base import render
from dragoman.jobs.runner import Ask, translate_segments
from dragoman.metrics import Metrics
from dragoman.service.admission import Admission
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.translation import TranslationService

POLL_SECONDS = 0.5
# A server's answers that say the command's own input is wrong (exit 2, as a bad flag).
_WRONG_INPUT = frozenset({400, 413, 415, 422})
_WRONG_FILE = (BadFile, FileTooLarge, UnsupportedFormat)


class _ServerError(DragomanError):
    status_code = 502
    code = "server_error"


@dataclass(frozen=True)
class FileJob:
    path: Path
    output: Path
    source: str | None
    """None: detected."""
    target: str
    server: str
    api_key: str | None


def output_for(path: Path, target: str) -> Path:
    """Beside the file, the target language before its extension: report.de.docx."""
    return path.with_name(f"{path.stem}.{target}{path.suffix}")


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("segments"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def _write(path: Path, data: bytes) -> None:
    """Written whole: an interrupted run leaves the old file or none, never half of one."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _message(reply: httpx.Response, server: str) -> str:
    try:
        return str(reply.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"{server} answered {reply.status_code} and is not a dragoman server"


def via_server(job: FileJob) -> bool:
    """Translate `job.path` on the server; False when no server answers there."""
    base = job.server.rstrip("/")
    headers = {"Authorization": f"Bearer {job.api_key}"} if job.api_key else {}
    form = {"target_lang": job.target, "source_lang": job.source or "auto"}
    try:
        with httpx.Client(headers=headers, timeout=httpx.Timeout(300.0, connect=2.0)) as http:
            with job.path.open("rb") as f:
                reply = http.post(
                    f"{base}/v1/documents", files={"file": (job.path.name, f)}, data=form
                )
            if reply.status_code != 202:
                if reply.status_code in _WRONG_INPUT:
                    raise ConfigError(f"{job.path}: {_message(reply, job.server)}")
                raise _ServerError(_message(reply, job.server))
            status = reply.json()
            with _progress() as bar:
                task = bar.add_task(job.path.name, total=status["segments_total"])
                while status["status"] not in ("done", "error"):
                    time.sleep(POLL_SECONDS)
                    reply = http.get(f"{base}{status['links']['self']}")
                    if reply.status_code != 200:
                        raise _ServerError(_message(reply, job.server))
                    status = reply.json()
                    bar.update(task, completed=status["segments_done"])
            if status["status"] == "error":
                raise JobFailed(f"{job.path}: {status['error']}")
            reply = http.get(f"{base}{status['links']['result']}")
            if reply.status_code != 200:
                raise _ServerError(_message(reply, job.server))
            _write(job.output, reply.content)
    except httpx.ConnectError:
        return False
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:  # the input is wrong: exit 2
        raise ConfigError(f"{job.server}: {exc}") from None
    except httpx.HTTPError as exc:  # a timeout; an exception's text may be empty
        raise _ServerError(f"{job.server}: {str(exc) or type(exc).__name__}") from None
    return True


def read_file(job: FileJob, max_bytes: int) -> files.Parsed:
    """The file's segments, read here before any engine starts (ConfigError when it cannot
    be translated: exit 2)."""
    try:
        _, parsed = files.read(job.path.name, job.path.read_bytes(), files.Limits(max_bytes))
    except _WRONG_FILE as exc:
        raise ConfigError(f"{job.path}: {exc.message}") from None
    return parsed


async def translate_here(
    job: FileJob,
    parsed: files.Parsed,
    settings: ServeSettings,
    engine: Callable[[], AbstractAsyncContextManager[Translator]],
) -> None:
    """The file through the jobs runner on the engine `engine` opens, as a server would
    translate it (segments grouped into concurrent calls of the translation service)."""
    async with engine() as translator:
        service = TranslationService(
            lambda: translator,
            settings,
            Metrics(),
            Admission(0, settings.engine_capacity()),
            KeyLimits(0, 0),
        )
        async with service:
            with _progress() as bar:
                task = bar.add_task(job.path.name, total=len(parsed.segments))

                async def progress(done: int, billed: int) -> None:
                    bar.update(task, completed=done)

                texts, _ = await translate_segments(
                    service, parsed.segments, Ask(job.source, job.target), Caller(), progress
                )
            data = await asyncio.to_thread(render, parsed, texts, job.target)
    _write(job.output, data)
