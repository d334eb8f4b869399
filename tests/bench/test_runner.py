"""`dragoman bench` at its edge: settings it refuses before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.cli import main


@pytest.mark.parametrize("below", ["", "sub"])
def test_out_through_a_file_is_a_one_line_settings_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], below: str
) -> None:
    file = tmp_path / "results"
    file.write_text("not a folder")
    out = file / below if below else file
    assert main(["bench", "--out", str(out), "--no-offline"]) == 2
    err = capsys.readouterr().err
    assert err == f"dragoman: invalid settings: out: {file} is a file, not a folder\n"
    assert file.read_text() == "not a folder"
