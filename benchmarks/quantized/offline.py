"""Offline decode speed of one model directory at one dtype: vLLM's LLM.generate, eager, both
cores, 64 output tokens per sequence (ignore_eos), batches of 1 and 16, after one warm-up batch.

    python benchmarks/quantized/offline.py MODEL_DIR DTYPE [BATCHES]

Prints one French translation (a sanity check) and one JSON line per batch size. Run it under
`flock /tmp/dragoman-engine.lock` on a shared machine; with benchmarks/avx2 on PYTHONPATH and
ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 it imitates an AVX2-only host.
"""

import os, sys, time, json
os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "0-1")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
def main():
    from vllm import LLM, SamplingParams
    model, dtype = sys.argv[1], sys.argv[2]
    batches = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "1,16").split(",")]
    t0 = time.time()
    llm = LLM(model=model, dtype=dtype, enforce_eager=True, max_model_len=1024, max_num_seqs=16)
    print("load_s", round(time.time() - t0, 1), flush=True)
    tok = llm.get_tokenizer()
    msgs = [{"role": "user", "content": "Translate from English to French. Reply with the translation only.\n\nThe weather is nice today and we are going to the beach with our friends."}]
    prompt = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    out = llm.generate([prompt], SamplingParams(max_tokens=64, temperature=0))
    print("fr:", out[0].outputs[0].text, flush=True)
    for b in batches:
        sp = SamplingParams(max_tokens=64, temperature=0, ignore_eos=True)
        llm.generate([prompt] * b, sp)  # warm
        t = time.time(); llm.generate([prompt] * b, sp); dt = time.time() - t
        print(json.dumps({"model": model, "dtype": dtype, "batch": b, "tok_s": round(b * 64 / dt, 1)}), flush=True)
if __name__ == "__main__":
    main()
