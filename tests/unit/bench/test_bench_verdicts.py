"""The other benches' verdicts (checks cost, documents, compatible surfaces, overload) each made
to fail on the figures that miss their target, beside the figures that meet it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dragoman.bench import checkscost, documents, overload, surfaces

META = {"machine": "test host"}


def _rows(md: str) -> dict[str, str]:
    """A markdown table's verdict column by the start of its target cell."""
    return {
        cells[0]: cells[-1]
        for line in md.splitlines()
        if line.startswith("| ")
        and (cells := [c.strip() for c in line.strip("|").split("|")])
        and cells[-1] in ("MET", "MISSED")
    }


def _of(rows: dict[str, str], start: str) -> str:
    """The verdict of the one row whose target starts with `start`."""
    (word,) = [w for target, w in rows.items() if target.startswith(start)]
    return word


def _checks(added: float) -> dict[str, Any]:
    mode = {"requests": 60, "p50_ms": 1.0, "p99_ms": 2.0, "round_p50_ms": [1.0, 1.0]}
    return {
        "meta": META,
        "rounds": 2,
        "requests_per_round": 30,
        "modes": {"on": mode, "off": mode},
        "added_p50_ms": added,
        "added_p99_ms": added,
        "added_p50_ms_per_round": [added, added],
    }


@pytest.mark.parametrize(("added", "word"), [(0.3, "MET"), (1.0, "MET"), (1.2, "MISSED")])
def test_the_checks_cost_verdict_fails_past_1_ms(added: float, word: str) -> None:
    assert checkscost.markdown(_checks(added)).rstrip().endswith(f"Target <= 1 ms p50: {word}")


DOCUMENTS: dict[str, Any] = {
    "meta": META,
    "parallel": {
        "sentences": 20,
        "ratio_to_longest": 1.5,
        "rounds": [{"document_s": 1.5, "longest_alone_s": 1.0, "sum_alone_s": 9.0}],
    },
    "cache": {"p50_ms": 1.5, "p99_ms": 3.0, "requests": 200, "hits": 200},
    "overhead": {
        "html_10kb_ms": 4.0,
        "text_10kb_ms": 1.0,
        "html_10kb_min_ms": 3.5,
        "text_10kb_min_ms": 0.9,
    },
}


def test_the_documents_verdicts_are_met_on_figures_within_them() -> None:
    assert set(_rows(documents.markdown(DOCUMENTS)).values()) == {"MET"}


@pytest.mark.parametrize(
    ("key", "change", "row"),
    [
        ("parallel", {"ratio_to_longest": 2.1}, "a 20-sentence document <= 2x "),
        ("cache", {"p50_ms": 2.1}, "cache hit <= 2 ms p50"),
        ("cache", {"hits": 199}, "cache hit <= 2 ms p50"),
        ("overhead", {"html_10kb_ms": 5.1}, "segmentation + markup <= 5 ms "),
        ("overhead", {"text_10kb_ms": 5.1}, "segmentation + markup <= 5 ms "),
    ],
)
def test_each_documents_verdict_fails(key: str, change: dict[str, float], row: str) -> None:
    out = copy.deepcopy(DOCUMENTS)
    out[key].update(change)
    rows = _rows(documents.markdown(out))
    assert _of(rows, row) == "MISSED"
    assert list(rows.values()).count("MISSED") == 1


SURFACES: dict[str, Any] = {
    "meta": META,
    "batching": [
        {
            "texts": 20,
            "pair": "en-fr",
            "median_seconds": {"list": 1.0, "sequential": 5.0},
            "speedup": 5.0,
        },
    ],
    "coalescing": {"requests": 8, "coalesced": 7, "engine_requests": 1, "distinct_answers": 1},
    "overhead": {
        "added_p50_ms": {"deepl": 0.5, "libretranslate": 1.0},
        "p50_ms": {"native": 2.0},
        "requests_per_surface": 100,
    },
}


def test_the_surfaces_verdicts_are_met_on_figures_within_them() -> None:
    assert set(_rows(surfaces.markdown(SURFACES)).values()) == {"MET"}


@pytest.mark.parametrize(
    ("spoil", "row"),
    [
        (lambda o: o["batching"][0].update(speedup=3.9), "list `q` of 20 (en-fr) on /tran"),
        (lambda o: o["coalescing"].update(coalesced=6), "8 identical concurrent requests"),
        (lambda o: o["coalescing"].update(engine_requests=2), "8 identical concurrent requests"),
        (
            lambda o: o["overhead"]["added_p50_ms"].update(deepl=2.1),
            "adapter overhead vs /v1/transla",
        ),
    ],
)
def test_each_surfaces_verdict_fails(spoil: Any, row: str) -> None:
    out = copy.deepcopy(SURFACES)
    spoil(out)
    rows = _rows(surfaces.markdown(out))
    assert _of(rows, row) == "MISSED"
    assert list(rows.values()).count("MISSED") == 1


BOUND = {"goodput_rps": 5.0, "admitted_p99_s": 10.0}
OVER = {
    "goodput_rps": 4.9,
    "admitted_p99_s": 15.0,
    "status_5xx": 0,
    "connection_errors": 0,
    "refused_without_retry_after": 0,
    "refusal_p50_ms": 20.0,
}


def test_the_overload_verdicts_are_met_on_figures_within_them() -> None:
    met = overload._verdicts(BOUND, BOUND, OVER, BOUND)["met"]
    assert met == dict.fromkeys(met, True)
    assert len(met) == 6


@pytest.mark.parametrize(
    ("change", "target"),
    [
        ({"goodput_rps": 4.7}, "goodput"),  # 94% of the bound's
        ({"admitted_p99_s": 20.5}, "p99"),
        ({"status_5xx": 1}, "no_5xx"),
        ({"connection_errors": 1}, "no_connection_errors"),
        ({"refused_without_retry_after": 1}, "every_429_has_retry_after"),
        ({"refusal_p50_ms": 101.0}, "refusal_p50_within_100ms"),
    ],
)
def test_each_overload_verdict_fails(change: dict[str, float], target: str) -> None:
    met = overload._verdicts(BOUND, BOUND, {**OVER, **change}, BOUND)["met"]
    assert [k for k, ok in met.items() if not ok] == [target]


def test_rows_helper_reads_the_verdict_column() -> None:
    assert _rows("| a target | figures | MET |\n| b | c | MISSED |\n| x | y | z |") == {
        "a target": "MET",
        "b": "MISSED",
    }
    assert "MISSED" not in checkscost.markdown(_checks(0.0))
