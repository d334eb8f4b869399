"""Quality tiers in `[[models]]`: two entries may serve a pair in different tiers; each pair's
default is the entry marked for it, else the catalogue's measured choice."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dragoman.models.catalogue import CATALOGUE
from dragoman.service.settings import ServeSettings

SMALL = "qwen2.5-coder-0.5b-instruct"
LARGE = "qwen2.5-coder-1.5b-instruct"


def spec(name: str, model: str = SMALL, **kw: object) -> dict[str, object]:
    return {"name": name, "model": model, **kw}


def tiered(*extra: dict[str, object], **large: object) -> ServeSettings:
    return ServeSettings(
        models=[
            spec("small", languages=["en", "fr", "ko", "ja"]),
            spec("large", LARGE, **({"languages": ["en", "fr", "ko", "ja"]} | large)),
            *extra,
        ]  # type: ignore[arg-type]
    )


def test_tier_comes_from_the_catalogue_unless_given() -> None:
    s = tiered()
    assert [m.quality_tier() for m in s.models] == ["fast", "best"]
    assert s.model_tiers()[("en", "ko")] == {"fast": "small", "best": "large"}
    forced = ServeSettings(models=[spec("a", LARGE, tier="fast", pairs=["en-fr"])])  # type: ignore[list-item]
    assert forced.models[0].quality_tier() == "fast"
    local = ServeSettings(models=[spec("a", "/models/mine", pairs=["en-fr"])])  # type: ignore[list-item]
    assert local.models[0].quality_tier() == "fast"


def test_without_a_mark_the_catalogue_measurements_pick_each_pair_default() -> None:
    best_for = CATALOGUE[LARGE].best_for
    routes = tiered().model_routes()
    for pair in [("en", "fr"), ("en", "ko"), ("en", "ja"), ("fr", "en"), ("ko", "en")]:
        assert routes[pair] == ("large" if pair[1] in best_for else "small"), pair


def test_a_pair_one_tier_serves_goes_to_it() -> None:
    s = ServeSettings(
        models=[
            spec("small", languages=["en", "fr"]),
            spec("large", LARGE, pairs=["en-ko", "en-fr"]),
        ]  # type: ignore[list-item]
    )
    routes = s.model_routes()
    assert routes[("en", "ko")] == "large"
    assert routes[("fr", "en")] == "small"
    assert s.model_tiers()[("en", "ko")] == {"best": "large"}


def test_default_for_overrides_the_measured_choice() -> None:
    routes = tiered(default_for=["en-fr"]).model_routes()
    assert routes[("en", "fr")] == "large"
    everything = tiered(default_for=["*"]).model_routes()
    assert set(everything.values()) == {"large"}


def test_an_unknown_model_as_best_tier_leaves_defaults_to_the_fast_one() -> None:
    s = ServeSettings(
        models=[
            spec("small", languages=["en", "ko"]),
            spec("mine", "/models/mine", tier="best", languages=["en", "ko"]),
        ]  # type: ignore[list-item]
    )
    assert set(s.model_routes().values()) == {"small"}


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (
            [spec("a", pairs=["en-fr"]), spec("b", pairs=["en-fr"])],
            "en-fr is served by both 'a' and 'b' in the fast tier",
        ),
        (
            [spec("a", LARGE, pairs=["en-fr"]), spec("b", tier="best", pairs=["en-fr"])],
            "en-fr is served by both 'a' and 'b' in the best tier",
        ),
        ([spec("a", tier="medium", pairs=["en-fr"])], "Input should be 'fast' or 'best'"),
        (
            [spec("a", pairs=["en-fr"], default_for=["en-de"])],
            "model 'a': default_for names en-de, a pair it does not serve",
        ),
        (
            [spec("a", pairs=["en-fr"], default_for=["enfr"])],
            "model 'a': default_for: language pair 'enfr' is not of the form 'en-fr'",
        ),
        (
            [
                spec("a", pairs=["en-fr"], default_for=["en-fr"]),
                spec("b", LARGE, pairs=["en-fr"], default_for=["*"]),
            ],
            "en-fr is marked default_for by both 'a' and 'b'",
        ),
    ],
)
def test_bad_tiers_fail_at_start_with_clear_errors(
    models: list[dict[str, object]], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        ServeSettings(models=models)  # type: ignore[arg-type]


def test_tiers_come_from_the_config_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "server.toml"
    config.write_text(
        f'[[models]]\nname = "fast"\nmodel = "{SMALL}"\nlanguages = ["en", "ko"]\n'
        f'[[models]]\nname = "best"\nmodel = "{LARGE}"\nlanguages = ["en", "ko"]\n'
        'tier = "best"\ndefault_for = ["ko-en"]\n'
    )
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(config))
    s = ServeSettings()
    assert s.model_routes()[("ko", "en")] == "best"
    assert s.model_tiers()[("en", "ko")] == {"fast": "fast", "best": "best"}
