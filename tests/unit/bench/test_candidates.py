"""The candidates-cost bench: its verdicts fail on figures that miss and pass on figures that
meet, its summary's and per-k table's arithmetic, its modes and their turns, and the whole
study against an echo server (no candidates there: every mode is greedy, which is enough to
prove the plumbing)."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from dragoman.bench import _candidates_figures as figures
from dragoman.bench import candidates
from dragoman.bench.command import run_bench
from dragoman.bench.loadgen import Record
from dragoman.bench.servers import launch_echo
from dragoman.bench.settings import BenchSettings
from dragoman.bench.targets import DragomanTarget


def rec(latency: float, tokens: int = 10, start: float = 0.0, success: bool = True) -> Record:
    return Record(
        index=0,
        success=success,
        status=200 if success else 503,
        error=None if success else "busy",
        start=start,
        latency=latency,
        input_tokens=5,
        output_tokens=tokens,
        queue_seconds=None,
        inference_seconds=None,
        target_lang="fr",
        approx_tokens=5,
    )


@pytest.mark.parametrize(
    ("verdict", "meets", "misses"),
    [
        (figures.one_client_auto, (1.1, 1.0), (1.2, 1.0)),
        (figures.one_client_best, (2.0, 1.0), (2.1, 1.0)),
        (figures.sixteen_auto_rate, (0.95, 1.0), (0.9, 1.0)),
        (figures.sixteen_auto_p99, (10.9, 10.0), (11.5, 10.0)),
    ],
)
def test_each_verdict_is_met_within_its_target_and_missed_past_it(
    verdict: Callable[[float, float], figures.Verdict],
    meets: tuple[float, float],
    misses: tuple[float, float],
) -> None:
    met, missed = verdict(*meets), verdict(*misses)
    assert met.met and met.text.endswith(": MET")
    assert not missed.met and missed.text.endswith(": MISSED")
    assert f"{misses[0]:.2f} vs greedy {misses[1]:.2f}" in missed.text


@pytest.mark.parametrize("verdict", [figures.one_client_auto, figures.sixteen_auto_rate])
def test_a_verdict_on_a_mode_without_figures_is_missed(
    verdict: Callable[[float, float], figures.Verdict],
) -> None:
    assert not verdict(math.nan, 1.0).met
    assert not verdict(1.0, math.nan).met
    assert not verdict(1.0, 0.0).met


def test_one_client_summary_pairs_each_text_with_its_greedy_reply() -> None:
    sent = [
        ("greedy", 0, rec(1.0, 10)),
        ("auto", 0, rec(1.0, 10)),
        ("best", 0, rec(2.0, 40)),
        ("greedy", 1, rec(3.0, 30)),
        ("auto", 1, rec(3.6, 30)),
        ("best", 1, rec(4.5, 120)),
        ("greedy", 2, rec(2.0, 20)),
        ("auto", 2, rec(9.0, 0, success=False)),  # left out of every figure but errors
        ("best", 2, rec(5.0, 80)),
    ]
    out = figures.one_client(sent)
    greedy, auto, best = out["greedy"], out["auto"], out["best"]
    assert greedy["p50_s"] == 2.0 and greedy["mean_s"] == 2.0
    assert greedy["output_tokens_mean"] == 20.0
    assert auto["requests"] == 3 and auto["errors"] == 1
    assert auto["p50_s"] == pytest.approx(2.3) and auto["p50_over_greedy"] == pytest.approx(1.15)
    assert auto["per_text_median_over_greedy"] == pytest.approx(1.1)  # of 1.0 and 1.2
    assert best["p50_s"] == 4.5 and best["p50_over_greedy"] == 2.25
    assert best["per_text_median_over_greedy"] == 2.0  # of 2.0, 1.5 and 2.5


def test_sixteen_clients_pool_a_modes_blocks_over_their_wall_time() -> None:
    blocks = [  # each block's wall time: first sent to last answered
        ("greedy", [rec(2.0, 10, 0.0), rec(2.0, 10, 0.0), rec(4.0, 20, 2.0)]),  # 6 s
        ("auto", [rec(2.0, 30, 0.0), rec(5.0, 30, 1.0)]),  # 6 s
        ("greedy", [rec(1.0, 10, 0.0), rec(1.0, 10, 1.0)]),  # 2 s
        ("auto", [rec(2.0, 10, 0.0), rec(1.0, 10, 0.0, success=False)]),  # 2 s
    ]
    out = figures.sixteen_clients(blocks)
    greedy, auto = out["greedy"], out["auto"]
    assert greedy["blocks"] == 2 and greedy["requests"] == 5 and greedy["seconds"] == 8.0
    assert greedy["translations_per_s"] == 5 / 8
    assert greedy["output_tokens_per_s"] == 60 / 8
    assert greedy["block_translations_per_s"] == [0.5, 1.0]
    assert auto["errors"] == 1 and auto["translations_per_s"] == 3 / 8
    assert auto["rate_over_greedy"] == pytest.approx(0.6)
    assert greedy["p50_s"] == 2.0 and auto["p50_s"] == 2.0
    assert auto["p99_s"] == pytest.approx(4.94)
    assert greedy["p99_s"] == pytest.approx(3.92)
    assert auto["p99_over_greedy"] == pytest.approx(4.94 / 3.92)


def _summary(one_auto: float, best: float, rate: float, p99: float) -> dict[str, object]:
    return {
        "one_client": {
            "greedy": {"p50_s": 2.0},
            "auto": {"p50_s": one_auto},
            "best": {"p50_s": best},
        },
        "sixteen_clients": {
            "greedy": {"translations_per_s": 1.0, "p99_s": 10.0},
            "auto": {"translations_per_s": rate, "p99_s": p99},
        },
    }


def test_the_verdicts_read_the_summary_figures_each_against_greedy() -> None:
    met = figures.verdicts(_summary(2.1, 3.9, 0.97, 10.5))
    assert [v.met for v in met] == [True, True, True, True]
    missed = figures.verdicts(_summary(2.3, 4.1, 0.9, 11.5))
    assert [v.met for v in missed] == [False, False, False, False]
    assert [v.name for v in missed] == [
        "one_client_auto_p50",
        "one_client_best_p50",
        "sixteen_auto_rate",
        "sixteen_auto_p99",
    ]


def test_texts_are_distinct_and_each_target_meets_each_order() -> None:
    items = candidates.texts("variable", 30, 0)
    assert len({i.text for i in items}) == 30
    seen = {(item.target, candidates.order(i)[0]) for i, item in enumerate(items[:9])}
    assert len(seen) == 9
    assert all(sorted(candidates.order(i)) == sorted(candidates.MODES) for i in range(3))


def test_each_k_mode_forces_its_count_after_the_verdicts_three_modes() -> None:
    modes = candidates.modes([2, 4, 8])
    assert modes == {
        "greedy": {"candidates": 1},
        "auto": {},
        "best": {"quality": "best"},
        "k2": {"candidates": 2},
        "k4": {"candidates": 4},
        "k8": {"candidates": 8},
    }
    assert candidates.modes([]) == candidates.MODES
    assert [figures.asked(body) for body in modes.values()] == [1, "auto", "best", 2, 4, 8]


async def test_a_k_modes_request_carries_its_count_beside_the_text() -> None:
    bodies: list[dict[str, object]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        reply = {"text": "t", "input_tokens": 1, "output_tokens": 2}
        return httpx.Response(
            200, json={"translations": [{**reply, "queue_seconds": 0, "inference_seconds": 0}]}
        )

    (item,) = candidates.texts("variable", 1, 0)
    target = DragomanTarget("http://bench", extra=candidates.modes([4])["k4"])
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        assert (await target.send(client, item)).output_tokens == 2
    assert bodies == [
        {"text": item.text, "source_lang": "en", "target_lang": "fr", "candidates": 4}
    ]


def test_six_modes_take_each_place_in_the_turns_equally_often() -> None:
    names = list(candidates.modes([2, 4, 8]))
    turns = [candidates.order(i, names) for i in range(12)]
    assert turns[0] == names and turns[1] == [*names[1:], names[0]]
    for place in range(6):
        assert Counter(t[place] for t in turns) == dict.fromkeys(names, 2)
    items = candidates.texts("variable", 18, 0)
    assert len({(item.target, turns[i % 12][0]) for i, item in enumerate(items)}) == 18


def test_sixteen_clients_run_greedy_auto_on_a_b_b_a_then_each_k_once_on_a() -> None:
    items = candidates.texts("variable", 4, 0)
    a, b = items[:2], items[2:]
    assert candidates.plan([2, 8], a, b) == [
        ("greedy", a),
        ("auto", b),
        ("greedy", b),
        ("auto", a),
        ("k2", a),
        ("k8", a),
    ]
    assert [m for m, _ in candidates.plan([], a, b)] == list(candidates.BLOCKS)


def test_the_table_puts_each_mode_against_greedy_and_leaves_what_did_not_run_blank() -> None:
    sent = [
        *(("greedy", i, rec(lat)) for i, lat in enumerate([1.0, 3.0])),
        *(("auto", i, rec(2.0)) for i in range(2)),
        *(("best", i, rec(4.0)) for i in range(2)),
        *(("k2", i, rec(lat)) for i, lat in enumerate([2.0, 4.0])),
    ]
    pair = [rec(2.0, 10), rec(2.0, 10)]  # 2 s of wall time
    blocks = [("greedy", pair), ("auto", pair), ("greedy", pair), ("auto", pair)]
    blocks.append(("k2", [rec(4.0, 40), rec(4.0, 40)]))  # 4 s
    one, many = figures.one_client(sent), figures.sixteen_clients(blocks)
    rows = {r["mode"]: r for r in figures.table(candidates.modes([2, 4]), one, many)}
    assert list(rows) == ["greedy", "auto", "best", "k2", "k4"]
    assert [r["k"] for r in rows.values()] == [1, "auto", "best", 2, 4]
    greedy, best, k2, k4 = rows["greedy"], rows["best"], rows["k2"], rows["k4"]
    assert greedy["one_client_p50_over_greedy"] == 1.0
    assert greedy["sixteen_translations_per_s"] == 1.0 and greedy["sixteen_p99_s"] == 2.0
    assert greedy["sixteen_output_tokens_per_s_over_greedy"] == 1.0
    assert k2["one_client_p50_s"] == 3.0 and k2["one_client_mean_s"] == 3.0
    assert k2["one_client_p50_over_greedy"] == 1.5
    assert k2["sixteen_translations_per_s"] == 0.5
    assert k2["sixteen_translations_per_s_over_greedy"] == 0.5
    assert k2["sixteen_output_tokens_per_s"] == 20.0
    assert k2["sixteen_output_tokens_per_s_over_greedy"] == 2.0
    assert k2["sixteen_p50_s_over_greedy"] == k2["sixteen_p99_s_over_greedy"] == 2.0
    assert best["one_client_p50_over_greedy"] == 2.0
    assert best["sixteen_translations_per_s"] is None and best["sixteen_p99_s_over_greedy"] is None
    assert all(v is None for key, v in k4.items() if key not in ("mode", "k"))
    # The verdicts' figures are the summaries', unchanged by the k modes beside them.
    assert many["auto"]["rate_over_greedy"] == 1.0 and many["k2"]["p99_over_greedy"] == 2.0
    assert [v.met for v in figures.verdicts({"one_client": one, "sixteen_clients": many})] == [
        True,
        True,
        True,
        True,
    ]


def test_the_study_runs_end_to_end_against_an_echo_server(tmp_path: Path) -> None:
    # The cache off: every request reaches the engine, as on the server the study starts.
    server = launch_echo(tmp_path, "en,fr,de,es", "--echo-delay", "0.01", "--cache-mib", "0")
    out = tmp_path / "out"
    try:
        settings = {"candidates_texts": 3, "candidates_block": 4, "candidates_ks": [2]}
        run_bench(BenchSettings(url=server.url, out=out, candidates_cost=True, **settings))
    finally:
        server.stop()
    results = json.loads((out / "candidates-cost.json").read_text())
    records = results["records"]
    modes = ["greedy", "auto", "best", "k2"]
    rotated = [*modes, *modes[1:], *modes[:1], *modes[2:], *modes[:2]]
    assert [r["mode"] for r in records["one_client"]] == rotated
    assert all(r["success"] for r in records["one_client"] + records["sixteen_clients"])
    assert [r["block"] for r in records["sixteen_clients"]] == [
        b for b in range(5) for _ in range(4)
    ]
    one, many = results["summary"]["one_client"], results["summary"]["sixteen_clients"]
    assert {m: one[m]["requests"] for m in one} == dict.fromkeys(modes, 3)
    assert many["greedy"]["requests"] == many["auto"]["requests"] == 8
    assert many["k2"]["requests"] == 4 and "best" not in many
    assert [r["mode"] for r in results["summary"]["table"]] == modes
    assert results["settings"]["blocks"] == ["greedy", "auto", "greedy", "auto", "k2"]
    # The echo engine makes no candidates: the probe finds no step to time, every k is 1.
    assert results["candidates_before"]["cheap_batch"] == 1
    assert set(results["candidates_used"]) <= {"1/setting"}
    assert len(results["verdicts"]) == 4
    assert results["server"] == {"url": server.url, "flags": None}
    assert results["meta"]["machine"] and results["settings"]["texts"] == 3
    md = (out / "candidates-cost.md").read_text()
    assert md.startswith(f"# What candidates cost: {results['meta']['machine']}")
    assert sum(line.endswith((": MET", ": MISSED")) for line in md.splitlines()) == 4
    (best,) = [line for line in md.splitlines() if line.startswith("| best | best |")]
    assert best.endswith("|" + "  |" * 8)  # not run at 16 clients: blank, not a figure
