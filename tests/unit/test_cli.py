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


def test_serve_hands_the_baselines_to_the_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    # The old architectures live in the bench; `dragoman serve` is the one door to them, and
    # the product's own engine choice refuses them.
    from typing import Any

    from dragoman.api import serve as api_serve
    from dragoman.bench.baselines import open_for_serve
    from dragoman.errors import ConfigError
    from dragoman.service.settings import ServeSettings

    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        api_serve, "serve", lambda s, opener=None: calls.append((s.architecture, opener))
    )
    for arch in ("multiprocess", "static-batch", "echo"):
        assert main(["serve", "--architecture", arch]) == 0
    assert calls == [
        ("multiprocess", open_for_serve),
        ("static-batch", open_for_serve),
        ("echo", None),
    ]
    with pytest.raises(ConfigError, match="benchmark baseline"):
        api_serve.open_translator(ServeSettings(architecture="multiprocess"), ("en", "fr"))
