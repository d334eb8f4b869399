"""`dragoman bench`: architectures side by side on one workload, one run, one results folder."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dragoman.bench.dashboard import announce
from dragoman.bench.default_targets import default_verdicts
from dragoman.bench.loadgen import Record, closed_loop, open_loop
from dragoman.bench.monitor import Monitor, tree_memory
from dragoman.bench.servers import Launched, launch_dragoman, launch_vllm_serve, start
from dragoman.bench.settings import BenchSettings
from dragoman.bench.stats import LevelSummary, spikiness, summarise
from dragoman.bench.targets import DragomanTarget, OpenAITarget, Target
from dragoman.errors import ConfigError, Unreachable
from dragoman.eval import workloads
from dragoman.settings import EngineSettings

# name -> (dragoman --architecture, --workers, settings changed from the run's own). The
# variants of `continuous` isolate one choice each, measured in the same run: the repetition
# guard off, and the engine defaults dragoman had before they followed the host.
ARCHITECTURES: dict[str, tuple[str, int, dict[str, Any]]] = {
    "continuous": ("continuous", 1, {}),
    "continuous-noguard": ("continuous", 1, {"repeat_window": 0}),
    # Today's full weights at each dtype, and the other quantized form (models/quantize.py).
    "continuous-fp32": ("continuous", 1, {"dtype": "float32", "weights": "full"}),
    "continuous-bf16": ("continuous", 1, {"dtype": "bfloat16", "weights": "full"}),
    "continuous-w8a8": ("continuous", 1, {"weights": "w8a8"}),
    "continuous-w8a8-mixed": ("continuous", 1, {"weights": "w8a8-mixed"}),
    "continuous-w4a16": ("continuous", 1, {"dtype": "bfloat16", "weights": "w4a16"}),
    "continuous-legacy": (
        "continuous",
        1,
        {"dtype": "bfloat16", "cpu_threads": "reserve-one", "tcmalloc": False},
    ),
    # dragoman on a managed llama-server instead of vLLM: the host's GGUF form, and as shipped.
    "llama-cpp": ("llama-cpp", 1, {}),
    "llama-cpp-shipped": ("llama-cpp", 1, {"gguf_weights": "shipped"}),
    "multiprocess": ("multiprocess", 1, {}),
    "multiprocess-2": ("multiprocess", 2, {}),
    "static-batch": ("static-batch", 1, {}),
}
PEER = "vllm-serve"
LLAMA_SERVERS = ("llama-server", "llama-server-wheel")  # bench/llamacpp.py: NAME, WHEEL
PEERS = (PEER, *LLAMA_SERVERS)  # servers that are not dragoman


@dataclass
class Level:
    mode: str  # "closed" or "poisson"
    value: float  # concurrency or rate

    @property
    def label(self) -> str:
        return f"c={int(self.value)}" if self.mode == "closed" else f"{self.value:g} req/s"


def host_meta(s: EngineSettings) -> dict[str, Any]:
    """The host and the engine plan it gets with these settings, for every result file."""
    from dragoman.engine.vllm_engine import engine_plan, loaded_model_path
    from dragoman.host import detect

    host = detect()
    try:
        path: str | None = loaded_model_path(s)
    except Exception:
        path = None
    return {
        "machine": host.label(),
        "host": host.as_dict(),
        "plan": engine_plan(s, path).as_dict(),
    }


class Bench:
    def __init__(self, s: BenchSettings, console: Console) -> None:
        self.s = s
        self.console = console
        self.items = workloads.build(s.workload, s.workload_size, s.seed)
        self.levels = [Level("closed", c) for c in s.concurrency] + [
            Level("poisson", r) for r in s.rates
        ]
        self.out = s.out
        self.logs = self.out / "logs"

    def _budget(self, s: BenchSettings) -> Any:
        from transformers import AutoTokenizer

        from dragoman.engine.prompts import PromptBuilder
        from dragoman.engine.vllm_engine import loaded_model_path

        tok = AutoTokenizer.from_pretrained(loaded_model_path(s))
        pb = PromptBuilder(tok, s.max_model_len, s.output_ratio, s.max_output_tokens)
        return lambda item: pb.build(item.text, item.source, item.target)[1]

    def _settings(self, name: str) -> tuple[str, BenchSettings]:
        arch, _, model = name.partition("@")
        return arch, self.s.model_copy(update={"model": model}) if model else self.s

    def launch(self, name: str) -> Launched:
        """An architecture, or `<architecture>@<model>`: the same on another model (a quality
        tier beside the run's --model, so the two compare within one run)."""
        from dragoman.bench.servers import engine_flags
        from dragoman.engine.vllm_engine import loaded_model_path

        arch, s = self._settings(name)
        if arch == PEER:
            path = loaded_model_path(s)  # the same weights dragoman loads
            return launch_vllm_serve(self.logs, path, s)
        if arch in LLAMA_SERVERS:
            from dragoman.bench.llamacpp import WHEEL, launch_llama_server
            from dragoman.models.prepare import gguf_path

            gguf = gguf_path(s.model, s.data_dir)
            return launch_llama_server(self.logs, gguf, s, wheel=arch == WHEEL)
        mode, workers, changes = ARCHITECTURES[arch]
        flags = [
            *engine_flags(s.model_copy(update=changes)),
            "--architecture",
            mode,
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ]
        return launch_dragoman(self.logs, *flags)

    def target(self, name: str, server: Launched) -> Target:
        """How the load generator talks to the server `launch(name)` started."""
        arch, s = self._settings(name)
        if arch == PEER:
            return OpenAITarget(server.url, s.model, self._budget(s), s.repetition_penalty)
        if arch in LLAMA_SERVERS:
            from dragoman.bench.llamacpp import LlamaServerTarget

            return LlamaServerTarget(
                server.url, s.model, self._budget(s), s.repetition_penalty, s.max_model_len, arch
            )
        return DragomanTarget(server.url)

    async def run_level(
        self,
        name: str,
        target: Target,
        level: Level,
        pid: int | None,
        bar: Progress,
        task: Any,
        first: int = 0,
    ) -> tuple[list[Record], Monitor]:
        """One level of load on `name`'s server, its progress on `task` from nought."""

        def tick(_: Record) -> None:
            bar.advance(task)

        total = self.s.requests_per_level
        bar.update(task, description=f"{name} {level.label}", total=total, completed=0)

        monitor = Monitor(pid=pid).start()
        try:
            if level.mode == "closed":
                records = await closed_loop(
                    target,
                    self.items,
                    int(level.value),
                    self.s.requests_per_level,
                    self.s.seconds_per_level,
                    tick,
                    first,
                )
            else:
                records = await open_loop(
                    target,
                    self.items,
                    level.value,
                    self.s.requests_per_level,
                    self.s.seconds_per_level,
                    self.s.seed,
                    tick,
                    first,
                )
        finally:
            monitor.stop()
        return records, monitor

    async def run_arch(self, arch: str, bar: Progress, runs: list[dict[str, Any]]) -> None:
        """Start the architecture, run every level on it (each appended to `runs` as it
        finishes), stop it."""
        task = bar.add_task(f"{arch}: starting", total=None)
        server = await start(self.launch, arch)
        try:
            # The peers' token budgets load a tokenizer: in a thread, the server already owned.
            target = await asyncio.to_thread(self.target, arch, server)
            if arch.partition("@")[0] not in PEERS:
                announce(self.console, server.url, self.s.open_dashboard)
            # Warm-up, not recorded: first-request costs are not the steady state.
            await closed_loop(target, self.items[-4:], 2, 4, 60)
            for level in self.levels:
                records, monitor = await self.run_level(arch, target, level, server.pid, bar, task)
                run = level_result(arch, level, records, monitor)
                run["server_start_s"] = round(server.start_seconds, 1)
                # After the level: the model, the KV cache and whatever the load made grow.
                run["memory"] = tree_memory(server.pid)
                runs.append(run)
                self.console.log(f"{arch} {level.label}: " + _line(summarise(records)))
        finally:
            await asyncio.to_thread(server.stop)
            bar.update(task, description=f"{arch}: done")

    def _llama_meta(self) -> dict[str, str]:
        """Which llama-server the `llama-server` peer ran, when the run has it."""
        if "llama-server" not in {a.partition("@")[0] for a in self.s.architectures}:
            return {}
        from dragoman.bench.llamacpp import build_of

        return {"llama_server": build_of(self.s)}

    def _warn_repeats(self) -> None:
        most = len(self.levels) * self.s.requests_per_level
        if most > len(self.items):
            self.console.log(
                f"[bold red]warning:[/] up to {most} requests, {len(self.items)} distinct texts "
                f"in the workload: from request {len(self.items) + 1} on, texts repeat and a "
                "server with its translation cache on answers them from it. Raise "
                "--workload-size, or run the server with --cache-mib 0."
            )

    async def run(self) -> dict[str, Any]:
        if self.s.url:  # before the offline ceiling loads the model
            await check_server(self.s.url)
        else:
            unknown = [
                a
                for a in self.s.architectures
                if a.partition("@")[0] not in ARCHITECTURES and a.partition("@")[0] not in PEERS
            ]
            if unknown:
                known = ", ".join([*ARCHITECTURES, *PEERS])
                raise ConfigError(f"unknown architectures {', '.join(unknown)}; known: {known}")
        self.logs.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        results: dict[str, Any] = {
            "meta": {
                "label": self.s.label,
                **host_meta(self.s),
                "model": self.s.model,
                "workload": self.s.workload,
                "seed": self.s.seed,
                "requests_per_level": self.s.requests_per_level,
                "seconds_per_level": self.s.seconds_per_level,
                "settings": {
                    "max_num_seqs": self.s.max_num_seqs,
                    "max_num_batched_tokens": self.s.max_num_batched_tokens,
                    "gpu_memory_utilization": self.s.gpu_memory_utilization,
                    "dtype": self.s.dtype,
                    "cpu_threads": self.s.cpu_threads,
                    "enforce_eager": self.s.enforce_eager,
                    "repeat_window": self.s.repeat_window,
                    "max_output_tokens": self.s.max_output_tokens,
                },
                "started": datetime.now(UTC).isoformat(timespec="seconds"),
                **self._llama_meta(),
            },
            "runs": [],
        }
        # A server measured at --url may be another machine's: the ceiling (the model loaded
        # here) runs beside it only when asked.
        if self.s.offline if "offline" in self.s.model_fields_set else not self.s.url:
            from dragoman.bench.offline import offline_ceiling

            with self.console.status("offline batch: all prompts at once"):
                n = min(len(self.items), self.s.offline_requests)
                cancel = threading.Event()
                try:
                    results["offline"] = await asyncio.to_thread(
                        offline_ceiling, self.s, self.items[:n], self.logs, cancel=cancel
                    )
                except asyncio.CancelledError:  # Ctrl-C: its thread stops the ceiling
                    cancel.set()
                    raise
            self.console.log(f"offline batch: {results['offline']['rps']:.2f} req/s")
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
        ) as bar:
            try:
                await self._levels(results["runs"], bar)
            except asyncio.CancelledError:  # Ctrl-C: the levels that finished are kept
                results["meta"]["interrupted"] = True
        results["meta"]["elapsed_s"] = time.monotonic() - started
        from dragoman.bench.verdicts import verdicts

        results["verdicts"] = verdicts(results, self.s.max_num_seqs) + default_verdicts(results)
        return results

    async def _levels(self, runs: list[dict[str, Any]], bar: Progress) -> None:
        """Every level of the run, each appended to `runs` as it finishes."""
        if self.s.url:
            target = DragomanTarget(self.s.url)
            announce(self.console, target.url, self.s.open_dashboard)
            self._warn_repeats()
            task = bar.add_task("server", total=self.s.requests_per_level)
            sent = 0
            for level in self.levels:
                # Levels go on through the workload where the last stopped: the server's
                # cache (on, unlike the servers the bench starts) has not seen these texts.
                records, monitor = await self.run_level(
                    "server", target, level, self.s.server_pid, bar, task, first=sent
                )
                sent += len(records)
                runs.append(level_result("server", level, records, monitor))
                self.console.log(f"server {level.label}: " + _line(summarise(records)))
        else:
            for arch in self.s.architectures:
                await self.run_arch(arch, bar, runs)


