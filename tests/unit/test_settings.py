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


def test_admission_bound_defaults_to_four_batches_and_fits_a_full_list() -> None:
    assert ServeSettings().admission_limit() == 64  # 4 x 16
    assert ServeSettings(max_num_seqs=32).admission_limit() == 128
    assert ServeSettings(max_num_seqs=4).admission_limit() == 64  # max_items
    assert ServeSettings(max_admitted=0).admission_limit() == 0
    assert ServeSettings(max_admitted=100).admission_limit() == 100


def test_admission_bound_below_a_full_list_fails_loudly() -> None:
    with pytest.raises(
        ValidationError, match=r"max_admitted \(8\) must be at least max_items \(64\)"
    ):
        ServeSettings(max_admitted=8)
    assert ServeSettings(max_admitted=8, max_items=8).admission_limit() == 8


def test_raw_api_keys_come_from_the_environment_and_stay_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DRAGOMAN_API_KEYS", "k1,k2")
    s = ServeSettings()
    assert s.api_keys is not None and s.api_keys.get_secret_value() == "k1,k2"
    assert "k1" not in repr(s)
