"""Start and stop servers on 127.0.0.1 for benchmarks and integration tests: dragoman (any
architecture) or vLLM's own OpenAI-compatible server with the same model and settings."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import ParamSpec

import httpx

from dragoman.interrupts import stops_as_ctrl_c
from dragoman.settings import EngineSettings

P = ParamSpec("P")

# Every server process this process started and has not stopped, by pid. Process-wide, as child
# processes are: an interrupt can land between a launch and the `try` that would stop it, so
# the command runs inside owning_servers() and no server (a real engine holds gigabytes)
# outlives it.
_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_LIVE_LOCK = threading.Lock()
# Set in the thread a start() runs a launch in: its caller has gone (cancelled), give up.
_CALLER_GONE: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "dragoman_bench_caller_gone", default=None
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Launched:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    start_seconds: float = 0.0
    # Answers seen while the engine was still loading: (path, status, body).
    during_load: list[tuple[str, int, dict[str, object]]] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        _stop(self.process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM for a graceful stop, then the whole process group: engine processes the server
    spawned must not outlive it (they hold gigabytes). The group is killed even when a second
    Ctrl-C cuts the graceful wait short."""
    try:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        with _LIVE_LOCK:
            _LIVE.pop(process.pid, None)


@contextlib.contextmanager
def owning_servers() -> Iterator[None]:
    """A command that starts servers, run inside: SIGTERM or SIGHUP (a supervisor's stop, a
    closed terminal) is taken as Ctrl-C is (levels that finished are kept), and on the way
    out, by any path, every server it started is stopped. Only SIGKILL leaves them."""
    with stops_as_ctrl_c():
        try:
            yield
        finally:
            stop_all()  # whatever an interrupt left running, at any moment


def stop_all() -> None:
    """Stop every server this process started and has not stopped: all asked at once, so
    their graceful stops overlap. Another interrupt during the wait kills them all at once
    (it cut the wait for one server short and left the others running)."""
    with _LIVE_LOCK:
        left = list(_LIVE.values())
    try:
        for process in left:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        for process in left:
            _stop(process)
    finally:
        for process in left:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            with _LIVE_LOCK:
                _LIVE.pop(process.pid, None)


