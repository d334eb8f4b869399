"""Log lines: the JSON formatter's fields, and the setup that gives them to every handler."""

from __future__ import annotations

import datetime
import io
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dragoman import logs
from dragoman.api.edge import EdgeMiddleware, Limits
from dragoman.api.errors import render
from dragoman.logs import REQUEST_ID, JsonFormatter


def record(msg: str = "hello %s", *args: object, **extra: object) -> logging.LogRecord:
    rec = logging.LogRecord("dragoman.test", logging.WARNING, __file__, 1, msg, args, None)
    rec.__dict__.update(extra)
    return rec


def test_a_record_is_one_json_line_with_the_stable_fields() -> None:
    rec = record("hello %s", "world")
    rec.created = 1_800_000_000.123456
    line = JsonFormatter().format(rec)
    assert "\n" not in line
    assert json.loads(line) == {
        "time": "2027-01-15T08:00:00.123Z",
        "level": "WARNING",
        "logger": "dragoman.test",
        "message": "hello world",
    }


def test_the_time_is_utc_with_milliseconds() -> None:
    parsed = json.loads(JsonFormatter().format(record()))["time"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", parsed)
    when = datetime.datetime.fromisoformat(parsed.replace("Z", "+00:00"))
    assert abs(when - datetime.datetime.now(datetime.UTC)) < datetime.timedelta(minutes=1)


def test_the_request_id_comes_from_the_context_inside_a_request() -> None:
    assert "request_id" not in json.loads(JsonFormatter().format(record()))
    token = REQUEST_ID.set("req-7")
    try:
        assert json.loads(JsonFormatter().format(record()))["request_id"] == "req-7"
    finally:
        REQUEST_ID.reset(token)


def test_a_request_id_given_by_extra_wins() -> None:
    line = json.loads(JsonFormatter().format(record(request_id="req-9")))
    assert line["request_id"] == "req-9"


def test_the_access_fields_are_kept_and_no_other_extra() -> None:
    rec = record(method="POST", path="/v1/translate", status=200, seconds=0.01, text="secret")
    line = json.loads(JsonFormatter().format(rec))
    assert (line["method"], line["path"], line["status"], line["seconds"]) == (
        "POST",
        "/v1/translate",
        200,
        0.01,
    )
    assert "text" not in line and "secret" not in json.dumps(line)


def test_an_exception_is_its_traceback_text_in_one_line() -> None:
    try:
        raise RuntimeError("a bug\non two lines")
    except RuntimeError:
        rec = logging.LogRecord(
            "dragoman.x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info()
        )
    line = JsonFormatter().format(rec)
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == "failed"
    assert parsed["exc_info"].startswith("Traceback (most recent call last):")
    assert parsed["exc_info"].endswith("RuntimeError: a bug\non two lines")


def test_non_ascii_and_lone_surrogates_round_trip_as_ascii_json() -> None:
    text = 'Grüße, 東京 😀 \udcff "quoted"\n'
    line = JsonFormatter().format(record("%s", text))
    assert line.isascii()  # valid JSON whatever the stream's encoding
    assert json.loads(line)["message"] == text


def test_a_value_json_cannot_encode_is_its_text() -> None:
    line = JsonFormatter().format(record(path=Path("/v1/x"), status=object()))
    assert json.loads(line)["path"] == "/v1/x"


@pytest.fixture
def root_handler() -> Iterator[logging.StreamHandler[io.StringIO]]:
    """A root handler as the CLI's basicConfig makes, alone on the root for the test."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("dragoman").level
    handler = logging.StreamHandler(io.StringIO())
    root.handlers[:] = [handler]
    logging.getLogger("dragoman").setLevel(logging.INFO)
    yield handler
    root.handlers[:], root.level = saved[0], saved[1]
    logging.getLogger("dragoman").setLevel(saved[2])
    logging.captureWarnings(False)  # json's setup routes warnings to logging: not for the suite


async def access_line(
    handler: logging.StreamHandler[io.StringIO],
    monkeypatch: pytest.MonkeyPatch,
    log_format: logs.LogFormat,
) -> str:
    """The one line a request writes, logs set up in `log_format` (no operator's vLLM config)."""
    monkeypatch.delenv("VLLM_LOGGING_CONFIG_PATH", raising=False)
    logs.setup(log_format)

    async def ok(scope: object, receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b""})  # type: ignore[operator]

    app = EdgeMiddleware(ok, Limits(), render)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        await c.get("/v1/languages", headers={"X-Request-Id": "req-42"})
    [line] = handler.stream.getvalue().splitlines()
    return line


async def test_json_setup_makes_the_access_line_json_with_its_fields(
    root_handler: logging.StreamHandler[io.StringIO], monkeypatch: pytest.MonkeyPatch
) -> None:
    line = await access_line(root_handler, monkeypatch, "json")
    parsed = json.loads(line)
    assert parsed["logger"] == "dragoman.access" and parsed["level"] == "INFO"
    assert parsed["message"].startswith("GET /v1/languages 204 ")
    assert parsed["request_id"] == "req-42"
    assert (parsed["method"], parsed["path"], parsed["status"]) == ("GET", "/v1/languages", 204)
    assert isinstance(parsed["seconds"], float)
    assert os.environ["VLLM_LOGGING_CONFIG_PATH"] == str(logs.VLLM_CONFIG)


async def test_text_setup_keeps_the_text_access_line(
    root_handler: logging.StreamHandler[io.StringIO], monkeypatch: pytest.MonkeyPatch
) -> None:
    line = await access_line(root_handler, monkeypatch, "text")
    assert re.fullmatch(
        r"\S+ \S+ INFO dragoman.access \[req-42\]: GET /v1/languages 204 \d+\.\d{3}s", line
    )
    assert "VLLM_LOGGING_CONFIG_PATH" not in os.environ


def test_an_operators_vllm_logging_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLLM_LOGGING_CONFIG_PATH", "/etc/mine.json")
    logs._json_for_vllm()
    assert os.environ["VLLM_LOGGING_CONFIG_PATH"] == "/etc/mine.json"
    monkeypatch.delenv("VLLM_LOGGING_CONFIG_PATH")
    monkeypatch.setenv("VLLM_CONFIGURE_LOGGING", "0")  # vLLM refuses a file then
    logs._json_for_vllm()
    assert "VLLM_LOGGING_CONFIG_PATH" not in os.environ


VLLM_ENGINE_LOGS = """
import logging
from dragoman.logs import setup
logging.basicConfig()  # as the CLI does
setup("json")  # what `dragoman serve --log-format json` does before the engine is built
from vllm.config.logging import LoggingConfig
from vllm.logger import configure_logging, init_logger
# The server process builds the LoggingConfig (AsyncEngineArgs.create_logging_config) and an
# engine process applies it (EngineCoreProc.run_engine_core -> configure_logging).
configure_logging(LoggingConfig())
init_logger("vllm.v1.engine.core").info("engine up: %s", "東京")
logging.getLogger("torch.something").warning("a library")
logging.getLogger("torch._dynamo").warning("torch's own handler")  # it does not propagate
"""


def run_with_vllm(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter with vLLM's real logger (no VLLM_LOGGING_* of ours)."""
    pytest.importorskip("vllm")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_LOGGING")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def test_vllm_applies_the_json_config_as_its_engine_processes_do() -> None:
    done = run_with_vllm(VLLM_ENGINE_LOGS)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # each line JSON
    by_logger = {line["logger"]: line for line in lines}
    assert by_logger["vllm.v1.engine.core"]["message"] == "engine up: 東京"
    assert by_logger["torch.something"]["level"] == "WARNING"
    assert by_logger["torch._dynamo"]["message"] == "torch's own handler"
    assert "engine up" not in done.stdout  # vLLM's own default stream is stdout


VLLM_TEXT_LOGS = """
import logging
from dragoman.logs import setup
logging.basicConfig()
setup("text")  # as `dragoman serve` and a `dragoman translate` starting its engine do
from vllm.config.logging import LoggingConfig
from vllm.logger import configure_logging, init_logger
init_logger("vllm.entrypoints").warning("in the server process")
configure_logging(LoggingConfig())  # as an engine process does
init_logger("vllm.v1.engine.core").warning("in an engine process")
print("the translation")
"""


def test_vllm_lines_go_to_stderr_in_text_mode_too() -> None:
    """vLLM writes to stdout by default: `dragoman translate ... > out.txt` with an engine
    started here wrote 54 lines of it around the translation."""
    done = run_with_vllm(VLLM_TEXT_LOGS)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the translation\n"
    assert "in the server process" in done.stderr
    assert "in an engine process" in done.stderr
