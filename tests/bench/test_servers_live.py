"""Servers the bench starts never outlive an interrupt: real echo servers, launches cut short
by Ctrl-C (SIGINT to a real `dragoman bench`) or by cancelling the task that awaits them, and
servers of a bench killed by SIGKILL, which runs no cleanup."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from dragoman.bench import servers
from dragoman.bench.servers import launch_echo, start
from dragoman.models.catalogue import DEFAULT_MODEL
from tests.bench._signals import default_signals

T = TypeVar("T")

MARK = "DRAGOMAN_TEST_MARK"


def marked(mark: str) -> list[int]:
    """Pids of live processes whose environment carries the mark (ours and their children)."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for(condition: Callable[[], T], seconds: float, what: str) -> T:
    """What `condition()` gives once it is true."""
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.05)
    return found


def server_pids(mark: str, exclude: int | None = None) -> list[int]:
    """Marked processes that are a `dragoman serve` or `route` (not the bench itself)."""
    out = []
    for pid in marked(mark):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if pid != exclude and (b"serve" in cmd or b"route" in cmd):
            out.append(pid)
    return out


@pytest.fixture
def mark(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh mark in this process's environment (launched servers inherit it); whatever
    carries it is killed after the test, so a failure leaks nothing."""
    value = uuid.uuid4().hex
    monkeypatch.setenv(MARK, value)
    yield value
    for pid in marked(value):
        if pid != os.getpid():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def interrupt_while_starting(
    args: list[str], mark: str, tmp_path: Path, sig: signal.Signals = signal.SIGINT
) -> int:
    """Run `python -m dragoman <args>`, send it `sig` as soon as a server of it exists, and
    return its exit code once it has exited."""
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dragoman", *args],
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=default_signals,
        )
    try:
        wait_for(lambda: server_pids(mark, proc.pid), 120, "a server started")
        proc.send_signal(sig)
        return proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_while_launching_stops_the_server(mark: str, tmp_path: Path) -> None:
    # The bare launch, as the sync benches call it: the interrupt lands in its readiness wait.
    code = (
        "from pathlib import Path; from dragoman.bench.servers import launch_echo; "
        f"launch_echo(Path({str(tmp_path)!r}), 'en,fr')"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stderr=subprocess.DEVNULL, preexec_fn=default_signals
    )
    try:
        wait_for(lambda: server_pids(mark, proc.pid), 120, "the echo server started")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) != 0
    finally:
        if proc.poll() is None:
            proc.kill()
    wait_for(lambda: not marked(mark), 60, "no process of the launch left")


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["ctrl-c", "sigterm", "sighup"]
)
def test_ctrl_c_in_checks_cost_while_starting_leaves_no_server(
    mark: str, tmp_path: Path, sig: signal.Signals
) -> None:
    # A supervisor's SIGTERM and a closed terminal's SIGHUP are taken as Ctrl-C is. Sent as
    # the first server appears, the interrupt can land in the first readiness poll's lazy
    # import of h11, inside its dataclass methods' string code: that exited by SIGINT (-2)
    # (test_servers.py's test_an_interrupt_inside_string_code_exits_130).
    out = tmp_path / "out"
    args = ["bench", "--checks-cost", "--requests-per-level", "200", "--out", str(out)]
    assert interrupt_while_starting(args, mark, tmp_path, sig) == 130
    wait_for(lambda: not marked(mark), 60, "no server of the bench left")


def test_ctrl_c_in_proxy_bench_while_starting_leaves_no_server(mark: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["bench", "--proxy", "--proxy-backends", "echo", "--out", str(out)]
    args += ["--concurrency", "1", "--requests-per-level", "20"]
    assert interrupt_while_starting(args, mark, tmp_path) == 130
    wait_for(lambda: not marked(mark), 60, "no server of the bench left")


async def test_cancelled_start_stops_the_server(mark: str, tmp_path: Path) -> None:
    # The thread goes on after the cancel; the server it was starting must still be stopped.
    task = asyncio.create_task(start(launch_echo, tmp_path, "en,fr"))
    deadline = time.monotonic() + 120
    while not server_pids(mark, os.getpid()):
        assert time.monotonic() < deadline, "the echo server did not start"
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    wait_for(lambda: not server_pids(mark, os.getpid()), 60, "no process of the launch left")


async def test_start_returns_a_running_server(mark: str, tmp_path: Path) -> None:
    server = await start(launch_echo, tmp_path, "en,fr")
    try:
        assert server.process.poll() is None
    finally:
        server.stop()
    assert not server_pids(mark, os.getpid())


def test_an_interrupt_while_a_server_is_made_waits_until_it_can_be_stopped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Raised inside Popen, after its fork, an interrupt left a server no one would stop (the
    # Ctrl-C tests above lost one about one run in five, their own child's exit code -2).
    from dragoman.bench import servers

    pid = 2**22 + 1  # above pid_max's default: names no process
    seen: list[bool] = []

    class Forked:
        def __init__(self, *args: object, **kwargs: object) -> None:
            os.kill(os.getpid(), signal.SIGTERM)  # a supervisor's stop, just after the fork
            self.pid = pid

    def on_term(signum: int, frame: object) -> None:
        seen.append(pid in servers._LIVE)  # could stop_all() stop it now?

    monkeypatch.setattr(servers.subprocess, "Popen", Forked)
    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        servers._popen(["serve"], tmp_path / "log")
    finally:
        signal.signal(signal.SIGTERM, previous)
        servers._LIVE.pop(pid, None)
    assert seen == [True]


def _exec_done(pid: int) -> bool:
    """The server's own command runs (past the step that sets its parent-death signal)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[1:3] == [b"-m", b"dragoman"]
    except (OSError, IndexError):
        return False


@pytest.mark.parametrize(
    "args",
    [  # --checks-cost starts its servers from the main thread, --proxy from worker threads
        ["--checks-cost", "--requests-per-level", "200"],
        ["--proxy", "--proxy-backends", "echo", "--concurrency", "1", "--requests-per-level", "20"],
    ],
    ids=["main-thread", "worker-thread"],
)
def test_sigkill_of_the_bench_takes_its_servers_down(
    mark: str, tmp_path: Path, args: list[str]
) -> None:
    # SIGKILL runs no cleanup: every server the bench started went on running (a real engine
    # holds gigabytes). The kernel now sends each its SIGTERM when the bench dies.
    with (tmp_path / "stderr.txt").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dragoman", "bench", *args, "--out", str(tmp_path / "out")],
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=default_signals,
        )
    started = lambda: [p for p in server_pids(mark, proc.pid) if _exec_done(p)]  # noqa: E731
    _kill_once(proc, started, "a server of the bench")
    wait_for(lambda: not marked(mark), 60, "no server of the killed bench left")