_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Interrupts that arrive while a server process is made wait until it is registered
    for stopping: raised inside Popen (after its fork), one left the child running with no
    one to stop it. Signals are handled in the main thread; a launch in another is not
    interrupted by them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        held.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in _HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for signum in held:  # as they would have been handled
            handler = previous[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler in (signal.SIG_DFL, None):
                signal.raise_signal(signum)


async def start(launch: Callable[P, Launched], *args: P.args, **kwargs: P.kwargs) -> Launched:
    """`launch(...)` in a thread, like asyncio.to_thread, but owned. A thread cannot be
    cancelled: when the awaiting task is (Ctrl-C), the launch would go on, finish, and return
    a server nobody stops. Here it is told its caller is gone, gives up at its next readiness
    poll and stops its server; one it had just returned is stopped here."""
    gone = threading.Event()
    context = contextvars.copy_context()
    context.run(_CALLER_GONE.set, gone)
    call = functools.partial(context.run, launch, *args, **kwargs)
    future = asyncio.get_running_loop().run_in_executor(None, call)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        gone.set()
        with contextlib.suppress(Exception):
            server = await future
            await asyncio.to_thread(server.stop)
        raise


def engine_flags(s: EngineSettings) -> list[str]:
    flags = [
        "--model",
        s.model,
        "--data-dir",
        str(s.data_dir),
        "--max-num-seqs",
        str(s.max_num_seqs),
        "--max-num-batched-tokens",
        str(s.max_num_batched_tokens),
        "--gpu-memory-utilization",
        str(s.gpu_memory_utilization),
        "--max-model-len",
        str(s.max_model_len),
        "--dtype",
        s.dtype,
        "--weights",
        s.weights,
        "--gguf-weights",
        s.gguf_weights,
        "--cpu-threads",
        s.cpu_threads,
        "--max-output-tokens",
        str(s.max_output_tokens),
        "--output-ratio",
        str(s.output_ratio),
        "--repetition-penalty",
        str(s.repetition_penalty),
        "--repeat-window",
        str(s.repeat_window),
        # Benchmarks measure the engine: a workload's repeated texts must not be answered
        # from the sentence cache.
        "--cache-mib",
        "0",
    ]
    if s.enforce_eager is not None:
        flags += ["--enforce-eager", str(s.enforce_eager).lower()]
    if s.block_size is not None:
        flags += ["--block-size", str(s.block_size)]
    if s.cpu_kvcache_space_gib is not None:
        flags += ["--cpu-kvcache-space-gib", str(s.cpu_kvcache_space_gib)]
    if s.tcmalloc is not None:
        flags += ["--tcmalloc", str(s.tcmalloc).lower()]
    if s.llama_server is not None:
        flags += ["--llama-server", str(s.llama_server)]
    return flags


class CallerGone(Exception):
    """The task that awaited this launch was cancelled (see start())."""


def _wait(launched: Launched, ready_path: str, timeout: float, probe: bool) -> Launched:
    """Wait until the server answers ready; on any failure or interrupt (KeyboardInterrupt
    lands here while a server loads) the server is stopped before the error goes on."""
    try:
        return _poll_ready(launched, ready_path, timeout, probe)
    except BaseException:
        launched.stop()
        raise


def _poll_ready(launched: Launched, ready_path: str, timeout: float, probe: bool) -> Launched:
    started = time.monotonic()
    body = {"text": "Hello", "source_lang": "en", "target_lang": "fr"}
    gone = _CALLER_GONE.get()
    with httpx.Client(base_url=launched.url, timeout=10) as client:
        while time.monotonic() - started < timeout:
            if gone is not None and gone.is_set():
                raise CallerGone(f"launch of {launched.url} abandoned")
            if launched.process.poll() is not None:
                raise RuntimeError(f"server exited: {launched.log.read_text()[-3000:]}")
            try:
                ready = client.get(ready_path)
            except httpx.TransportError:
                time.sleep(0.5)
                continue
            if ready.status_code == 200:
                launched.start_seconds = time.monotonic() - started
                return launched
            if probe and not launched.during_load:
                r = client.post("/v1/translate", json=body)
                launched.during_load += [
                    (ready_path, ready.status_code, ready.json()),
                    ("/v1/translate", r.status_code, r.json()),
                ]
            time.sleep(0.5)
    raise RuntimeError(f"server not ready in {timeout} s: {launched.log.read_text()[-3000:]}")


# Run first in a server's process on Linux, then replaced by the server's own command (the
# setting survives exec): the kernel sends it SIGTERM when the thread that forked it ends,
# the bench's death by SIGKILL included (no cleanup runs then). A process of its own, not
# preexec_fn, which runs Python in the child of a threaded process. A bench already gone is
# seen as a changed parent. Not inherited by the server's own children (engine processes,
# llama-server): the server stops those on SIGTERM.
_DIE_WITH_PARENT = """\
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit("the process that started this server has exited")
os.execvp(sys.argv[2], sys.argv[2:])
"""

_SPAWNER: concurrent.futures.ThreadPoolExecutor | None = None


def _spawner() -> concurrent.futures.ThreadPoolExecutor:
    global _SPAWNER
    with _LIVE_LOCK:
        if _SPAWNER is None:
            _SPAWNER = concurrent.futures.ThreadPoolExecutor(1, "dragoman-bench-spawner")
        return _SPAWNER


def _popen(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    if threading.current_thread() is threading.main_thread():
        return _spawn(cmd, log, env)
    # The parent the kernel knows is the forking thread: a server forked by a worker thread
    # (start(), asyncio.to_thread) would get its parent-death SIGTERM when the pool's threads
    # end, at asyncio.run's end, still in use. One thread, kept until the process exits,
    # forks them all.
    return _spawner().submit(_spawn, cmd, log, env).result()


def _spawn(cmd: list[str], log: Path, env: dict[str, str] | None) -> subprocess.Popen[bytes]:
    if sys.platform == "linux":
        cmd = [sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *cmd]
    with log.open("wb") as out, _interrupts_held():  # the child has its own descriptor
        process = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env or os.environ.copy(),
            # Its own process group, so stop() can reap its children. Out of the terminal's
            # group, Ctrl-C does not reach it: the bench stops it (_wait, stop_all), gracefully.
            start_new_session=True,
        )
        with _LIVE_LOCK:
            _LIVE[process.pid] = process
    return process


def _launch(
    log_dir: Path,
    command: str,
    args: tuple[str, ...],
    port: int | None = None,
    timeout: float = 600.0,
    probe: bool = False,
) -> Launched:
    """`dragoman <command> --host 127.0.0.1 --port <free port> <args>`, waited until ready."""
    port = port or free_port()
    log = log_dir / f"{command}-{port}.log"
    cmd = [sys.executable, "-m", "dragoman", command, "--host", "127.0.0.1", "--port", str(port)]
    launched = Launched(f"http://127.0.0.1:{port}", _popen([*cmd, *args], log), log)
    return _wait(launched, "/ready", timeout, probe)


def launch_dragoman(
    log_dir: Path, *args: str, timeout: float = 600.0, probe_while_loading: bool = False
) -> Launched:
    return _launch(log_dir, "serve", args, timeout=timeout, probe=probe_while_loading)


def launch_vllm_serve(
    log_dir: Path, model_path: str, s: EngineSettings, timeout: float = 600.0
) -> Launched:
    """vLLM's own server, as a user wiring vLLM up by hand would run it, with the same engine
    settings: the host's plan (dtype, threads, KV cache, allocator) included."""
    from dragoman.engine.vllm_engine import engine_setup

    plan, kw = engine_setup(s, model_path)
    port = free_port()
    log = log_dir / f"vllm-{port}.log"
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--model",
        model_path,
        "--served-model-name",
        s.model,
        "--dtype",
        kw["dtype"],
        "--max-model-len",
        str(kw["max_model_len"]),
        "--max-num-seqs",
        str(kw["max_num_seqs"]),
        "--max-num-batched-tokens",
        str(kw["max_num_batched_tokens"]),
        "--gpu-memory-utilization",
        str(kw["gpu_memory_utilization"]),
        "--seed",
        "0",
    ]
    if kw["enforce_eager"]:
        cmd.append("--enforce-eager")
    if "block_size" in kw:  # the peer gets the block size the bench gives dragoman
        cmd += ["--block-size", str(kw["block_size"])]
    env = {**os.environ, **plan.env()}
    launched = Launched(f"http://127.0.0.1:{port}", _popen(cmd, log, env), log)
    return _wait(launched, "/health", timeout, False)


