"""`dragoman model prepare` on a name the catalogue does not have: wrong input, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.cli import main


def test_prepare_of_a_model_outside_the_catalogue_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["model", "prepare", "--model", "no-such-model", "--data-dir", str(tmp_path)]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "dragoman: error: 'no-such-model' is not in the catalogue; a local model directory "
        "needs no preparation (see `dragoman model list`)\n"
    )
    assert list(tmp_path.iterdir()) == []
