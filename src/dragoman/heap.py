"""The server process's garbage collector, set once at start-up: `dragoman serve` once its engine
is up and its detector loaded, `dragoman route` as its lifespan starts (each entry point hands
`settle` to its app's lifespan; apps built in a test process leave its heap alone).

A collection of any generation holds every thread (the event loop, and the planning a long
request does in a thread) for as long as it walks its objects, and a full one (generation 2)
walks every tracked object that is not frozen."""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger(__name__)

THRESHOLDS = (5_000, 10, 100)
"""`gc.set_threshold` once settled (Python's default: 700, 10, 10). A huge request (64 pages of
60 KB of HTML) keeps ~400,000 objects of its plan alive for its whole run while its units'
objects churn through the young generations: at the default, 16-17 full collections a request
walked that plan, 0.1-0.7 s each (echo server, 2 cores). With 5,000 young objects between
collections most of a unit's objects die by reference count first, and a full collection waits
for 100 middle-generation collections, ~14 of them a huge request: none fell inside 10 such
requests (2000, 10, 100 left one in 3 of 6; benchmarks/loop/stalls.py). A middle-generation
collection then walks up to ~50,000 objects (13 ms at the median). The collector freed nothing
during requests (what they allocate dies by reference count), so this costs no memory; cycles
are still collected, by the full collections that still come."""


def settle() -> None:
    """What is alive now (modules, the tokenizer, the detector, the app) stays alive: collect
    what is not, freeze the rest out of the collector's sight (vLLM does the same in its engine
    process), so a full collection walks only what requests allocate; then raise the
    thresholds. Once a process: frozen objects are never collected, so a second call (a second
    app in one process) freezes nothing more."""
    started = time.perf_counter()
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    log.info(
        "heap frozen: %d objects out of the collector's sight, thresholds %s (%.2f s)",
        gc.get_freeze_count(),
        ",".join(map(str, THRESHOLDS)),
        time.perf_counter() - started,
    )
