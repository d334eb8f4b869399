"""The engine's own floor under the documents target (a 20-sentence document <= 2x its longest
sentence alone): the same 20 sentences and prompts as `dragoman bench --documents`, on vLLM's
offline engine with the host's plan (no HTTP, no server, no segmentation), each sentence alone
and then all 20 submitted at once. If the offline engine's ratio is above 2x, no scheduling in
the server can meet the target on this host.

Also the pure decode step: 32 forced tokens (`ignore_eos`) for 1 sequence and for 20.

    python benchmarks/documents/engine_floor.py --out OUT/engine-floor.json

Uses the real engine on both cores for about 2 minutes: run it alone.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import time
from pathlib import Path

ROUNDS = 3
STEP_TOKENS = 32


def _flags() -> str:
    text = Path("/proc/cpuinfo").read_text()
    return " ".join(sorted(set(re.findall(r"avx512[a-z_0-9]*|amx[a-z_0-9]*", text))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    from dragoman.bench.documents import SENTENCES
    from dragoman.engine.prompts import PromptBuilder
    from dragoman.engine.vllm_engine import engine_setup
    from dragoman.models.prepare import resolve_model
    from dragoman.settings import EngineSettings

    settings = EngineSettings()
    plan, kwargs = engine_setup(settings, resolve_model(settings.model, settings.data_dir))
    llm = LLM(**kwargs)
    try:
        prompts = PromptBuilder(
            llm.get_tokenizer(),
            settings.max_model_len,
            settings.output_ratio,
            settings.max_output_tokens,
        )

        def run(texts: list[str]) -> tuple[float, list[int]]:
            built = [prompts.build(t, "en", "fr") for t in texts]
            params = [
                SamplingParams(
                    temperature=0.0, repetition_penalty=settings.repetition_penalty, max_tokens=m
                )
                for _, m in built
            ]
            started = time.perf_counter()
            outs = llm.generate(
                [TokensPrompt(prompt_token_ids=ids) for ids, _ in built], params, use_tqdm=False
            )
            return time.perf_counter() - started, [len(o.outputs[0].token_ids) for o in outs]

        def steps(n: int) -> float:
            ids, _ = prompts.build(SENTENCES[0], "en", "fr")
            params = SamplingParams(temperature=0.0, max_tokens=STEP_TOKENS, ignore_eos=True)
            started = time.perf_counter()
            llm.generate([TokensPrompt(prompt_token_ids=ids)] * n, params, use_tqdm=False)
            return time.perf_counter() - started

        run(["Warm up the engine."])
        rounds = []
        for r in range(ROUNDS):
            sentences = [f"{s[:-1]} ({r + 1})." for s in SENTENCES]
            alone = [run([s]) for s in sentences]
            together, tokens = run(sentences)
            longest = max(a[0] for a in alone)
            rounds.append(
                {
                    "document_s": together,
                    "longest_alone_s": longest,
                    "sum_alone_s": sum(a[0] for a in alone),
                    "ratio": together / longest,
                    "output_tokens": tokens,
                    "longest_output_tokens": max(a[1][0] for a in alone),
                }
            )
            print(f"round {r + 1}: {together:.2f} s vs {longest:.2f} s: {together / longest:.2f}x")
        one = [steps(1) for _ in range(ROUNDS)]
        twenty = [steps(len(SENTENCES)) for _ in range(ROUNDS)]
    finally:
        llm.llm_engine.engine_core.shutdown()
    out = {
        "meta": {
            "cpu_flags": _flags(),
            "machine": platform.machine(),
            "cores": len(__import__("os").sched_getaffinity(0)),
            "engine": "vllm offline",
            "dtype": plan.dtype.value,
            "max_num_seqs": settings.max_num_seqs,
        },
        "rounds": rounds,
        "ratio_median": statistics.median(r["ratio"] for r in rounds),
        "forced_decode": {
            "tokens": STEP_TOKENS,
            "one_sequence_s": one,
            "twenty_sequences_s": twenty,
            "step_ratio_median": statistics.median(twenty) / statistics.median(one),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("ratio_median", "forced_decode")}, indent=2))


if __name__ == "__main__":
    main()
