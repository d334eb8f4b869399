from __future__ import annotations

import pytest

from dragoman.errors import UnsupportedLanguage
from dragoman.languages import pairs_from_languages, parse_pair
from dragoman.router.backends import (
    Backend,
    BackendsBusy,
    NoHealthyBackend,
    Pool,
)


def pool(*backends: Backend) -> Pool:
    return Pool(list(backends), fail_threshold=2, recover_threshold=2)


def be(name: str, *pairs: str, healthy: bool = True, outstanding: int = 0) -> Backend:
    return Backend(
        name,
        f"http://{name}",
        {parse_pair(p) for p in pairs},
        healthy=healthy,
        outstanding=outstanding,
        max_in_flight=4,
    )


def test_pick_routes_by_pair() -> None:
    p = pool(be("a", "en-fr"), be("b", "en-de"))
    assert p.pick(("en", "de")).name == "b"
    assert p.pick(("en", "fr")).name == "a"


def test_pick_prefers_fewest_outstanding() -> None:
    p = pool(
        be("a", "en-fr", outstanding=3),
        be("b", "en-fr", outstanding=1),
        be("c", "en-fr", outstanding=2),
    )
    assert p.pick(("en", "fr")).name == "b"


def test_pick_skips_unhealthy_excluded_and_full() -> None:
    p = pool(be("a", "en-fr", healthy=False), be("b", "en-fr", outstanding=4), be("c", "en-fr"))
    assert p.pick(("en", "fr")).name == "c"
    with pytest.raises(BackendsBusy):
        p.pick(("en", "fr"), exclude={"c"})


def test_unknown_pair_is_400_and_unhealthy_pair_is_503() -> None:
    p = pool(be("a", "en-fr", healthy=False))
    with pytest.raises(UnsupportedLanguage, match="no backend serves en->ko"):
        p.pick(("en", "ko"))
    with pytest.raises(NoHealthyBackend, match="no healthy backend serves en->fr"):
        p.pick(("en", "fr"))


def test_thresholds_eject_and_readmit() -> None:
    b = be("a", "en-fr")
    p = pool(b)
    assert not p.record_failure(b)
    assert p.record_failure(b)  # second consecutive failure ejects
    assert not b.healthy
    assert not p.record_success(b, from_check=False)  # only checks readmit
    assert not p.record_success(b, from_check=True)
    assert p.record_success(b, from_check=True)
    assert b.healthy


def test_a_success_resets_the_failure_count() -> None:
    b = be("a", "en-fr")
    p = pool(b)
    p.record_failure(b)
    p.record_success(b, from_check=False)
    assert not p.record_failure(b)
    assert b.healthy


def test_pairs_from_languages_is_every_ordered_pair() -> None:
    assert pairs_from_languages(["en", "fr", "de"]) == {
        ("en", "fr"),
        ("fr", "en"),
        ("en", "de"),
        ("de", "en"),
        ("fr", "de"),
        ("de", "fr"),
    }


@pytest.mark.parametrize("bad", ["en", "en-", "-fr", "enfr"])
def test_parse_pair_refuses_malformed(bad: str) -> None:
    with pytest.raises(ValueError, match="not of the form"):
        parse_pair(bad)


def test_duplicate_backend_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        pool(be("a"), be("a"))


def test_a_detected_source_waits_for_the_widest_backends_rather_than_misdetect() -> None:
    narrow = be("narrow", "en-fr", "fr-en")
    wide = be("wide", "en-fr", "fr-en", "de-fr", "fr-de", outstanding=4)  # at its limit
    p = pool(narrow, wide)
    with pytest.raises(BackendsBusy):
        p.pick((None, "fr"), widest=True)
    assert p.pick(("en", "fr")).name == "narrow"  # a given source: any backend serving it
    wide.outstanding = 0
    narrow.outstanding = 3
    assert p.pick((None, "fr"), widest=True).name == "wide"
