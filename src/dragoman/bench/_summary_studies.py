"""The extractors of the per-host summaries (`summary.py`), one per study kind of the load,
cost and limit measurements (`_summary_eval.py` reads the quality runs): each reads a result
file's own fields and computes its headline figures and the ratio each is read by. A field an
extractor needs that is missing, empty or not a finite number raises `FigureError`: a summary
never prints a figure its file does not hold. A side the run did not measure (a baseline left
out of a run) gives no row."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dragoman.bench import hostile
from dragoman.bench.overload import GOODPUT_SHARE, OVERLOAD_FACTOR, P99_FACTOR
from dragoman.bench.verdicts import GUARD_MARGIN, band, widest_spread

CLIENTS = 16  # the level the throughput rows compare at: the default max_num_seqs
# The targets `dragoman bench --documents` checks (bench/documents.py).
DOCUMENT_RATIO = 2.0
CACHE_HIT_MS = 2.0
MARKUP_MS = 5.0
WORD = {True: "MET", False: "MISSED"}

PEERS = (
    ("vllm-serve", "vLLM's own OpenAI server on the same plan"),
    ("llama-server", "llama.cpp's server alone"),
    ("continuous-legacy", "the old defaults"),
    ("static-batch", "the static-batch baseline"),
    ("multiprocess", "the multiprocessing-queue baseline"),
)
ENGINES = {
    "continuous": "dragoman on vLLM",
    "continuous-w8a8": "dragoman on vLLM, w8a8 weights",
    "continuous-bf16": "dragoman on vLLM, full weights in bf16",
    "llama-cpp": "dragoman on llama.cpp",
}


class FigureError(ValueError):
    """A result file lacks a field its study's figures need, or holds no usable number there."""


@dataclass(frozen=True)
class Row:
    what: str
    figure: str
    ratio: str


@dataclass(frozen=True)
class Source:
    """A committed result file (path under benchmarks/results) and the study kind that reads
    it; `against` is the second run a comparison of two runs reads, `label` names the two, and
    `languages` says whether their wrong-language verdicts came from the same rules."""

    kind: str
    path: str
    against: str | None = None
    label: str = ""
    languages: bool = True


Extractor = Callable[[Any, Any, Source], list[Row]]


def field(doc: Any, *keys: str | int) -> Any:
    here = doc
    for i, key in enumerate(keys):
        try:
            here = here[key]
        except (KeyError, IndexError, TypeError):
            raise FigureError(f"no {'.'.join(map(str, keys[: i + 1]))}") from None
    return here


def number(doc: Any, *keys: str | int) -> float:
    value = field(doc, *keys)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FigureError(f"{'.'.join(map(str, keys))} is {value!r}, not a finite number")
    return float(value)


def nonempty(doc: Any, *keys: str | int) -> Any:
    """A list or mapping that holds something."""
    value = field(doc, *keys)
    if not isinstance(value, list | dict) or not value:
        raise FigureError(f"{'.'.join(map(str, keys))} is {value!r}, not a non-empty list or map")
    return value


def times(a: float, b: float, digits: int = 2) -> str:
    """`a` as a multiple of `b`."""
    if b <= 0:
        raise FigureError(f"cannot compare {a:g} with {b:g}")
    return f"{a / b:.{digits}f}x"


# --- load levels: the architectures run and the engine choice ---------------------------------


def _levels(doc: Any) -> dict[tuple[str, float], int]:
    """(architecture, clients) of each closed-loop level, to its index in `runs`."""
    runs = nonempty(doc, "runs")
    if not isinstance(runs, list):
        raise FigureError("runs is no list")
    return {
        (str(field(doc, "runs", i, "architecture")), number(doc, "runs", i, "concurrency")): i
        for i in range(len(runs))
        if field(doc, "runs", i, "mode") == "closed"
    }


def _tok(doc: Any, i: int) -> float:
    return number(doc, "runs", i, "summary", "output_tokens_per_s")


def _latency(doc: Any, i: int, which: str) -> float:
    return number(doc, "runs", i, "summary", f"latency_{which}_s")