async def check_server(url: str) -> None:
    """A --url that does not answer ready is refused up front: every level would be all
    failures, and the run would still write its files and exit 0."""
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            r = await client.get(f"{url}/ready")
    except httpx.HTTPError as exc:
        raise Unreachable(f"cannot reach {url}: {str(exc) or type(exc).__name__}") from None
    if r.status_code != 200:
        raise Unreachable(
            f"{url}/ready answered {r.status_code}: not a dragoman server, or not ready"
        )


def level_result(
    arch: str, level: Level, records: list[Record], monitor: Monitor
) -> dict[str, Any]:
    """One level's entry in results.json: summary, utilisation, timeline, every record."""
    series = monitor.series()
    step = max(1, len(monitor.samples) // 600)  # at most ~600 timeline points per level
    return {
        "architecture": arch,
        "mode": level.mode,
        "load": level.label,
        "concurrency": level.value if level.mode == "closed" else None,
        "rate": level.value if level.mode == "poisson" else None,
        "summary": summarise(records).to_dict(),
        "utilisation": {"series": monitor.primary, **spikiness(series).to_dict()},
        "timeline": {
            "series": monitor.primary,
            "t": [round(x.t, 2) for x in monitor.samples[::step]],
            "value": [round(v, 1) for v in series[::step]],
        },
        "records": [r.to_dict() for r in records],
    }


def _line(s: LevelSummary) -> str:
    return (
        f"{s.rps:.2f} req/s, {s.output_tokens_per_s:.0f} tok/s, p50 {s.latency_p50_s:.2f} s, "
        f"p99 {s.latency_p99_s:.2f} s, errors {s.errors}"
    )
