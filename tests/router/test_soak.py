"""Soak: a real echo-architecture server on 127.0.0.1 under a minute of mixed traffic (at most
600 rounds of 26 requests, whichever ends first): successes, 413s, 422s, 400s, 401s, 429s
past a small admission bound, 504s, and clients that hang up while the server holds their
request. Its RSS and open file descriptors, sampled with no client connected after a warm-up
and at the end, must not grow.

Tolerances. Descriptors: +20. With every client gone the count is exact (0 growth on a sound
server); two clients leave mid-request in every round, so a socket or pipe leaked per
disconnect, or per anything else in a round, is hundreds of descriptors. Memory: +30 MiB. A
sound server grows well under 5 MiB here (allocator noise after warm-up); a minute is ~10,000
requests on a 2-core host, so keeping ~3 KiB per request (a request's body, an asyncio task
and its frame, a per-request entry in a dict) passes 30 MiB. A slower host sends fewer requests
and so can miss a smaller leak, but never fails a sound server: bounds are counts and time, the
waits are conditions with deadlines."""

from __future__ import annotations

from pathlib import Path

import httpx

from dragoman.bench.servers import Launched
from dragoman.bench.soak import KEY, launch_soak_server, soak

SECONDS = 60.0
MAX_ROUNDS = 600
FD_TOLERANCE = 20
RSS_TOLERANCE_MIB = 30.0


async def test_a_minute_of_mixed_traffic_grows_neither_memory_nor_descriptors(
    logs: Path, stop_all: list[Launched]
) -> None:
    server = launch_soak_server(logs)
    stop_all.append(server)
    out = await soak(server.url, server.pid, SECONDS, MAX_ROUNDS)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as c:
        metrics = (await c.get("/metrics", headers={"Authorization": f"Bearer {KEY}"})).text

    outcomes = out["outcomes"]
    unexpected = [k for k in outcomes if k.startswith("error") or (k[0] == "5" and k != "504")]
    assert not unexpected, outcomes
    # The mix reached every path it is meant to (the warm-up alone does on any host).
    assert {"200", "400", "401", "413", "422", "429", "left"} <= set(outcomes), outcomes
    aborted = next(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith("dragoman_aborted_total ")
    )
    assert aborted > 0, "no client that left had its work aborted"

    base, final = out["baseline"], out["final"]
    assert base["settled"] and final["settled"], "the server kept client connections open"
    assert final["fds"] - base["fds"] <= FD_TOLERANCE, out["series"]
    assert final["rss_mib"] - base["rss_mib"] <= RSS_TOLERANCE_MIB, out["series"]
