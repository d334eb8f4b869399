"""The 10 KB page's in-process cost (plan and reassembly, identity replies) under two source
trees, alternated in fresh processes: `python benchmarks/markup/page_ab.py OLD_SRC NEW_SRC
[ROUNDS]`. Each process times 300 pages after 30 of warm-up and prints its median and fastest
(ms); the last line gives the medians of the rounds and new/old. Run it alone: both trees share
the machine's speed only when nothing else runs."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

CHILD = r"""
import statistics, time
from dragoman.bench.documents import _page
from dragoman.service.documents import Sizes, TextOptions, plan
page, sizes, options = _page(10_000), Sizes(300, 200), TextOptions(markup="html")
def once():
    p = plan(page, "en", options, sizes)
    p.assemble(p.units)
for _ in range(30):
    once()
times = []
for _ in range(300):
    started = time.perf_counter()
    once()
    times.append(time.perf_counter() - started)
print(1000 * statistics.median(times), 1000 * min(times))
"""


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    got: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    for _ in range(rounds):
        for side, src in (("old", old), ("new", new)):
            env = {**os.environ, "PYTHONPATH": src}
            out = subprocess.run(
                [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
            ).stdout.split()
            median, fastest = float(out[0]), float(out[1])
            got[side].append((median, fastest))
            print(f"{side} median {median:.3f} ms, fastest {fastest:.3f} ms", flush=True)
    m = {side: statistics.median(x[0] for x in v) for side, v in got.items()}
    f = {side: statistics.median(x[1] for x in v) for side, v in got.items()}
    print(
        f"medians: old {m['old']:.3f}, new {m['new']:.3f} ms ({m['new'] / m['old']:.3f}x); "
        f"fastest: old {f['old']:.3f}, new {f['new']:.3f} ms ({f['new'] / f['old']:.3f}x)"
    )


if __name__ == "__main__":
    main()