def launch_router(log_dir: Path, *args: str, timeout: float = 60.0) -> Launched:
    """`dragoman route`; ready once at least one backend is admitted."""
    return _launch(log_dir, "route", args, timeout=timeout)


def launch_echo(log_dir: Path, languages: str, *args: str, port: int | None = None) -> Launched:
    """A dragoman server on the echo architecture: starts in a second, no model. `languages`
    empty: none given (a config with `[[models]]` names each model's own)."""
    limited = ("--languages", languages) if languages else ()
    echo = ("--architecture", "echo", *limited, "--log-level", "warning")
    return _launch(log_dir, "serve", (*echo, *args), port=port, timeout=60.0)


def launch_ray(log_dir: Path, *args: str, timeout: float = 300.0) -> Launched:
    """`dragoman deploy ray` on a local Ray cluster of its own; ready once every replica is."""
    port = free_port()
    log = log_dir / f"ray-{port}.log"
    cmd = [sys.executable, "-m", "dragoman", "deploy", "ray", "--host", "127.0.0.1"]
    cmd += ["--port", str(port), *args]
    launched = Launched(f"http://127.0.0.1:{port}", _popen(cmd, log), log)
    started = time.monotonic()
    _wait(launched, "/ready", timeout, False)
    gone = _CALLER_GONE.get()
    try:
        # The ingress is ready before the model replicas are (its pairs answer 503 meanwhile);
        # the app is up when `dragoman deploy ray` says so, after serve.run returned.
        while "dragoman on Ray Serve:" not in log.read_text(errors="replace"):
            if gone is not None and gone.is_set():
                raise CallerGone(f"launch of {launched.url} abandoned")
            if launched.process.poll() is not None or time.monotonic() - started > timeout:
                raise RuntimeError(f"Ray app not up in {timeout} s: {log.read_text()[-3000:]}")
            time.sleep(0.5)
    except BaseException:
        launched.stop()
        raise
    launched.start_seconds = time.monotonic() - started
    return launched
