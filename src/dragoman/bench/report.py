"""Results as JSON (the data), a Markdown table and PNG plots, in one results directory."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from dragoman.bench._json import dumps


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _pct(v: float | None) -> str:
    return "-" if v is None or math.isnan(v) else f"{100 * v:.0f}%"


def _plan(plan: dict[str, dict[str, str]] | None) -> str:
    if not plan:
        return "-"
    return ", ".join(f"{k} {v['value'] or 'none'}" for k, v in plan.items())


def markdown(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        f"# dragoman bench: {meta.get('label', '')}",
        "",
        f"- machine: {meta.get('machine', '?')}",
        f"- engine plan: {_plan(meta.get('plan'))}",
        f"- model: {meta.get('model', '?')}; settings: {meta.get('settings', {})}",
        f"- workload: `{meta.get('workload')}` (seed {meta.get('seed')}), "
        f"{meta.get('requests_per_level')} requests or {meta.get('seconds_per_level')} s per level",
        f"- started {meta.get('started', '?')}, took {_fmt(meta.get('elapsed_s'), 0)} s",
        "",
    ]
    if results.get("offline"):
        off = results["offline"]
        lines += [
            "## Offline batch: the engine alone, all prompts at once",
            "",
            "Timed to its last answer, the batch emptying included: a reference, not a ceiling "
            "(served throughput can pass it).",
            "",
            f"{off['requests']} requests: **{_fmt(off['rps'])} req/s**, "
            f"**{_fmt(off['output_tokens_per_s'], 1)} output tok/s** "
            f"({_fmt(off['seconds'], 1)} s)",
            "",
        ]
    lines += [
        "## Per architecture and load level",
        "",
        "| architecture | load | ok/sent | req/s | out tok/s | p50 s | p95 s | p99 s "
        "| queue | inference | other | util mean | util CV | idle share |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in results["runs"]:
        s, u = run["summary"], run.get("utilisation") or {}
        lines.append(
            f"| {run['architecture']} | {run['load']} | {s['ok']}/{s['requests']} "
            f"| {_fmt(s['rps'])} | {_fmt(s['output_tokens_per_s'], 1)} "
            f"| {_fmt(s['latency_p50_s'])} | {_fmt(s['latency_p95_s'])} "
            f"| {_fmt(s['latency_p99_s'])} | {_pct(s['queue_share'])} "
            f"| {_pct(s['inference_share'])} | {_pct(s['other_share'])} "
            f"| {_fmt(u.get('mean'), 0)} | {_fmt(u.get('cv'))} | {_pct(u.get('idle_share'))} |"
        )
    lines += _memory(results["runs"])
    if results.get("verdicts"):
        lines += ["", "## Targets", ""]
        lines += [f"- {v}" for v in results["verdicts"]]
    lines += [
        "",
        "queue / inference / other: shares of mean client latency; queue and inference as "
        "the server reports them (vLLM's request metrics for `continuous`; time in our "
        "multiprocessing queue and in `LLM.generate` for the baselines), other = HTTP, IPC "
        "and our code. util: the accelerator (NVML) or the server's process-tree CPU, sampled "
        "at 10 Hz; CV = std/mean; idle share = samples under 10% of peak.",
        "",
    ]
    return "\n".join(lines)


def _memory(runs: list[dict[str, Any]]) -> list[str]:
    """Server memory after each level, and how long the answers were (output tokens per
    request differ between servers: compare tok/s, not req/s, when they do)."""
    rows = [r for r in runs if r.get("memory")]
    if not rows:
        return []
    lines = [
        "",
        "## Server memory after each level, answer length",
        "",
        "| architecture | load | largest process RSS MiB | tree RSS MiB | tree PSS MiB "
        "| out tokens / request |",
        "|---|---|---|---|---|---|",
    ]
    for run in rows:
        m, recs = run["memory"], [x for x in run.get("records", []) if x.get("success")]
        per = sum(x["output_tokens"] for x in recs) / len(recs) if recs else None
        lines.append(
            f"| {run['architecture']} | {run['load']} | {_fmt(m.get('largest_rss_mib'), 0)} "
            f"| {_fmt(m.get('tree_rss_mib'), 0)} | {_fmt(m.get('tree_pss_mib'), 0)} "
            f"| {_fmt(per, 1)} |"
        )
    return lines


def plots(results: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: list[Path] = []
    by_arch: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in results["runs"]:
        if run["mode"] == "closed":
            by_arch[run["architecture"]].append(run)
    if not by_arch:
        return made
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for arch, runs in by_arch.items():
        ax.plot(
            [r["concurrency"] for r in runs], [r["summary"]["rps"] for r in runs], "o-", label=arch
        )
    if results.get("offline"):
        ax.axhline(
            results["offline"]["rps"], color="grey", ls="--", label="offline batch (drain included)"
        )
    ax.set(xlabel="concurrent clients", ylabel="requests / s", title="Throughput vs concurrency")
    ax.grid(alpha=0.3)
    ax.legend()
    path = out / "throughput_vs_concurrency.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    made.append(path)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (arch, runs) in enumerate(by_arch.items()):
        c = [r["concurrency"] for r in runs]
        color = f"C{i}"
        ax.plot(
            c, [r["summary"]["latency_p50_s"] for r in runs], "o-", color=color, label=f"{arch} p50"
        )
        ax.plot(
            c,
            [r["summary"]["latency_p99_s"] for r in runs],
            "s--",
            color=color,
            label=f"{arch} p99",
        )
    ax.set(xlabel="concurrent clients", ylabel="latency (s)", title="Latency vs concurrency")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    path = out / "latency_vs_concurrency.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    made.append(path)

    timelines = [(a, runs[-1]) for a, runs in by_arch.items() if runs[-1].get("timeline")]
    if timelines:
        fig, axes = plt.subplots(
            len(timelines), 1, figsize=(8, 1.8 * len(timelines) + 0.6), sharex=True, squeeze=False
        )
        for ax, (arch, run) in zip(axes[:, 0], timelines, strict=True):
            tl = run["timeline"]
            ax.plot(tl["t"], tl["value"], lw=0.8)
            ax.set_ylim(0, 105)
            ax.set_ylabel(f"{arch}\n{tl['series']} %", fontsize=7)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xlabel(f"seconds (at {timelines[0][1]['load']})")
        fig.suptitle("Utilisation timeline at the highest load, per architecture")
        path = out / "utilisation_timeline.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(path)
    return made


def write(results: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(dumps(results, indent=1, default=str))
    (out / "results.md").write_text(markdown(results))
    return [out / "results.json", out / "results.md", *plots(results, out)]
