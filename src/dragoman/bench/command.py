"""`dragoman bench`: the one command, each of its measurements, their files, and the servers
an interrupt may have left running stopped on the way out."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.console import Console

from dragoman.bench import report
from dragoman.bench._json import dumps
from dragoman.bench.runner import Bench
from dragoman.bench.servers import owning_servers
from dragoman.bench.settings import BenchSettings


def _save(s: BenchSettings, name: str, out: dict[str, Any], md: str, console: Console) -> None:
    s.out.mkdir(parents=True, exist_ok=True)
    (s.out / f"{name}.json").write_text(dumps(out, indent=1))
    (s.out / f"{name}.md").write_text(md)
    console.print(md)


def run_bench(s: BenchSettings) -> None:
    from dragoman.writable import check_dir

    check_dir(s.out, "--out")  # before any server starts, not once the results are in
    with owning_servers():
        _run_bench(s, Console(stderr=True))


def _run_bench(s: BenchSettings, console: Console) -> None:
    if s.overload:
        from dragoman.bench import overload

        out = overload.run_overload(s, console)
        _save(s, "overload", out, overload.markdown(out), console)
        return
    if s.checks_cost:
        from dragoman.bench import checkscost

        out = checkscost.run_checks_cost(s, console)
        _save(s, "checks", out, checkscost.markdown(out), console)
        return
    if s.hostile:
        from dragoman.bench import hostile
        from dragoman.bench.runner import host_meta

        out = hostile.run_hostile(s.out, host_meta(s), console)
        _save(s, "hostile", out, hostile.markdown(out), console)
        return
    if s.files:
        from dragoman.bench import files
        from dragoman.bench.runner import host_meta

        out = files.run_files(s, host_meta(s), console)
        _save(s, "files", out, files.markdown(out), console)
        return
    if s.candidates_cost:
        from dragoman.bench import candidates

        out = candidates.run_candidates_cost(s, console)
        _save(s, "candidates-cost", out, candidates.markdown(out), console)
        return
    if s.soak:
        from dragoman.bench import soak

        out = soak.run_soak(s, console)
        _save(s, "soak", out, soak.markdown(out), console)
        return
    if s.guard_cost:
        from dragoman.bench import guardcost

        out = guardcost.run_guard_cost(s, console)
        _save(s, "guard", out, guardcost.markdown(out), console)
        return
    if s.documents:
        from dragoman.bench import documents

        out = asyncio.run(documents.run_documents_bench(s, console))
        _save(s, "documents", out, documents.markdown(out), console)
        return
    if s.surfaces:
        from dragoman.bench import surfaces

        out = asyncio.run(surfaces.run_surfaces_bench(s, console))
        _save(s, "surfaces", out, surfaces.markdown(out), console)
        return
    if s.ray:
        from dragoman.bench import rayserve

        out = asyncio.run(rayserve.run_ray_bench(s, console))
        _save(s, "ray", out, rayserve.markdown(out, s), console)
        return
    if s.proxy:
        from dragoman.bench import proxy

        out = asyncio.run(proxy.run_proxy_bench(s, console))
        _save(s, "proxy", out, proxy.markdown(out, s), console)
        return
    results = asyncio.run(Bench(s, console).run())
    done = len(results["runs"])
    interrupted = results["meta"].get("interrupted", False)
    if interrupted and not done:
        console.print("interrupted before any level finished: nothing written", soft_wrap=True)
        raise KeyboardInterrupt
    paths = report.write(results, s.out)
    console.print(report.markdown(results))
    for p in paths:
        console.print(f"wrote {p}")
    if interrupted:
        levels = "level" if done == 1 else "levels"
        console.print(
            f"interrupted: wrote the {done} {levels} that finished to {s.out}", soft_wrap=True
        )
        raise KeyboardInterrupt  # exit status 130, as for any Ctrl-C
