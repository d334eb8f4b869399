"""llama.cpp's own HTTP server, run from the prebuilt `xllamacpp` wheel instead of a compiled
`llama-server`: `python -m dragoman.engine.llamacpp_embedded <llama-server flags>`.

The wheel embeds llama.cpp's native server (continuous batching, the same HTTP API), built for
AVX2 CPUs, so `--architecture llama-cpp` needs no compiler and no build time. It takes the
subset of llama-server's flags that `_llamacpp_process.command` writes, serves until SIGTERM or
SIGINT, and exits 0."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any


def available() -> bool:
    """Whether the wheel is installed (importing it loads nothing heavy)."""
    import importlib.util

    return importlib.util.find_spec("xllamacpp") is not None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="llamacpp_embedded", description=__doc__)
    p.add_argument("--model", required=True)
    p.add_argument("--alias", default="")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--threads", type=int, default=-1)
    p.add_argument("--threads-batch", type=int, default=-1)
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--ctx-size", type=int, default=0)
    p.add_argument("--cont-batching", action="store_true")
    p.add_argument("--threads-http", type=int, default=-1)
    p.add_argument("--no-webui", action="store_true")
    p.add_argument("--jinja", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slot-save-path", default="")
    p.add_argument("--cache-ram", type=int, default=8192)
    # As llama-server: from its variable, so that the key is not on the command line.
    p.add_argument("--api-key", default=os.environ.get("LLAMA_API_KEY", ""))
    return p


def params(args: argparse.Namespace) -> Any:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = args.model
    if args.alias:
        p.model_alias = {args.alias}
    p.hostnames = [args.host]
    p.port = args.port
    p.cpuparams.n_threads = args.threads
    p.cpuparams_batch.n_threads = args.threads_batch
    p.n_parallel = args.parallel
    p.n_ctx = args.ctx_size
    p.cont_batching = args.cont_batching
    p.n_threads_http = args.threads_http
    p.ui = not args.no_webui
    p.use_jinja = args.jinja
    p.sampling.seed = args.seed
    p.cache_ram_mib = args.cache_ram
    if args.api_key:
        p.api_keys = [args.api_key]
    if args.slot_save_path:  # llama-server's own flag parsing adds the separator
        p.slot_save_path = os.path.join(args.slot_save_path, "")
    return p


def main(argv: list[str] | None = None) -> int:
    import xllamacpp

    args = parser().parse_args(argv)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xllamacpp.Server(params(args))  # listening once this returns
    print(f"llama.cpp server (xllamacpp) listening on {server.listening_address}", flush=True)
    stop.wait()
    del server  # stops the server's loop and frees the model
    return 0


if __name__ == "__main__":
    sys.exit(main())
