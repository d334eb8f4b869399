from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from dragoman.service.settings import ServeSettings


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


def test_list_settings_from_the_environment_as_json_or_comma_separated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only JSON was read: DRAGOMAN_LANGUAGES=en,fr ended in a traceback."""
    from dragoman.bench.settings import BenchSettings
    from dragoman.router.settings import RouteSettings

    monkeypatch.setenv("DRAGOMAN_LANGUAGES", "en, fr")
    monkeypatch.setenv("DRAGOMAN_CONCURRENCY", "1,4")
    monkeypatch.setenv("DRAGOMAN_BACKEND_URLS", "http://a:1,http://b:2")
    assert ServeSettings().languages == ["en", "fr"]
    assert BenchSettings().concurrency == [1, 4]
    assert [b.url for b in RouteSettings().backends] == ["http://a:1", "http://b:2"]
    monkeypatch.setenv("DRAGOMAN_CONCURRENCY", "[2, 8]")
    assert BenchSettings().concurrency == [2, 8]
    monkeypatch.setenv("DRAGOMAN_CONCURRENCY", "5")  # one item alone
    monkeypatch.setenv("DRAGOMAN_RATES", "0.5")
    assert (BenchSettings().concurrency, BenchSettings().rates) == ([5], [0.5])


def test_a_config_file_key_no_command_has_is_refused_naming_the_likely_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pydantic_settings import SettingsError

    from dragoman.router.settings import RouteSettings

    config = tmp_path / "dragoman.toml"
    monkeypatch.setenv("DRAGOMAN_CONFIG", str(config))
    config.write_text("max_num_seq = 8\n")
    with pytest.raises(SettingsError, match=r"unknown settings: 'max_num_seq' .*'max_num_seqs'"):
        ServeSettings()
    # one file for several commands: a key of another command is fine, once every command's
    # settings are loaded (as the CLI does before reading a config file)
    import dragoman.bench.settings  # noqa: F401 (as the CLI's dispatch registers the lab's)
    from dragoman.all_settings import load_all

    load_all()
    config.write_text('max_num_seqs = 8\nrps = 10\njson = true\nbackend_urls = ["http://a:1"]\n')
    assert ServeSettings().max_num_seqs == 8
    assert RouteSettings().backends[0].url == "http://a:1"
    config.write_text('[[models]]\nname = "m"\nmodle = "x"\n')
    with pytest.raises(ValidationError, match="modle"):
        ServeSettings()
    config.write_text("max_num_seqs = \n")
    with pytest.raises(SettingsError, match=f"config file {config}"):
        ServeSettings()


def test_config_file_errors_are_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from dragoman.cli import main

    # main() sets DRAGOMAN_CONFIG from --config: restored after the test
    monkeypatch.setenv("DRAGOMAN_CONFIG", "")
    assert main(["info", "--config", str(tmp_path / "none.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dragoman: invalid settings: config file") and "Traceback" not in err
    bad = tmp_path / "bad.toml"
    bad.write_text("port = [\n")
    assert main(["info", "--config", str(bad)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_command_line_mistakes_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each was a traceback, a nonsense run or a model load before the mistake was noticed."""
    from dragoman.bench.settings import BenchSettings
    from dragoman.cli import main
    from dragoman.router.settings import RouteSettings

    for bad in ({"concurrency": [0]}, {"rates": [0]}, {"rates": [-1.0]}):
        with pytest.raises(ValidationError):
            BenchSettings(**bad)
    with pytest.raises(ValidationError, match="not of the form 'en-fr'"):
        RouteSettings(backends=[{"url": "http://a:1", "pairs": ["english"]}])
    assert ServeSettings(metrics_key="").metrics_key is None  # empty: none, as DRAGOMAN_API_KEYS
    for argv in (
        ["bench", "--architectures", "foo", "--out", str(tmp_path / "b")],
        ["translate", "hi", "--to", "de", "--server", "notaurl"],
        ["plan", "--rps", "1", "--results", str(tmp_path / "none.json")],
    ):
        assert main(argv) == 2, argv  # wrong input exits as a bad flag does
        err = capsys.readouterr().err
        assert err.startswith("dragoman: error:") and "Traceback" not in err, err


def test_info_json_has_a_prefixed_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    from dragoman.argv import parse
    from dragoman.info import InfoSettings

    monkeypatch.setenv("JSON", "1")  # anyone's variable, not ours
    assert parse(InfoSettings, [], "dragoman info").json_output is False
    monkeypatch.setenv("DRAGOMAN_JSON", "1")
    assert parse(InfoSettings, [], "dragoman info").json_output is True
    monkeypatch.setenv("DRAGOMAN_JSON", "0")
    assert parse(InfoSettings, ["--json"], "dragoman info").json_output is True


@pytest.mark.parametrize(
    "args",
    [
        ["--seqs", "[]"],
        ["--seqs", "0"],
        ["--seqs", "4,2000"],
        ["--batched-tokens", "[]"],
        ["--batched-tokens", "100"],
        ["--threads", "[]"],
        ["--threads", "all,lots"],
        ["--dtypes", "[]"],
    ],
)
def test_tune_choices_are_checked_before_any_server_starts(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import dragoman.bench.tune as tune
    from dragoman.cli import main

    def launch(*_: object, **__: object) -> None:
        raise AssertionError("tune started a server with a choice it had not checked")

    monkeypatch.setattr(tune, "launch_dragoman", launch)
    assert main(["tune", "--out", str(tmp_path / "t"), *args]) == 2
    assert "dragoman: invalid settings" in capsys.readouterr().err


def test_data_dir_is_expanded_and_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A systemd unit or a config file passes `~` unexpanded: prepare made `./~/models/...`.
    from dragoman.settings import ModelSettings

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DRAGOMAN_DATA_DIR", "~/models")
    assert ModelSettings().data_dir == tmp_path / "home" / "models"
    monkeypatch.setenv("DRAGOMAN_DATA_DIR", "data")
    assert ModelSettings().data_dir == tmp_path / "data"
