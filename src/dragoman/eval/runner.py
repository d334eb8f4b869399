"""`dragoman eval`: build the set, send it to the server, score it, write the results."""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any

from dragoman.errors import ConfigError
from dragoman.eval import corpora, metrics, report, sets
from dragoman.eval.client import Output, Progress, Target, plain_prompt, translate_all
from dragoman.eval.sets import EvalItem
from dragoman.eval.settings import EvalSettings
from dragoman.languages import parse_pair

SOURCES = (
    "ui and sentence: Django's and Sphinx's gettext catalogues (their own translations as "
    "references); paragraph: consecutive Bible verses, World English Bible as English, one "
    "Bible per other language as reference ({bibles})"
)


def _sources(pairs: list[tuple[str, str]]) -> str:
    langs = sorted({lang for pair in pairs for lang in pair} & set(corpora.BIBLES))
    return SOURCES.format(bibles=", ".join(f"{c}: {corpora.BIBLES[c][1]}" for c in langs))


def run_eval(s: EvalSettings) -> dict[str, Any]:
    from dragoman.writable import check_dir

    check_dir(s.out, "--out")
    pairs = [parse_pair(p) for p in s.pairs]
    try:
        items = sets.build(pairs, s.kinds, s.per_pair, s.seed)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    target = Target(
        s.url,
        s.api,
        model=s.openai_model,
        max_tokens=s.max_tokens,
        api_key=s.api_key.get_secret_value() if s.api_key else None,
        timeout=s.timeout,
        candidates=None if s.candidates == "auto" else int(s.candidates),
    )
    started = datetime.now(UTC)
    t0 = time.monotonic()
    print(f"eval: {len(items)} texts to {s.url} ({s.api} API)", file=sys.stderr)
    progress = Progress()
    try:
        outputs, server = asyncio.run(
            translate_all(target, items, s.concurrency, _progress(items), progress)
        )
    except KeyboardInterrupt:
        _write_partial(s, target, items, progress, started, time.monotonic() - t0)
        raise
    return _finish(s, target, items, outputs, server, started, time.monotonic() - t0)


def _write_partial(
    s: EvalSettings,
    target: Target,
    items: list[EvalItem],
    progress: Progress,
    started: datetime,
    elapsed: float,
) -> None:
    """Ctrl-C: score and write the texts that finished, marked partial, and say where (the
    CLI then exits 130); the requests already answered are not thrown away."""
    done = sorted(progress.outputs)
    if not done or progress.server is None:
        print("dragoman: interrupted before any text finished; nothing written", file=sys.stderr)
        return
    partial = {"finished": len(done), "of": len(items)}
    _finish(
        s,
        target,
        [items[n] for n in done],
        [progress.outputs[n] for n in done],
        progress.server,
        started,
        elapsed,
        partial,
    )
    print(
        f"dragoman: interrupted: partial results ({len(done)} of {len(items)} texts) in {s.out}",
        file=sys.stderr,
    )


def _finish(
    s: EvalSettings,
    target: Target,
    items: list[EvalItem],
    outputs: list[Output],
    server: dict[str, Any],
    started: datetime,
    elapsed: float,
    partial: dict[str, int] | None = None,
) -> dict[str, Any]:
    from dragoman.host import detect

    pairs = [parse_pair(p) for p in s.pairs]
    rows, records = metrics.evaluate(items, outputs, metrics.lingua_detect())
    host = detect()
    results: dict[str, Any] = {
        "meta": {
            "settings": s.model_dump(mode="json", exclude={"api_key"}),
            "model": _model(target, server),
            "prompt": plain_prompt(_example(items)) if s.api == "openai" and items else None,
            "machine": host.label(),
            "host": host.as_dict(),
            "server": server,
            "items": len(items),
            "sources": _sources(pairs),
            "sacrebleu": version("sacrebleu"),
            "started": started.isoformat(timespec="seconds"),
            "elapsed_s": round(elapsed, 1),
            "partial": partial,
        },
        "summary": rows,
        "items": records,
    }
    for path in report.write(results, s.out):
        print(f"wrote {path}", file=sys.stderr)
    if partial is None:
        print("\n".join(report.table(rows)))
    return results


def _model(target: Target, server: dict[str, Any]) -> str | None:
    if target.api == "openai":
        return target.model
    body = server.get("body")
    engines = body.get("engines") if isinstance(body, dict) else None
    if not engines:
        return None
    # /v1/info names engines by the keys of an object; anything else is not dragoman's shape.
    return ", ".join(engines) if isinstance(engines, dict) else "unknown"


def _example(items: list[EvalItem]) -> EvalItem:
    """The prompt as recorded in the results, with a placeholder for the text."""
    first = items[0]
    return EvalItem(first.id, first.source_lang, first.target_lang, "", "<text>", "", "")


def _progress(items: list[EvalItem]) -> Any:
    total = len(items)
    done = [0]
    step = max(1, total // 20)

    def on_done(item: EvalItem, out: Output) -> None:
        done[0] += 1
        if not out.ok:
            print(f"  {item.id}: {out.error}", file=sys.stderr)
        if done[0] % step == 0 or done[0] == total:
            print(f"  {done[0]}/{total}", file=sys.stderr)

    return on_done
