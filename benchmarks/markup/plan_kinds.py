"""The in-process cost of plan and reassembly (identity replies) of three 10 KB inputs: the
bench's HTML page, the bench's plain text, and a text dense in placeholders; fastest of 200
(ms) each, printed as JSON. Alternate two source trees in fresh processes to compare them:

    for i in 1 2 3; do for t in OLD NEW; do
        PYTHONPATH=$t/src python benchmarks/markup/plan_kinds.py
    done; done

(how the placeholder changes of 2026-11-27 were measured, benchmarks/README.md, Documents)."""

from __future__ import annotations

import json
import time

from dragoman.bench.documents import SENTENCES, _page
from dragoman.service.documents import Sizes, TextOptions, plan

SIZES = Sizes(300, 200)
DENSE = "Hello {name}, you have %(count)d new messages at https://example.com/a?b=1 :smile: "
INPUTS = {
    "html": (_page(10_000), TextOptions(markup="html")),
    "text": (" ".join(SENTENCES * 12)[:10_000], TextOptions()),
    "ph": ((DENSE * 120)[:10_000], TextOptions()),
}

out = {}
for name, (doc, options) in INPUTS.items():
    times = []
    for _ in range(200):
        started = time.perf_counter()
        p = plan(doc, "en", options, SIZES)
        p.assemble(p.units)
        times.append(time.perf_counter() - started)
    out[name] = round(1000 * min(times[10:]), 3)
print(json.dumps(out))
