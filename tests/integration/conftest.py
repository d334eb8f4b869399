"""The integration tier: a real `dragoman serve` process with the real vLLM engine on the real
default model, on 127.0.0.1. One server per session; its start-up is observed on the way."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

START_TIMEOUT = 300.0


@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    # Answers seen while the engine was still loading: (path, status, body).
    during_load: list[tuple[str, int, dict[str, object]]] = field(default_factory=list)
    start_seconds: float = 0.0


def start_server(tmp: Path, *args: str) -> LiveServer:
    port = free_port()
    log = tmp / f"server-{port}.log"
    cmd = [sys.executable, "-m", "dragoman", "serve", "--port", str(port), *args]
    with log.open("wb") as out:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
    server = LiveServer(f"http://127.0.0.1:{port}", process, log)
    started = time.monotonic()
    probe = {"text": "Hello", "source_lang": "en", "target_lang": "fr"}
    with httpx.Client(base_url=server.url, timeout=10) as client:
        while time.monotonic() - started < START_TIMEOUT:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()[-3000:]}")
            try:
                ready = client.get("/ready")
            except httpx.TransportError:
                time.sleep(0.5)
                continue
            if ready.status_code == 200:
                server.start_seconds = time.monotonic() - started
                return server
            if not server.during_load:
                r = client.post("/v1/translate", json=probe)
                server.during_load += [
                    ("/ready", ready.status_code, ready.json()),
                    ("/v1/translate", r.status_code, r.json()),
                ]
            time.sleep(0.5)
    stop_server(server)
    raise RuntimeError(f"server not ready in {START_TIMEOUT} s: {log.read_text()[-3000:]}")


def stop_server(server: LiveServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    server = start_server(tmp_path_factory.mktemp("server"), "--max-items", "8")
    yield server
    stop_server(server)


@pytest.fixture
async def client(live_server: LiveServer) -> Iterator[httpx.AsyncClient]:  # type: ignore[misc]
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=live_server.url, timeout=180, limits=limits) as c:
        yield c
