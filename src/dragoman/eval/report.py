"""An evaluation as JSON (settings, host, server, one row per pair and kind, one record per
item) and as a Markdown table, in one results directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

COLUMNS = (
    ("n", "n"),
    ("chrF", "chrf"),
    ("BLEU", "bleu"),
    ("wrong lang", "wrong_language"),
    (">3x", "over_3x"),
    ("guard", "guard_stopped"),
    ("length", "length_stopped"),
    ("preamble", "preamble"),
    ("errors", "errors"),
    ("s/text", "mean_seconds"),
)


def _cell(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    if key == "wrong_language":
        return f"{value}/{row['language_checked']}"
    if isinstance(value, float):
        return f"{value:.2f}" if key == "mean_seconds" else f"{value:.1f}"
    return str(value)


def table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| pair | kind | " + " | ".join(name for name, _ in COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    for row in rows:
        cells = [_cell(row, key) for _, key in COLUMNS]
        if row["kind"] == "all":
            cells = [f"**{c}**" for c in cells]
        lines.append(f"| {row['pair']} | {row['kind']} | " + " | ".join(cells) + " |")
    return lines


def _engine(server: dict[str, Any]) -> str:
    body = server.get("body")
    engines = body.get("engines") if isinstance(body, dict) else None
    if not engines:
        return "not reported by the server"
    if not isinstance(engines, dict):
        return "unknown (the server's /v1/info is not dragoman's shape)"
    return "; ".join(f"{name} {_one_engine(engine)}" for name, engine in engines.items())


def _one_engine(engine: Any) -> str:
    """`on DEVICE: setting value, ...` from one engine of /v1/info; "unknown" for what is not
    in its shape, so another server's info cannot lose the report."""
    if not isinstance(engine, dict):
        return "unknown"
    settings = engine.get("settings")
    if not isinstance(settings, dict):
        settings = {}
    values = ", ".join(
        f"{k} {(v.get('value') if isinstance(v, dict) else None) or 'none'}"
        for k, v in settings.items()
    )
    return f"on {engine.get('device') or 'unknown'}: {values or 'unknown'}"


def markdown(results: dict[str, Any]) -> str:
    meta = results["meta"]
    s = meta["settings"]
    target = f"`{s['api']}` API at {s['url']}"
    if s["api"] == "openai":
        target += f", model `{meta.get('model')}`, plain prompt, temperature 0"
        target += f", max_tokens {s['max_tokens']}"
    partial = meta.get("partial")
    lines = [
        f"# dragoman eval: {s.get('label') or s['url']}",
        "",
        *(
            [
                f"**PARTIAL: interrupted after {partial['finished']} of {partial['of']} texts; "
                "the scores are of those only.**",
                "",
            ]
            if partial
            else []
        ),
        f"- server: {target}",
        f"- server flags: {s.get('server_flags') or 'not given'}",
        f"- server engine: {_engine(meta.get('server') or {})}",
        f"- machine: {meta['machine']}; ISA flags: {' '.join(meta['host']['isa']) or 'none'}",
        f"- set: seed {s['seed']}, {s['per_pair']} texts per pair and kind "
        f"({', '.join(s['kinds'])}), {meta['items']} texts; {meta['sources']}",
        f"- {s['concurrency']} requests at a time; started {meta['started']}, "
        f"took {meta['elapsed_s']:.0f} s; sacrebleu {meta['sacrebleu']}",
        "",
        *table(results["summary"]),
        "",
        "chrF and BLEU: sacrebleu corpus scores per row (BLEU tokenized `zh` for Chinese, by "
        "character for Japanese, `13a` otherwise); a failed request scores as an empty output. "
        "wrong lang: outputs detected as another language, of those whose reference is "
        "detected as the target. >3x: longer than 3x the source. guard: stopped by the "
        "repetition guard; length: by the output budget. preamble: the output announces or "
        "comments on the translation. s/text: mean seconds per request (concurrent).",
        "",
    ]
    return "\n".join(lines)


def write(results: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "eval.json", out / "eval.md"]
    paths[0].write_text(json.dumps(results, indent=1, ensure_ascii=False, default=str) + "\n")
    paths[1].write_text(markdown(results))
    return paths
