"""Utilisation timeline at ~10 Hz: the accelerator through NVML where a GPU exists, else the
CPU of the server's process tree (engine processes included) and of the whole system."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import psutil


@dataclass
class Sample:
    t: float
    gpu: float | None  # percent, accelerator busy
    process_cpu: float | None  # percent of all cores, the server's process tree
    system_cpu: float  # percent of all cores


def _nvml() -> Any | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        if pynvml.nvmlDeviceGetCount() == 0:
            return None
        return pynvml
    except Exception:  # no library, no driver or no device: fall back to CPU
        return None


@dataclass
class Monitor:
    pid: int | None = None
    interval: float = 0.1
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nv = _nvml()
        self._handle = self._nv.nvmlDeviceGetHandleByIndex(0) if self._nv else None
        self._procs: dict[int, psutil.Process] = {}

    @property
    def primary(self) -> str:
        return "gpu" if self._nv else ("process_cpu" if self.pid else "system_cpu")

    def _tree_cpu(self) -> float | None:
        if self.pid is None:
            return None
        try:
            root = psutil.Process(self.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return None
        total = 0.0
        for p in tree:
            proc = self._procs.setdefault(p.pid, p)  # keep the object: cpu_percent is stateful
            try:
                total += proc.cpu_percent(None)
            except psutil.Error:
                continue
        return total / (psutil.cpu_count() or 1)

    def _loop(self, t0: float) -> None:
        psutil.cpu_percent(None)
        self._tree_cpu()
        while not self._stop.wait(self.interval):
            gpu = None
            if self._nv is not None:
                gpu = float(self._nv.nvmlDeviceGetUtilizationRates(self._handle).gpu)
            self.samples.append(
                Sample(time.perf_counter() - t0, gpu, self._tree_cpu(), psutil.cpu_percent(None))
            )

    def start(self) -> Monitor:
        self.samples = []
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, args=(time.perf_counter(),), daemon=True, name="monitor"
        )
        self._thread.start()
        return self

    def stop(self) -> list[Sample]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self.samples

    def series(self) -> list[float]:
        key = self.primary
        return [v for s in self.samples if (v := getattr(s, key)) is not None]


def tree_memory(pid: int) -> dict[str, Any]:
    """Resident memory of a server's process tree, in MiB: each process's RSS and PSS (PSS
    splits shared pages among their sharers, so the tree's PSS sum counts them once) and the
    largest process (the engine's, where the engine has its own process)."""
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.Error:
        return {}
    procs: list[dict[str, Any]] = []
    for p in tree:
        try:
            full = p.memory_full_info()
            procs.append(
                {
                    "pid": p.pid,
                    "name": p.name(),
                    "rss_mib": round(full.rss / 2**20, 1),
                    "pss_mib": round(getattr(full, "pss", full.rss) / 2**20, 1),
                }
            )
        except psutil.Error:
            continue
    if not procs:
        return {}
    return {
        "largest_rss_mib": max(p["rss_mib"] for p in procs),
        "tree_rss_mib": round(sum(p["rss_mib"] for p in procs), 1),
        "tree_pss_mib": round(sum(p["pss_mib"] for p in procs), 1),
        "processes": procs,
    }
