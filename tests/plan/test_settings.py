"""`dragoman plan`'s option values: refused at parse time, exit 2, before any figures are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.cli import main


@pytest.mark.parametrize(
    "args",
    [
        ["--rps", "inf"],
        ["--rps", "nan"],
        ["--rps", "1e308"],
        ["--p99", "inf"],
        ["--words", "6:nan"],
        ["--words", "nan:1"],
        ["--words=-50:1"],
        ["--pairs", "en-fr:nan"],
        ["--pairs", "en-zz"],
        ["--pairs", "en-fr-zh"],
    ],
)
def test_bad_values_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *args]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_config_file_value_is_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "plan.toml"
    config.write_text('rps = "inf"\n')
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(config))
    assert main(["plan"]) == 2
    assert "finite" in capsys.readouterr().err


def test_pairs_are_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    from dragoman.argv import parse
    from dragoman.plan.settings import PlanSettings

    assert parse(PlanSettings, ["--pairs", "EN-FR:0.5,en-DE"], "p").pairs == "en-fr:0.5,en-de:1"