def _kill_once(proc: subprocess.Popen[bytes], started: Callable[[], T], what: str) -> T:
    """SIGKILL the bench once `started()` holds (what it gave back); never left running."""
    try:
        found = wait_for(started, 120, f"{what} started")
        proc.kill()
        proc.wait(timeout=60)
        return found
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _sigterm_pending(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    pending = [int(line.split()[1], 16) for line in status.splitlines() if "Pnd:" in line]
    return any(mask & (1 << (signal.SIGTERM - 1)) for mask in pending)


def test_a_server_started_from_a_thread_outlives_the_thread(tmp_path: Path) -> None:
    # The parent-death signal follows the thread that forked: a server forked by a pool thread
    # got SIGTERM when asyncio.run's end stopped the pool, still in use. This one blocks
    # SIGTERM, so one sent stays pending where /proc shows it.
    up = tmp_path / "up"
    code = (
        "import pathlib, signal, time; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); "
        f"pathlib.Path({str(up)!r}).touch(); time.sleep(300)"
    )
    made: list[subprocess.Popen[bytes]] = []

    def launch() -> None:  # the thread ends once the server runs, as a launch's does
        made.append(servers._popen([sys.executable, "-c", code], tmp_path / "log"))
        wait_for(up.exists, 60, "the server started")

    thread = threading.Thread(target=launch)
    thread.start()
    thread.join()
    process = made[0]
    try:
        assert up.exists()
        # Gone from /proc once its exit (which sends the parent-death signal) is done.
        wait_for(lambda: not Path(f"/proc/self/task/{thread.native_id}").exists(), 60, "exit")
        assert process.poll() is None
        assert not _sigterm_pending(process.pid)
    finally:
        process.kill()
        process.wait()
        servers._LIVE.pop(process.pid, None)


# A stand-in vLLM, first on the ceiling's path: its engine never finishes loading, so the
# ceiling's process runs until something stops it; it writes its pid once it is loading.
FAKE_VLLM = {
    "__init__.py": (
        "import os, pathlib, time\n"
        "class SamplingParams:\n"
        "    def __init__(self, **kwargs): pass\n"
        "class LLM:\n"
        "    def __init__(self, **kwargs):\n"
        "        up = pathlib.Path(os.environ['FAKE_VLLM_UP'])\n"
        "        up.with_suffix('.tmp').write_text(str(os.getpid()))\n"
        "        up.with_suffix('.tmp').rename(up)\n"
        "        time.sleep(600)\n"
    ),
    "inputs.py": "TokensPrompt = dict\n",
    "platforms.py": ("class _Cpu:\n    def is_cpu(self): return True\ncurrent_platform = _Cpu()\n"),
}


def test_sigkill_of_the_bench_takes_its_offline_ceiling_down(mark: str, tmp_path: Path) -> None:
    # The ceiling's process loads the engine (gigabytes). Started by multiprocessing, it went
    # on running after a SIGKILLed bench; it is now started as the servers are.
    up = tmp_path / "loading.pid"
    echo = launch_echo(tmp_path, "en,fr")
    try:
        with (tmp_path / "stderr.txt").open("wb") as err:
            proc = _bench_with_fake_vllm(
                tmp_path, echo.url, FAKE_VLLM, stdout=subprocess.DEVNULL, stderr=err
            )
        loading = lambda: up.exists() and int(up.read_text())  # noqa: E731
        # the ceiling is one of the bench's processes, marked as its servers are
        ceiling = _kill_once(proc, lambda: loading() in marked(mark) and loading(), "the ceiling")
        wait_for(lambda: ceiling not in marked(mark), 60, "the killed bench's ceiling gone")
    finally:
        echo.stop()


def _bench_with_fake_vllm(
    tmp_path: Path, url: str, files: dict[str, str], *more: str, **popen: object
) -> subprocess.Popen[bytes]:
    """`dragoman bench --url URL --offline` with a stand-in vLLM first on its path."""
    fake = tmp_path / "fake"
    (fake / "vllm").mkdir(parents=True)
    for name, text in files.items():
        (fake / "vllm" / name).write_text(text)
    env = {
        **os.environ,
        "FAKE_VLLM_UP": str(tmp_path / "loading.pid"),
        "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")]),
    }
    args = ["--url", url, "--offline", "--model", "stand-in/model", "--offline-requests", "2"]
    args += ["--concurrency", "1", "--requests-per-level", "2", "--out", str(tmp_path / "o")]
    cmd = [sys.executable, "-m", "dragoman", "bench", *args, *more]
    return subprocess.Popen(cmd, env=env, preexec_fn=default_signals, **popen)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize("fails", ["engine", "not prepared"])
