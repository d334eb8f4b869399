"""The reply check on vs off, from two `dragoman eval` runs of eval-retry.sh: chrF and
wrong-language outputs per pair, retries by reason and outcome, and the engine's work (vLLM's
own counters from the server's /metrics).

    python benchmarks/validation/summarize.py benchmarks/results/eval-avx512bf16-2core/validation
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def metric(text: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


def main() -> None:
    root = Path(sys.argv[1])
    runs = {m: json.loads((root / m / "eval.json").read_text()) for m in ("off", "on")}
    print("| pair | chrF off | chrF on | wrong language off | wrong language on |")
    print("|---|---|---|---|---|")
    pairs = sorted(
        {s["pair"] for s in runs["on"]["summary"]}, key=["en-fr", "en-de", "en-es", "en-ko"].index
    )
    for pair in pairs:
        row = [pair]
        cells = {}
        for m, run in runs.items():
            all_ = next(s for s in run["summary"] if s["pair"] == pair and s["kind"] == "all")
            cells[m] = (all_["chrf"], f"{all_['wrong_language']}/{all_['language_checked']}")
        row += [str(cells["off"][0]), str(cells["on"][0]), cells["off"][1], cells["on"][1]]
        print("| " + " | ".join(row) + " |")
    print()
    for m in ("off", "on"):
        text = (root / m / "metrics.txt").read_text()
        retries = {
            line.split("{", 1)[1].split("}", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("dragoman_validation_retries_total{")
        }
        print(
            f"{m}: elapsed {runs[m]['meta']['elapsed_s']} s; vLLM requests "
            f"{metric(text, 'vllm:request_success_total'):g}, generated tokens "
            f"{metric(text, 'vllm:generation_tokens_total'):g}, prompt tokens "
            f"{metric(text, 'vllm:prompt_tokens_total'):g}, engine time (sum of request "
            f"inference seconds) {metric(text, 'vllm:request_inference_time_seconds_sum'):.1f} s, "
            f"e2e {metric(text, 'vllm:e2e_request_latency_seconds_sum'):.1f} s; retries {retries}"
        )


if __name__ == "__main__":
    main()
