from __future__ import annotations

import copy
from typing import Any

from dragoman.bench.candidates_eval import markdown, table, verdict

PAIRS = ("en-fr", "en-de", "en-es", "en-ko")


def _run(chrf: dict[str, float], wrong: int = 0, guard: int = 0) -> dict[str, Any]:
    rows = []
    for p in PAIRS:
        rows.append({"pair": p, "kind": "ui", "chrf": 0.0})  # not the pair's whole row
        rows.append(
            {
                "pair": p,
                "kind": "all",
                "chrf": chrf[p],
                "wrong_language": wrong if p == "en-de" else 0,
                "guard_stopped": guard if p == "en-ko" else 0,
                "length_stopped": 0,
                "over_3x": 0,
                "mean_seconds": 2.0,
            }
        )
    return {"summary": rows}


BASE = {"en-fr": 40.0, "en-de": 35.0, "en-es": 42.0, "en-ko": 10.0}
GOOD = {"en-fr": 42.5, "en-de": 37.0, "en-es": 44.0, "en-ko": 12.5}


def test_the_table_is_each_k_against_greedy() -> None:
    rows = table({4: _run(GOOD), 1: _run(BASE, wrong=2, guard=1)})
    assert [r["k"] for r in rows] == [1, 4]
    assert rows[0]["gain"] == 0 and rows[0]["wrong_language_checked"] == 2
    assert rows[0]["runaways"] == 1
    assert rows[1]["pair_gains"] == {"en-de": 2.0, "en-es": 2.0, "en-fr": 2.5, "en-ko": 2.5}
    assert rows[1]["gain"] == 2.25 and rows[1]["chrf"] == 34.0
    assert "| 4 | 34.00 | +2.25 |" in markdown(rows, "a host")


def test_the_verdict_is_met_only_when_every_part_is() -> None:
    assert verdict(table({1: _run(BASE), 4: _run(GOOD)})).startswith("MET")
    small = {p: c + 1.9 for p, c in BASE.items()}
    assert verdict(table({1: _run(BASE), 4: _run(small)})).startswith("MISSED (mean gain")
    one_worse = {**GOOD, "en-ko": 9.9, "en-fr": 45.0}
    assert "worse on en-ko" in verdict(table({1: _run(BASE), 4: _run(one_worse)}))
    assert "wrong-language" in verdict(table({1: _run(BASE), 4: _run(GOOD, wrong=1)}))
    assert "runaways" in verdict(table({1: _run(BASE), 4: _run(GOOD, guard=1)}))
    assert verdict(table({1: _run(BASE), 2: _run(GOOD)})) == "MISSED: no run of k = 4"


def test_runs_of_other_pairs_are_refused() -> None:
    other = copy.deepcopy(_run(GOOD))
    other["summary"] = other["summary"][:-2]
    try:
        table({1: _run(BASE), 4: other})
    except ValueError as exc:
        assert "pairs differ" in str(exc)
    else:
        raise AssertionError("a run of other pairs was compared")
