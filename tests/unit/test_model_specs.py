from __future__ import annotations

import pytest
from pydantic import ValidationError

from dragoman.service.settings import ModelSpec, ServeSettings

QWEN = "qwen2.5-coder-0.5b-instruct"


def spec(name: str, model: str = QWEN, **kw: object) -> dict[str, object]:
    return {"name": name, "model": model, **kw}


def test_routes_map_each_pair_to_its_model() -> None:
    s = ServeSettings(
        models=[
            spec("qwen", languages=["en", "de", "zh"]),
            spec("gemma", "gemma-3-270m", pairs=["en-fr"]),
        ]
    )
    routes = s.model_routes()
    assert routes[("en", "fr")] == "gemma"
    assert routes[("zh", "de")] == "qwen"
    assert ("fr", "en") not in routes
    assert s.models[1].prompt_format() == "few-shot"
    assert s.models[0].prompt_format() == "chat"


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (
            [spec("a", pairs=["en-fr"]), spec("b", pairs=["en-fr"])],
            "en-fr is served by both 'a' and 'b'",
        ),
        ([spec("a", pairs=["en-fr"]), spec("a", pairs=["en-de"])], "names must be unique"),
        ([spec("a")], "give exactly one of languages or pairs"),
        ([spec("a", pairs=["enfr"])], "is not of the form 'en-fr'"),
        ([spec("a", pairs=["en-xx"])], "unknown language code 'xx'"),
        ([spec("g", "gemma-3-270m", pairs=["en-ko"])], "gemma-3-270m does not serve 'ko'"),
        (
            [spec("g", "/models/base", prompt="few-shot", pairs=["en-ja"])],
            "no few-shot examples for 'ja'",
        ),
        ([spec("", pairs=["en-it"])], "a model's name must not be empty"),
        ([spec("  ", pairs=["en-it"])], "a model's name must not be empty"),
        ([spec(" qwen", pairs=["en-it"])], "model name ' qwen' must not begin or end with"),
        ([spec("qwen\n", pairs=["en-it"])], "must not begin or end with whitespace"),
    ],
)
def test_bad_model_maps_fail_at_start_with_clear_errors(
    models: list[dict[str, object]], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        ServeSettings(models=models)  # type: ignore[arg-type]


def test_models_come_from_the_config_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "server.toml"
    config.write_text(
        '[[models]]\nname = "qwen"\nmodel = "qwen2.5-coder-0.5b-instruct"\n'
        'languages = ["en", "de"]\n'
        '[[models]]\nname = "gemma"\nmodel = "gemma-3-270m"\npairs = ["en-fr"]\n'
    )
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(config))
    s = ServeSettings()
    assert [m.name for m in s.models] == ["qwen", "gemma"]
    assert isinstance(s.models[0], ModelSpec)


def test_languages_with_models_is_refused_in_one_line_exit_2(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    """--languages limits the one --model: with [[models]] it was silently ignored."""
    import dragoman.api.serve
    from dragoman.cli import main

    with pytest.raises(ValidationError, match="limit each \\[\\[models\\]\\] entry's"):
        ServeSettings(models=[spec("qwen", languages=["en", "de"])], languages=["en"])  # type: ignore[list-item]
    config = tmp_path / "server.toml"
    config.write_text(f'[[models]]\nname = "qwen"\nmodel = "{QWEN}"\nlanguages = ["en", "de"]\n')
    monkeypatch.setenv("DRAGOMAN_CONFIG", "")  # main() sets it from --config: restored after
    served: list[ServeSettings] = []
    monkeypatch.setattr(dragoman.api.serve, "serve", served.append)
    assert main(["serve", "--config", str(config), "--languages", "en,de"]) == 2
    assert served == []
    assert capsys.readouterr().err == (
        "dragoman: invalid settings: --languages (DRAGOMAN_LANGUAGES) does not apply to a "
        "server with [[models]]: limit each [[models]] entry's languages or pairs instead\n"
    )
    assert main(["serve", "--config", str(config)]) == 0  # without it: served
    assert [m.name for m in served[0].models] == ["qwen"]
