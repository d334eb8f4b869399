"""Output paths are checked before a command works: a clear error, nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.cli import main
from dragoman.errors import ConfigError
from dragoman.writable import check_dir, check_file


def test_a_folder_that_can_be_made_passes_and_is_not_made(tmp_path: Path) -> None:
    check_dir(tmp_path / "a" / "b", "--out")
    check_dir(tmp_path, "--out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["file", "file/sub", "/proc/nope"])
def test_a_folder_that_cannot_be_written_is_refused(tmp_path: Path, where: str) -> None:
    (tmp_path / "file").write_text("x")
    path = Path(where) if where.startswith("/") else tmp_path / where
    with pytest.raises(ConfigError, match=f"--out {path}: "):
        check_dir(path, "--out")


def test_a_file_must_not_be_a_folder(tmp_path: Path) -> None:
    check_file(tmp_path / "new.yaml", "--config-out")
    (tmp_path / "old.yaml").write_text("kept")
    check_file(tmp_path / "old.yaml", "--config-out")
    assert (tmp_path / "old.yaml").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.yaml"]
    with pytest.raises(ConfigError, match="is a folder, not a file"):
        check_file(tmp_path, "--config-out")
    with pytest.raises(ConfigError, match="is not a folder"):
        check_file(tmp_path / "old.yaml" / "serve.yaml", "--config-out")


@pytest.mark.parametrize("flag", ["--config-out", "--rayservice-out"])
def test_deploy_ray_checks_its_output_file_first(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before Ray is imported or the config built: no Ray is needed to see the mistake.
    assert main(["deploy", "ray", flag, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"dragoman: error: {flag} {tmp_path}: is a folder, not a file\n"
