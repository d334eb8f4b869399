from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dragoman.eval import report


def row(pair: str, kind: str, chrf: float) -> dict[str, Any]:
    return {
        "pair": pair,
        "kind": kind,
        "n": 3,
        "chrf": chrf,
        "bleu": 12.345,
        "errors": 0,
        "wrong_language": 1,
        "language_checked": 3,
        "over_3x": 0,
        "guard_stopped": 1,
        "length_stopped": 0,
        "preamble": 0,
        "mean_seconds": 1.234,
    }


def results(api: str = "native") -> dict[str, Any]:
    return {
        "meta": {
            "settings": {
                "url": "http://127.0.0.1:8000",
                "api": api,
                "kinds": ["ui"],
                "per_pair": 3,
                "seed": 0,
                "concurrency": 8,
                "max_tokens": 512,
                "label": "test run",
                "server_flags": "--max-num-seqs 16",
            },
            "model": "m",
            "machine": "AMD EPYC (avx512-bf16)",
            "host": {"isa": ["avx2", "avx512_bf16"]},
            "server": {
                "body": {
                    "engines": {
                        "m": {
                            "device": "cpu",
                            "settings": {"dtype": {"value": "bfloat16", "reason": "r"}},
                        }
                    }
                }
            },
            "items": 3,
            "sources": "catalogues",
            "sacrebleu": "2.6.0",
            "started": "2026-01-01T00:00:00+00:00",
            "elapsed_s": 12.0,
        },
        "summary": [row("en-fr", "ui", 55.55), row("en-fr", "all", 55.55)],
        "items": [{"id": "en-fr/ui/000", "output": "Éditer"}],
    }


def test_markdown_names_server_host_and_set() -> None:
    md = report.markdown(results())
    assert md.startswith("# dragoman eval: test run\n")
    assert "`native` API at http://127.0.0.1:8000" in md
    assert "server flags: --max-num-seqs 16" in md
    assert "m on cpu: dtype bfloat16" in md
    assert "ISA flags: avx2 avx512_bf16" in md
    assert "| en-fr | ui | 3 | 55.5 | 12.3 | 1/3 | 0 | 1 | 0 | 0 | 0 | 1.23 |" in md
    assert "| en-fr | all | **3** | **55.5** |" in md


def test_markdown_of_an_openai_server_names_model_and_prompt_settings() -> None:
    md = report.markdown(results("openai"))
    assert "model `m`, plain prompt, temperature 0, max_tokens 512" in md


def test_write_keeps_text_readable(tmp_path: Path) -> None:
    paths = report.write(results(), tmp_path / "out")
    assert [p.name for p in paths] == ["eval.json", "eval.md"]
    assert "Éditer" in paths[0].read_text()
    assert json.loads(paths[0].read_text())["summary"][0]["chrf"] == 55.55


@pytest.mark.parametrize(
    "body, said",
    [
        (["x"], "not reported by the server"),
        ("hello", "not reported by the server"),
        ({"engines": ["echo"]}, "unknown (the server's /v1/info is not dragoman's shape)"),
        ({"engines": {"m": {"device": "cpu"}}}, "m on cpu: unknown"),
        ({"engines": {"m": "echo"}}, "m unknown"),
        ({"engines": {"m": {"settings": {"dtype": 3}}}}, "m on unknown: dtype none"),
    ],
)
def test_an_odd_server_info_is_unknown_not_a_crash(body: object, said: str) -> None:
    r = results()
    r["meta"]["server"] = {"path": "/v1/info", "body": body}
    assert f"- server engine: {said}\n" in report.markdown(r)


def test_partial_results_say_so_first() -> None:
    r = results()
    r["meta"]["partial"] = {"finished": 2, "of": 9}
    md = report.markdown(r)
    assert md.splitlines()[2] == (
        "**PARTIAL: interrupted after 2 of 9 texts; the scores are of those only.**"
    )
    assert "PARTIAL" not in report.markdown(results())
