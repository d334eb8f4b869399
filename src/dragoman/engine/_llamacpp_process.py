"""The llama.cpp server child of `--architecture llama-cpp`: its command line, its key, start-up
(until its /health answers 200) and a stop that always leaves no process behind."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from dragoman.errors import EngineDead, EngineFailed

log = logging.getLogger(__name__)

STOP_GRACE_SECONDS = 10.0
# llama-server's variable for --api-key (the embedded server reads it too): in the child's
# environment, which only its user can read, not on its command line, which `ps` shows anyone.
API_KEY_ENV = "LLAMA_API_KEY"
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec (Linux): SIGKILL when the thread that started it exits, so a
    server killed outright does not leave a model's worth of memory running."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def command(
    launcher: list[str],
    gguf: Path,
    port: int,
    *,
    alias: str,
    threads: int,
    slots: int,
    max_model_len: int,
    slot_save_path: Path | None = None,
) -> list[str]:
    """A server of `slots` sequences decoded together (continuous batching), each with a
    context of `max_model_len` tokens, on 127.0.0.1 only. `launcher` starts it: a llama-server
    binary, or the embedded server of the prebuilt wheel (engine/llamacpp_embedded.py), which
    takes the same flags."""
    return [
        *launcher,
        "--model",
        str(gguf),
        "--alias",
        alias,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--threads",
        str(threads),
        "--threads-batch",
        str(threads),
        "--parallel",
        str(slots),
        # One KV cache shared by the slots: each gets max_model_len tokens.
        "--ctx-size",
        str(slots * max_model_len),
        "--cont-batching",
        # An HTTP thread per slot plus the health checks and one waiting request; more requests
        # wait in our connection pool, where a cancelled one costs nothing.
        "--threads-http",
        str(slots + 4),
        "--no-webui",
        "--seed",
        "0",
        # llama.cpp keeps finished prompts' states in memory, up to 8 GiB by default: the wheel's
        # server grew 581 MiB over 500 translations (42 MiB without it). Texts seldom share
        # more than the pair's prefix, which the prefix bank (--slot-save-path) restores.
        "--cache-ram",
        "0",
        # Where slots save the prompt prefixes other slots restore (engine/_llamacpp_slots.py).
        *(["--slot-save-path", str(slot_save_path)] if slot_save_path is not None else []),
    ]


class LlamaServerProcess:
    """One llama-server in its own process group, its output in `log_path`."""

    def __init__(self, cmd: list[str], log_path: Path) -> None:
        self.cmd = cmd
        self.log_path = log_path
        self.url = f"http://127.0.0.1:{cmd[cmd.index('--port') + 1]}"
        self._proc: subprocess.Popen[bytes] | None = None
        self.api_key: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        """What every request to the server carries: its key."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def start(self) -> None:
        # A new key each start: without one any local process could use the server (it listens
        # on 127.0.0.1, which every user of the host reaches).
        self.api_key = secrets.token_urlsafe(32)
        # This key only: none from a file our own environment might name.
        env = {k: v for k, v in os.environ.items() if k != "LLAMA_ARG_API_KEY_FILE"}
        env[API_KEY_ENV] = self.api_key
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as out:  # the child keeps its own descriptor
            self._proc = subprocess.Popen(
                self.cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,  # its own group: stop() reaches anything it spawns
                preexec_fn=_die_with_parent,  # start() runs on the loop's thread, which lives on
            )

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def exit_code(self) -> int | None:
        """None while it runs."""
        return self._proc.poll() if self._proc else None

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    async def wait_healthy(self, within: float) -> None:
        """Until /health answers 200 (503 while the model loads); EngineDead if the child
        exits or the deadline passes first."""
        deadline = time.monotonic() + within
        async with httpx.AsyncClient(
            base_url=self.url, timeout=5.0, headers=self.headers
        ) as client:
            while time.monotonic() < deadline:
                code = self.exit_code()
                if code is not None:
                    raise EngineDead(f"llama-server exited ({code}): {self.log_tail()}")
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get("/health")).status_code == 200:
                        return
                await asyncio.sleep(0.25)
        raise EngineDead(f"llama-server not healthy in {within:g} s: {self.log_tail()}")

    async def stop(self) -> None:
        """SIGTERM to the group, SIGKILL after a grace period: never left running."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                log.warning("llama-server ignored SIGTERM for %g s; killing", STOP_GRACE_SECONDS)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # also anything left in its group
        await asyncio.to_thread(proc.wait)


def error_message(r: httpx.Response) -> str:
    """The message of a llama-server error answer (its `error.message`, else the body)."""
    try:
        err = r.json().get("error", {})
        return str(err.get("message", err) if isinstance(err, dict) else err)[:300]
    except (ValueError, AttributeError):
        return r.text[:300]


async def stream_messages(r: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The messages of a streamed llama-server answer (`data: {...}` lines); EngineFailed for
    an error message."""
    async for line in r.aiter_lines():
        if not line.startswith("data: "):
            continue
        msg: dict[str, Any] = json.loads(line[6:])
        if "error" in msg:
            raise EngineFailed(f"llama-server: {msg['error']}")
        yield msg
