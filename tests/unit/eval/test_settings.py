from __future__ import annotations

import pytest
from pydantic import ValidationError

from dragoman.argv import parse
from dragoman.cli import main
from dragoman.eval.settings import EvalSettings


def test_lists_from_one_flag_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    s = parse(EvalSettings, ["--url", "http://h:1", "--pairs", "EN-fr, en-ko"], "dragoman eval")
    assert s.pairs == ["en-fr", "en-ko"]
    assert s.kinds == ["ui", "sentence", "paragraph"]
    monkeypatch.setenv("DRAGOMAN_KINDS", '["ui", "paragraph"]')
    monkeypatch.setenv("DRAGOMAN_API", "openai")
    s = parse(EvalSettings, ["--url", "http://h:1"], "dragoman eval")
    assert (s.kinds, s.api) == (["ui", "paragraph"], "openai")


@pytest.mark.parametrize("pairs", ["en-en", "en-xx", "enfr"])
def test_bad_pairs_are_refused(pairs: str) -> None:
    with pytest.raises(ValidationError):
        parse(EvalSettings, ["--url", "http://h:1", "--pairs", pairs], "dragoman eval")


def test_eval_without_a_server_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--url", "http://127.0.0.1:9", "--per-pair", "1", "--kinds", "ui"]) == 1
    assert "dragoman: error: cannot reach http://127.0.0.1:9" in capsys.readouterr().err


def test_eval_of_missing_data_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--url", "http://127.0.0.1:9", "--pairs", "en-th", "--kinds", "paragraph"]
    assert main(args) == 2  # wrong input, not a failed run
    assert "dragoman: error: no paragraph data for th" in capsys.readouterr().err


def test_pairs_and_kinds_are_taken_once() -> None:
    s = parse(
        EvalSettings, ["--url", "http://h:1", "--pairs", "en-fr,EN-FR", "--kinds", "ui,ui"], "e"
    )
    assert (s.pairs, s.kinds) == (["en-fr"], ["ui"])


@pytest.mark.parametrize("url", ["http://[::1", "127.0.0.1:8000", "ftp://h"])
def test_a_bad_url_is_a_one_line_error(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--url", url, "--per-pair", "1", "--kinds", "ui"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dragoman: invalid settings: url: ") and err.count("\n") == 1, err
