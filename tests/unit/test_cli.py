from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.cli import main
from dragoman.service.keys import hash_key


def test_keys_add_list_revoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "keys"
    assert main(["keys", "add", "alice", "--api-keys-file", str(path)]) == 0
    out = capsys.readouterr()
    key = out.out.strip()
    assert key.startswith("dm-")
    assert "shown this once" in out.err
    assert path.read_text() == f"{hash_key(key)} alice\n"
    assert main(["keys", "list", "--api-keys-file", str(path)]) == 0
    assert capsys.readouterr().out == f"alice\t{hash_key(key)[:12]}\n"
    assert main(["keys", "revoke", "alice", "--api-keys-file", str(path)]) == 0
    assert path.read_text() == ""
    assert main(["keys", "revoke", "alice", "--api-keys-file", str(path)]) == 2
    assert f"no key named 'alice' in {path}" in capsys.readouterr().err


def test_keys_need_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DRAGOMAN_API_KEYS_FILE", raising=False)
    assert main(["keys", "add", "alice"]) == 2
    assert "api_keys_file" in capsys.readouterr().err


def test_wrong_input_exits_2_as_a_bad_flag_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--pairs", ","]) == 2
    assert "pairs: empty" in capsys.readouterr().err
    assert main(["plan", "--words", ""]) == 2
    assert main(["plan", "--rps", "0"]) == 2


@pytest.mark.parametrize("args", [["--config", ""], ["--config="], ["--config"]])
def test_an_empty_config_name_is_refused(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_CONFIG", "x")  # restored after main() sets it
    assert main(["plan", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dragoman: error: --config") and err.count("\n") == 1


def test_an_empty_config_variable_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_CONFIG", "")
    assert main(["plan"]) == 2
    assert "DRAGOMAN_CONFIG) is empty" in capsys.readouterr().err
