"""Two `dragoman eval` runs of eval-retry.sh side by side (by default `off` and `on`, or the
two folder names given): chrF and wrong-language outputs per pair, retries by reason and
outcome, and the engine's work from the server's /metrics (vLLM's own counters where the engine
is vLLM, dragoman's per-text counters on every engine).

    python benchmarks/validation/summarize.py benchmarks/results/eval-avx512bf16-2core/validation
    python benchmarks/validation/summarize.py benchmarks/results/eval-avx2-2core/validation \
        on-greedy on-t07
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
    a, b = sys.argv[2:4] if len(sys.argv) > 3 else ("off", "on")
    runs = {m: json.loads((root / m / "eval.json").read_text()) for m in (a, b)}
    print(f"| pair | chrF {a} | chrF {b} | wrong language {a} | wrong language {b} |")
    print("|---|---|---|---|---|")
    pairs = sorted(
        {s["pair"] for s in runs[b]["summary"]}, key=["en-fr", "en-de", "en-es", "en-ko"].index
    )
    for pair in pairs:
        row = [pair]
        cells = {}
        for m, run in runs.items():
            all_ = next(s for s in run["summary"] if s["pair"] == pair and s["kind"] == "all")
            cells[m] = (all_["chrf"], f"{all_['wrong_language']}/{all_['language_checked']}")
        row += [str(cells[a][0]), str(cells[b][0]), cells[a][1], cells[b][1]]
        print("| " + " | ".join(row) + " |")
    print()
    for m in (a, b):
        text = (root / m / "metrics.txt").read_text()
        retries = {
            line.split("{", 1)[1].split("}", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("dragoman_validation_retries_total{")
        }
        if "vllm:request_success_total" not in text:
            out = metric(text, 'dragoman_translation_tokens_total{direction="output"}')
            given = metric(text, 'dragoman_translation_tokens_total{direction="input"}')
            engine = metric(text, "dragoman_translation_inference_seconds_sum")
            print(
                f"{m}: elapsed {runs[m]['meta']['elapsed_s']} s; output tokens {out:g}, input "
                f"{given:g}, engine time (sum of per-text inference seconds) {engine:.1f} s; "
                f"retries {retries}"
            )
            continue
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
