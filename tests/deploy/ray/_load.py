"""Closed-loop load on the ingress in a background thread, every answer kept, until stopped
(bounded by a deadline of its own): the Ray tests watch the cluster while it runs."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field

import httpx


@dataclass
class Load:
    url: str
    clients: int
    max_seconds: float
    ok: int = 0
    errors: list[str] = field(default_factory=list)
    """Every answer other than 200, and every transport error."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def sent(self) -> int:
        return self.ok + len(self.errors)

    def __enter__(self) -> Load:
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    async def _run(self) -> None:
        deadline = time.monotonic() + self.max_seconds
        limits = httpx.Limits(max_connections=self.clients + 2)

        async def client(c: httpx.AsyncClient, n: int) -> None:
            i = 0
            while not self._stop.is_set() and time.monotonic() < deadline:
                i += 1
                body = {"text": f"text {n}-{i}", "source_lang": "en", "target_lang": "fr"}
                try:
                    r = await c.post(f"{self.url}/v1/translate", json=body)
                    if r.status_code == 200:
                        self.ok += 1
                    else:
                        self.errors.append(f"{r.status_code} {r.text[:200]}")
                except httpx.HTTPError as exc:
                    self.errors.append(f"{type(exc).__name__}: {exc}")

        async with httpx.AsyncClient(timeout=60, limits=limits) as c:
            await asyncio.gather(*(client(c, n) for n in range(self.clients)))
