"""The hostile-text bench's verdicts fail on the figures that miss each target."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dragoman.bench import hostile


def _health(**overrides: Any) -> dict[str, Any]:
    h = {
        "texts": 39,
        "body_bytes": 4_100_000,
        "clients": 1,
        "requests": 3,
        "statuses": [200],
        "request_p50_s": 10.0,
        "request_max_s": 11.0,
        "health_probes": 400,
        "health_p50_ms": 4.0,
        "health_p99_ms": 40.0,
        "health_max_ms": 60.0,
        "short_p50_ms": 10.0,
        "short_p99_ms": 60.0,
        "short_statuses": {"200": 400},
    }
    return {**h, **overrides}


def _out() -> dict[str, Any]:
    family = {"printf zeros": {"seconds": 0.1, "ratio": 0.5}}
    return {
        "size": 100_000,
        "meta": {"machine": "test host"},
        "patterns": [{"pattern": "m._P", "worst_s": 0.1, "text_head": "%000"}],
        "path": {
            "text": {"plain_seconds": 0.2, "families": family},
            "html": {"plain_seconds": 0.2, "families": copy.deepcopy(family)},
        },
        "health": {"largest request": _health(), "below the thread cut": _health(clients=4)},
    }


def test_figures_within_every_target_are_met() -> None:
    out = _out()
    assert hostile.verdicts(out) == {"patterns": True, "path": True, "health": True}
    assert "MISSED" not in hostile.markdown(out)


@pytest.mark.parametrize(
    ("target", "spoil"),
    [
        ("patterns", lambda o: o["patterns"][0].update(worst_s=1.2)),
        ("patterns", lambda o: o.update(patterns=[])),
        ("path", lambda o: o["path"]["html"]["families"]["printf zeros"].update(ratio=2.1)),
        ("health", lambda o: o["health"]["largest request"].update(health_p99_ms=100.0)),
        ("health", lambda o: o["health"]["below the thread cut"].update(health_p99_ms=250.0)),
        ("health", lambda o: o["health"]["largest request"].update(statuses=[200, 413])),
        ("health", lambda o: o["health"]["largest request"].update(health_probes=0)),
        ("health", lambda o: o.update(health={})),
    ],
)
def test_a_figure_past_its_target_is_missed(target: str, spoil: Any) -> None:
    out = _out()
    spoil(out)
    assert hostile.verdicts(out)[target] is False
    if out["patterns"] and out["health"]:
        assert "MISSED" in hostile.markdown(out)


def test_the_largest_request_fills_the_body_limit_without_passing_it() -> None:
    import json

    body = hostile.largest_request(2_000, 50_000)
    size = len(json.dumps(body).encode())
    assert 50_000 - 4096 - 2_100 * 6 < size <= 50_000 - 4096
    assert len(body["text"]) > 10


def test_families_are_of_the_asked_length() -> None:
    for name, text in hostile.families(5_000).items():
        assert 4_900 <= len(text) <= 5_010, name