def architectures(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """dragoman with the host defaults against vLLM's own server and the baselines it replaces,
    at 16 clients: output tok/s, and the p99 beside vLLM's server."""
    levels = _levels(doc)
    me = levels.get(("continuous", CLIENTS))
    if me is None:
        raise FigureError(f"no `continuous` level at {CLIENTS} clients")
    tok = _tok(doc, me)
    rows = []
    for arch, name in PEERS:
        if (peer := levels.get((arch, CLIENTS))) is not None:
            rows.append(
                Row(
                    f"output tok/s at {CLIENTS} clients, dragoman (`continuous`, host defaults) "
                    f"against {name} (`{arch}`)",
                    f"{tok:.1f} tok/s",
                    f"{times(tok, _tok(doc, peer))} ({_tok(doc, peer):.1f} tok/s)",
                )
            )
    if (peer := levels.get(("vllm-serve", CLIENTS))) is not None:
        mine, theirs = _latency(doc, me, "p99"), _latency(doc, peer, "p99")
        rows.append(
            Row(
                f"p99 latency at {CLIENTS} clients, dragoman against vLLM's own server",
                f"{mine:.2f} s",
                f"{times(mine, theirs)} ({theirs:.2f} s)",
            )
        )
    return rows


def engines(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """Each engine dragoman ran on against llama.cpp's server alone: the p50 of one client and
    the output tok/s of sixteen."""
    levels = _levels(doc)
    order = {a: i for i, a in enumerate(ENGINES)}
    archs = sorted(
        {a for a, _ in levels} - {"llama-server", "llama-server-wheel", "vllm-serve"},
        key=lambda a: (order.get(a, len(order)), a),
    )
    rows = []
    for arch in archs:
        name = f"{ENGINES.get(arch, 'dragoman')} (`{arch}`)"
        mine, peer = levels.get((arch, 1)), levels.get(("llama-server", 1))
        if mine is not None and peer is not None:
            p50, theirs = _latency(doc, mine, "p50"), _latency(doc, peer, "p50")
            rows.append(
                Row(
                    f"p50 latency at 1 client, {name} against llama.cpp's server alone",
                    f"{p50:.2f} s",
                    f"{times(p50, theirs)} ({theirs:.2f} s)",
                )
            )
        mine, peer = levels.get((arch, CLIENTS)), levels.get(("llama-server", CLIENTS))
        if mine is not None and peer is not None:
            tok, theirs = _tok(doc, mine), _tok(doc, peer)
            rows.append(
                Row(
                    f"output tok/s at {CLIENTS} clients, {name} against llama.cpp's server alone",
                    f"{tok:.1f} tok/s",
                    f"{times(tok, theirs)} ({theirs:.1f} tok/s)",
                )
            )
    return rows


# --- costs and limits -------------------------------------------------------------------------


def guard(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """The repetition guard on against off: the median round of each."""
    rounds = {
        mode: [
            number(doc, "rounds", mode, i, "output_tokens_per_s")
            for i in range(len(nonempty(doc, "rounds", mode)))
        ]
        for mode in ("on", "off")
    }
    on, off = statistics.median(rounds["on"]), statistics.median(rounds["off"])
    cost = 1 - on / off
    verdict = band(cost, GUARD_MARGIN, widest_spread(rounds.values()))
    texts, same = int(number(doc, "texts")), int(number(doc, "identical_outputs"))
    return [
        Row(
            f"output tok/s with the repetition guard on against off ({texts} texts at once, "
            f"median of {len(rounds['on'])} rounds; {same} of {texts} outputs identical)",
            f"{on:.1f} tok/s",
            f"{times(on, off, 3)} ({off:.1f} tok/s): costs {100 * cost:.1f}%, target within "
            f"{100 * GUARD_MARGIN:g}%: {verdict}",
        )
    ]


def overload(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """Goodput and admitted p99 at 4x the admission bound against the mean of the two phases at
    the bound (before and after), as `dragoman bench --overload` judges them."""
    bound = int(number(doc, "admission_limit"))
    clients = int(number(doc, "overload", "clients"))
    if clients != OVERLOAD_FACTOR * bound:
        raise FigureError(f"overload.clients is {clients}, not {OVERLOAD_FACTOR}x the bound")
    at_bound = [("sweep", -1), ("saturation_after",)]
    goodput = statistics.mean(number(doc, *k, "goodput_rps") for k in at_bound)
    p99 = statistics.mean(number(doc, *k, "admitted_p99_s") for k in at_bound)
    over, over_p99 = (
        number(doc, "overload", "goodput_rps"),
        number(doc, "overload", "admitted_p99_s"),
    )
    what = f"at {OVERLOAD_FACTOR}x the admission bound ({clients} clients) against at the bound"
    return [
        Row(
            f"goodput {what}",
            f"{over:.2f} req/s",
            f"{times(over, goodput)} ({goodput:.2f} req/s); target >= {GOODPUT_SHARE:g}x: "
            f"{WORD[over / goodput >= GOODPUT_SHARE]}",
        ),
        Row(
            f"admitted p99 latency {what}",
            f"{over_p99:.2f} s",
            f"{times(over_p99, p99)} ({p99:.2f} s); target <= {P99_FACTOR:g}x: "
            f"{WORD[over_p99 / p99 <= P99_FACTOR]}",
        ),
    ]


def hostile_texts(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """The three crafted-text targets of `dragoman bench --hostile`."""
    patterns = nonempty(doc, "patterns")
    worst = max(number(doc, "patterns", i, "worst_s") for i in range(len(patterns)))
    families = [
        (number(doc, "path", kind, "families", name, "ratio"), name, kind)
        for kind in sorted(nonempty(doc, "path"))
        for name in sorted(nonempty(doc, "path", kind, "families"))
    ]
    ratio, name, kind = max(families)
    plain = number(doc, "path", kind, "plain_seconds")
    seconds = number(doc, "path", kind, "families", name, "seconds")
    runs = sorted(nonempty(doc, "health"))
    for run in runs:  # what the verdict reads besides the p99
        number(doc, "health", run, "health_probes")
        field(doc, "health", run, "statuses")
    health = max(number(doc, "health", run, "health_p99_ms") for run in runs)
    size = int(number(doc, "size"))
    met = hostile.verdicts(doc)
    return [
        Row(
            f"the slowest of {len(patterns)} patterns on request text, on its worst crafted "
            f"text of {size:,} characters",
            f"{1000 * worst:.1f} ms",
            f"{times(worst, hostile.PATTERN_LIMIT_S)} the {hostile.PATTERN_LIMIT_S:g} s limit: "
            f"{WORD[met['patterns']]}",
        ),
        Row(
            f"the request path on the costliest crafted family ({name}, {kind}) against plain "
            "prose of the same length",
            f"{1000 * seconds:.1f} ms",
            f"{ratio:.2f}x ({1000 * plain:.1f} ms); limit {hostile.RATIO_LIMIT:g}x: "
            f"{WORD[met['path']]}",
        ),
        Row(
            "/health p99 beside the largest admitted request and beside a stream of long "
            "requests (the worse of the two)",
            f"{health:.1f} ms",
            f"{times(health, hostile.HEALTH_P99_LIMIT_MS)} the "
            f"{hostile.HEALTH_P99_LIMIT_MS:g} ms limit: {WORD[met['health']]}",
        ),
    ]


def hit_ab(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """A cache hit's round trip, two source trees paired in one run (`benchmarks/cache/hit_ab.py`):
    B's p50 against A's."""
    a, b = number(doc, "runs", "A", "p50_ms"), number(doc, "runs", "B", "p50_ms")
    rounds, block = int(number(doc, "rounds")), int(number(doc, "block"))
    through = " through each tree's own `dragoman route`" if doc.get("route") else ""
    return [
        Row(
            f"a cache hit's round trip{through}, p50, tree B against tree A (echo engine, "
            f"{rounds} rounds of {block} requests each way; the folder's README names the trees)",
            f"{b:.2f} ms",
            f"{times(b, a, 3)} ({a:.2f} ms)",
        )
    ]


def documents(doc: Any, _against: Any, _source: Source) -> list[Row]:
    """The three targets of `dragoman bench --documents`."""
    n = len(nonempty(doc, "parallel", "rounds"))

    def rounds(key: str) -> list[float]:
        return [number(doc, "parallel", "rounds", i, key) for i in range(n)]

    ratio = statistics.median(
        d / x for d, x in zip(rounds("document_s"), rounds("longest_alone_s"), strict=True)
    )
    whole, longest = (
        statistics.median(rounds("document_s")),
        statistics.median(rounds("longest_alone_s")),
    )
    sentences = int(number(doc, "parallel", "sentences"))
    hit, html = number(doc, "cache", "p50_ms"), number(doc, "overhead", "html_10kb_ms")
    text = number(doc, "overhead", "text_10kb_ms")
    hits, requests = number(doc, "cache", "hits"), number(doc, "cache", "requests")
    return [
        Row(
            f"a {sentences}-sentence document against its longest sentence alone (median of "
            f"{n} rounds)",
            f"{whole:.2f} s",
            f"{ratio:.2f}x ({longest:.2f} s); target <= {DOCUMENT_RATIO:g}x: "
            f"{WORD[ratio <= DOCUMENT_RATIO]}",
        ),
        Row(
            f"a cache hit over HTTP, p50 (echo engine, {hits:g} hits of {requests:g} requests)",
            f"{hit:.2f} ms",
            f"{times(hit, CACHE_HIT_MS)} the {CACHE_HIT_MS:g} ms target: "
            f"{WORD[hit <= CACHE_HIT_MS and hits >= requests]}",
        ),
        Row(
            "segmentation and markup of a 10 KB HTML page, in process (a 10 KB text: "
            f"{text:.2f} ms)",
            f"{html:.2f} ms",
            f"{times(html, MARKUP_MS)} the {MARKUP_MS:g} ms target: "
            f"{WORD[max(html, text) <= MARKUP_MS]}",
        ),
    ]


EXTRACTORS: dict[str, Extractor] = {
    "architectures": architectures,
    "engines": engines,
    "guard": guard,
    "overload": overload,
    "hostile": hostile_texts,
    "hit_ab": hit_ab,
    "documents": documents,
}
