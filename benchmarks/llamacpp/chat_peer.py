"""OpenAI chat on dragoman's llama.cpp engine against llama-server's own /v1/chat/completions:
the same GGUF, slots, context and threads, one server after the other, measured by vLLM's
`bench serve --backend openai-chat` (random dataset, which sets ignore_eos: every answer is
exactly OUT tokens; greedy) at 1 and at SLOTS concurrent clients.

    flock /tmp/dragoman-engine.lock python benchmarks/llamacpp/chat_peer.py OUT_DIR

Writes each run's vLLM result JSON and `summary.json` / `README.md` (the table) to OUT_DIR.
`LLAMA_SERVER=path` benches that binary as the peer (default: the xllamacpp wheel's server,
which dragoman's engine runs too)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from dragoman.bench.llamacpp import launch_llama_server
from dragoman.bench.servers import launch_dragoman
from dragoman.bench.settings import BenchSettings
from dragoman.models.catalogue import DEFAULT_MODEL
from dragoman.models.prepare import gguf_path, resolve_model

SLOTS = 4
PROMPTS = {1: 24, SLOTS: 48}  # requests per concurrency
IN, OUT = 128, 64
WHEEL = Path(__file__).with_name("wheel-llama-server")

BENCH = """
import sys
from vllm.benchmarks.serve import add_cli_args, main
from vllm.utils.argparse_utils import FlexibleArgumentParser
parser = FlexibleArgumentParser()
add_cli_args(parser)
main(parser.parse_args(sys.argv[1:]))
"""


def bench(url: str, name: str, clients: int, out: Path, extra: list[str]) -> dict[str, float]:
    filename = f"{name}-c{clients}.json"
    args = [
        *("--backend", "openai-chat", "--endpoint", "/v1/chat/completions", "--base-url", url),
        *("--dataset-name", "random", "--num-prompts", str(PROMPTS[clients])),
        *("--random-input-len", str(IN), "--random-output-len", str(OUT), "--seed", "0"),
        *("--max-concurrency", str(clients), "--request-rate", "inf"),
        *("--save-result", "--result-dir", str(out), "--result-filename", filename),
        # Greedy for both: unset, dragoman samples the whole vocabulary at temperature 1 (the
        # model's and vLLM's default) and llama-server its own top-k 40: unlike work per token.
        *("--temperature", "0", "--percentile-metrics", "ttft,tpot,itl,e2el", "--disable-tqdm"),
        *extra,
    ]
    run = subprocess.run([sys.executable, "-c", BENCH, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{name} c={clients}: {run.stdout[-2000:]}{run.stderr[-2000:]}")
    r = json.loads((out / filename).read_text())
    if r["total_output_tokens"] != r["completed"] * OUT or (name == "dragoman" and r["failed"]):
        raise SystemExit(f"{name} c={clients}: failed {r['failed']}, {r['total_output_tokens']}")
    keys = ("output_throughput", "median_ttft_ms", "median_tpot_ms", "median_e2el_ms")
    counts = {"completed": r["completed"], "failed": r["failed"]}  # the peer's failures shown
    return {k: round(float(r[k]), 2) for k in keys} | counts


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    s = BenchSettings(max_num_seqs=SLOTS, llama_server=os.environ.get("LLAMA_SERVER", WHEEL))
    tokenizer = str(resolve_model(DEFAULT_MODEL, s.data_dir, "full"))
    results: dict[str, dict[str, dict[str, float]]] = {}
    logs = Path(tempfile.mkdtemp(prefix="chat-peer-"))
    flags = ("--architecture", "llama-cpp", "--max-num-seqs", str(SLOTS))
    server = launch_dragoman(logs, *flags, timeout=300)
    try:  # model and tokenizer from /v1/models, as any OpenAI client finds them
        results["dragoman"] = {f"c{c}": bench(server.url, "dragoman", c, out, []) for c in PROMPTS}
    finally:
        server.stop()
    peer = launch_llama_server(logs, gguf_path(DEFAULT_MODEL, s.data_dir), s)
    try:
        named = ["--model", DEFAULT_MODEL, "--tokenizer", tokenizer]
        results["llama-server"] = {
            f"c{c}": bench(peer.url, "llama-server", c, out, named) for c in PROMPTS
        }
    finally:
        peer.stop()
    (out / "summary.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        f"# OpenAI chat: dragoman on llama.cpp against llama-server ({IN} tokens in, {OUT} out)",
        "",
        "`python benchmarks/llamacpp/chat_peer.py " + str(out) + "` (vLLM's `bench serve "
        "--backend openai-chat`, random dataset, ignore_eos, greedy); same GGUF, "
        f"{SLOTS} slots, context 2048 a slot, threads as the host's plan; one server after the "
        "other. Host: see cpu-flags.txt.",
        "",
        "| clients | server | output tok/s | TTFT p50 ms | TPOT p50 ms | latency p50 ms | failed |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in PROMPTS:
        for name, by in results.items():
            r = by[f"c{c}"]
            lines.append(
                f"| {c} | {name} | {r['output_throughput']} | {r['median_ttft_ms']} | "
                f"{r['median_tpot_ms']} | {r['median_e2el_ms']} | {r['failed']} |"
            )
        d, p = results["dragoman"][f"c{c}"], results["llama-server"][f"c{c}"]
        lines.append(
            f"| {c} | dragoman / llama-server | "
            f"{d['output_throughput'] / p['output_throughput']:.2f}x | "
            f"{d['median_ttft_ms'] / p['median_ttft_ms']:.2f}x | "
            f"{d['median_tpot_ms'] / p['median_tpot_ms']:.2f}x | "
            f"{d['median_e2el_ms'] / p['median_e2el_ms']:.2f}x | |"
        )
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
