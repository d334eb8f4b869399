"""`dragoman eval` end to end against an in-process server (httpx's MockTransport): what is
written, and what is refused before any request."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.cli import main
from dragoman.eval import client, metrics, runner

Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Callable[[Handler], list[str]]:
    """Answer eval's requests with `handler`, in-process; the texts asked, in order."""

    def install(handler: Handler) -> list[str]:
        asked: list[str] = []

        def recorded(request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                asked.append(json.loads(request.content)["text"])
            return handler(request)

        real = client.Target

        def target(*args: Any, **kwargs: Any) -> client.Target:
            return real(*args, **kwargs, transport=httpx.MockTransport(recorded))

        monkeypatch.setattr(runner, "Target", target)

        def same_language(texts: Sequence[str]) -> list[str | None]:
            return ["fr"] * len(texts)

        monkeypatch.setattr(metrics, "lingua_detect", lambda: same_language)
        return asked

    return install


def echo(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/v1/info":
        return httpx.Response(200, json={"engines": ["echo"]})  # not dragoman's shape
    text = json.loads(request.content)["text"]
    reply = {"text": text, "finish_reason": "stop", "output_tokens": 3}
    return httpx.Response(200, json={"translations": [reply]})


def odd_every_other() -> Handler:
    posts = [0]

    def handler(request: httpx.Request) -> httpx.Response:
        posts[0] += request.method == "POST"
        if request.method == "POST" and posts[0] % 2 == 0:
            reply = {"text": None, "finish_reason": "stop", "output_tokens": 3}
            return httpx.Response(200, json={"translations": [reply]})
        return echo(request)

    return handler


def args(out: Path, *more: str) -> list[str]:
    base = ["eval", "--url", "http://127.0.0.1:9", "--pairs", "en-fr", "--kinds", "ui"]
    return [*base, "--per-pair", "6", "--concurrency", "1", "--out", str(out), *more]


def test_odd_replies_are_failed_items_and_both_files_are_written(
    tmp_path: Path, serve: Callable[[Handler], list[str]]
) -> None:
    serve(odd_every_other())
    assert main(args(tmp_path / "out")) == 0
    results = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert results["summary"][0]["errors"] == 3  # the 2nd, 4th and 6th of 6
    assert results["meta"]["model"] == "unknown" and results["meta"]["partial"] is None
    assert "server engine: unknown" in (tmp_path / "out" / "eval.md").read_text()


@pytest.mark.parametrize("where", ["file", "file/sub", "/proc/nope"])
def test_an_out_that_cannot_be_written_is_refused_before_any_request(
    where: str,
    tmp_path: Path,
    serve: Callable[[Handler], list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "file").write_text("")
    asked = serve(echo)
    out = Path(where) if where.startswith("/") else tmp_path / where
    assert main(args(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dragoman: error: --out {out}: ") and err.count("\n") == 1, err
    assert asked == []


def test_ctrl_c_writes_what_finished_marked_partial(
    tmp_path: Path, serve: Callable[[Handler], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and len(asked) == 3:
            raise KeyboardInterrupt  # as Ctrl-C lands while the third text is out
        return echo(request)

    asked = serve(interrupted)
    assert main(args(tmp_path / "out")) == 130
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"dragoman: interrupted: partial results (2 of 6 texts) in {tmp_path / 'out'}"
    results = json.loads((tmp_path / "out" / "eval.json").read_text())
    assert results["meta"]["partial"] == {"finished": 2, "of": 6}
    assert [i["source"] for i in results["items"]] == asked[:2]
    assert "PARTIAL" in (tmp_path / "out" / "eval.md").read_text()


def test_ctrl_c_before_any_answer_writes_nothing(
    tmp_path: Path, serve: Callable[[Handler], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    serve(interrupted)
    assert main(args(tmp_path / "out")) == 130
    assert "nothing written" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
