"""The log lines of real `dragoman serve` (echo) and `dragoman route` processes on 127.0.0.1:
with `--log-format json` every stderr line is a JSON object and the access line names its
request; in text, the proxy's access line names it too."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import httpx

from dragoman.bench.servers import Launched, free_port
from dragoman.heap import THRESHOLDS

BODY = {"text": "héllo", "source_lang": "en", "target_lang": "fr"}
CHECKS = ["--check-interval", "0.2", "--fail-threshold", "2", "--recover-threshold", "1"]


def launch(logs: Path, command: str, *args: str) -> Launched:
    """`dragoman COMMAND` with stdout and stderr kept apart, waited until /ready answers 200."""
    port = free_port()
    out, err = logs / f"{command}-{port}.out", logs / f"{command}-{port}.err"
    cmd = [sys.executable, "-m", "dragoman", command, "--host", "127.0.0.1", "--port", str(port)]
    with out.open("wb") as o, err.open("wb") as e:
        process = subprocess.Popen([*cmd, *args], stdout=o, stderr=e, start_new_session=True)
    launched = Launched(f"http://127.0.0.1:{port}", process, err)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, err.read_text()
        try:
            if httpx.get(f"{launched.url}/ready", timeout=2).status_code == 200:
                return launched
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    launched.stop()
    raise AssertionError(f"{command} not ready in 60 s: {err.read_text()}")


def stopped(launched: Launched) -> list[str]:
    """The process's stderr lines, once it has exited (every line written)."""
    launched.stop()
    assert launched.log.with_suffix(".out").read_text() == ""  # nothing on stdout
    return launched.log.read_text(encoding="utf-8").splitlines()


def access(lines: list[dict[str, object]], rid: str) -> dict[str, object]:
    [line] = [x for x in lines if x["logger"] == "dragoman.access" and x.get("request_id") == rid]
    return line


def test_json_logs_of_serve_and_route_are_json_lines_naming_the_request(
    logs: Path, stop_all: list[Launched]
) -> None:
    server = launch(logs, "serve", "--architecture", "echo", "--log-format", "json")
    stop_all.append(server)
    router = launch(logs, "route", "--backend-urls", server.url, *CHECKS, "--log-format", "json")
    stop_all.append(router)
    r = httpx.post(f"{router.url}/v1/translate", json=BODY, headers={"X-Request-Id": "req-j1"})
    assert r.status_code == 200, r.text
    r = httpx.post(f"{router.url}/v1/translate", json={**BODY, "target_lang": "xx"})
    assert r.status_code == 400

    for launched in (router, server):
        text = stopped(launched)
        lines = [json.loads(line) for line in text]  # every line is one JSON object
        assert lines and all(
            {"time", "level", "logger", "message"} <= line.keys() for line in lines
        )
        assert any(line["logger"].startswith("uvicorn") for line in lines)  # uvicorn's too
        line = access(lines, "req-j1")
        assert (line["method"], line["path"], line["status"]) == ("POST", "/v1/translate", 200)
        assert isinstance(line["seconds"], float)
        assert line["message"].startswith("POST /v1/translate 200 ")  # type: ignore[union-attr]
        assert "héllo" not in "\n".join(text)  # request text is never logged


def test_route_text_access_lines_name_the_request(logs: Path, stop_all: list[Launched]) -> None:
    server = launch(logs, "serve", "--architecture", "echo")
    stop_all.append(server)
    router = launch(logs, "route", "--backend-urls", server.url, *CHECKS)
    stop_all.append(router)
    r = httpx.post(f"{router.url}/v1/translate", json=BODY, headers={"X-Request-Id": "req-t1"})
    assert r.status_code == 200, r.text
    for launched in (router, server):
        lines = stopped(launched)
        [line] = [x for x in lines if "dragoman.access [req-t1]" in x]
        assert " INFO dragoman.access [req-t1]: POST /v1/translate 200 " in line


def test_serve_and_route_settle_their_heaps_once_started(
    logs: Path, stop_all: list[Launched]
) -> None:
    """Each process freezes what is alive once started and raises the collector's thresholds
    (dragoman/heap.py), once, and says so."""
    server = launch(logs, "serve", "--architecture", "echo")
    stop_all.append(server)
    router = launch(logs, "route", "--backend-urls", server.url, *CHECKS)
    stop_all.append(router)
    for launched in (router, server):
        [line] = [x for x in stopped(launched) if " dragoman.heap" in x]
        assert " INFO dragoman.heap" in line and ": heap frozen: " in line
        assert f"thresholds {','.join(map(str, THRESHOLDS))} " in line
