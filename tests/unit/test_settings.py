from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from dragoman.settings import ServeSettings


def test_defaults_follow_the_seed() -> None:
    s = ServeSettings()
    assert (s.max_num_seqs, s.max_num_batched_tokens, s.gpu_memory_utilization) == (16, 8192, 0.3)
    assert s.host == "127.0.0.1"


def test_env_var_twin_sets_a_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAGOMAN_MAX_NUM_SEQS", "4")
    monkeypatch.setenv("DRAGOMAN_ENFORCE_EAGER", "false")
    s = ServeSettings()
    assert s.max_num_seqs == 4
    assert s.enforce_eager is False


def test_cli_flag_beats_env_beats_config_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "dragoman.toml"
    config.write_text('max_num_seqs = 8\nport = 9000\nmodel = "/models/x"\n')
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(config))
    monkeypatch.setenv("DRAGOMAN_PORT", "9100")
    s = ServeSettings(_cli_parse_args=["--max-num-seqs", "2"])  # type: ignore[call-arg]
    assert (s.max_num_seqs, s.port, s.model) == (2, 9100, "/models/x")


def test_missing_config_file_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAGOMAN_CONFIG", "/no/such/dragoman.toml")
    with pytest.raises(ValueError, match="no such file"):
        ServeSettings()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_num_seqs": 0},
        {"gpu_memory_utilization": 1.5},
        {"port": 70000},
        {"dtype": "int3"},
        {"max_num_seqs": 512, "max_num_batched_tokens": 300},
    ],
)
def test_bad_values_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ServeSettings(**kwargs)  # type: ignore[arg-type]