def test_a_ceiling_that_fails_is_one_error_line(mark: str, tmp_path: Path, fails: str) -> None:
    # It was a traceback holding the ceiling's own traceback.
    failing = "    def __init__(self, **kwargs):\n        raise RuntimeError('out of memory')\n"
    init = FAKE_VLLM["__init__.py"].split("    def __init__(self, **kwargs):\n        up")[0]
    files = {**FAKE_VLLM, "__init__.py": init + failing}
    data = tmp_path / "empty"
    model = ("--model", DEFAULT_MODEL, "--data-dir", str(data)) if fails == "not prepared" else ()
    echo = launch_echo(tmp_path, "en,fr")
    try:
        proc = _bench_with_fake_vllm(
            tmp_path, echo.url, files, *model, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    finally:
        echo.stop()
    assert proc.returncode == 1
    log = tmp_path / "o" / "logs" / "offline.log"
    why = (
        f"model {DEFAULT_MODEL!r} (full weights) is not prepared in {data}; "
        "run `dragoman model prepare`"
        if fails == "not prepared"
        else "RuntimeError: out of memory"
    )
    assert err.decode().splitlines()[-1] == (
        f"dragoman: error: offline ceiling failed (exit 1): {why}; its output: {log}"
    )
    assert b"Traceback" not in err
    if fails == "engine":
        assert "Traceback" in log.read_text()  # the whole story stays in its log


def test_sigterm_of_the_bench_stops_its_offline_ceiling(mark: str, tmp_path: Path) -> None:
    # The bench waited for the ceiling's thread (asyncio.run joins its worker threads) before
    # stopping anything: a SIGTERM or a Ctrl-C while the engine loaded did nothing until the
    # ceiling ended by itself, up to its 30 minutes.
    up = tmp_path / "loading.pid"
    echo = launch_echo(tmp_path, "en,fr")
    try:
        proc = _bench_with_fake_vllm(
            tmp_path, echo.url, FAKE_VLLM, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_for(up.exists, 120, "the ceiling's engine loading")
            ceiling = int(up.read_text())
            proc.terminate()
            assert proc.wait(timeout=90) == 130
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert ceiling not in marked(mark)
    finally:
        echo.stop()
