"""In-process probe of the real engine: leaks of the insist note, and repetitive inputs."""
import asyncio, json, sys, time
from dragoman.settings import EngineSettings
from dragoman.engine.vllm_engine import open_vllm
from dragoman.engine import prompts as P
from dragoman.engine.prompts import Insisted, insist_note
from dragoman.models.catalogue import QWEN25_LANGUAGES
from dragoman.detect import LanguageDetector
from dragoman.service.validate import Validator
sys.path.insert(0, __import__("os").path.dirname(__file__))
from texts import JOBS  # noqa

ORIG = P.chat_messages

def v_system(text, source, target, terms=()):
    note = getattr(text, "note", "")
    msgs = ORIG(str(text), source, target, terms)
    if note:
        msgs[0] = {"role": "system", "content": msgs[0]["content"] + note}
    return msgs

def v_turn(text, source, target, terms=()):
    note = getattr(text, "note", "")
    msgs = ORIG(str(text), source, target, terms)
    if note:
        msgs[-1:-1] = [{"role": "user", "content": note.strip()}, {"role": "assistant", "content": "OK."}]
    return msgs

def v_midsys(text, source, target, terms=()):
    note = getattr(text, "note", "")
    msgs = ORIG(str(text), source, target, terms)
    if note:
        msgs[-1:-1] = [{"role": "system", "content": note.strip()}]
    return msgs

VARIANTS = {"current": ORIG, "system": v_system, "turn": v_turn, "midsys": v_midsys}

async def run_all(tr, items):
    return await asyncio.gather(*(tr.translate(t, s, g) for t, s, g in items))

async def leak(tr, out):
    val = Validator(LanguageDetector(QWEN25_LANGUAGES))
    t0 = time.monotonic()
    firsts = await run_all(tr, JOBS)
    print("firsts", time.monotonic() - t0, flush=True)
    rows = []
    for (t, s, g), f in zip(JOBS, firsts):
        rows.append({"text": t, "source": s, "target": g, "first": f.text, "first_finish": f.finish_reason,
                     "first_check": val.check(t, f.text, g, s)})
    json.dump(rows, open(out, "w"), ensure_ascii=False, indent=1)
    for kind in ("language", "prompt"):
        for vname in sys.argv[2].split(","):
            P.chat_messages = VARIANTS[vname]
            items = [Insisted(r["text"], insist_note(r["text"], r["target"], kind)) for r in rows]
            t0 = time.monotonic()
            outs = await run_all(tr, [(i, r["source"], r["target"]) for i, r in zip(items, rows)])
            print(vname, kind, time.monotonic() - t0, flush=True)
            for r, o in zip(rows, outs):
                r[f"{vname}/{kind}"] = o.text
                r[f"{vname}/{kind}/check"] = val.check(r["text"], o.text, r["target"], r["source"])
            P.chat_messages = ORIG
            json.dump(rows, open(out, "w"), ensure_ascii=False, indent=1)
    json.dump(rows, open(out, "w"), ensure_ascii=False, indent=1)

KO1 = "비가 오고 바람이 불었다, " * 20
KO2 = ", ".join(["그는 창문을 열고 밖을 보았다"] * 20) + "."
REP = [("na" * 400, "en", "fr"), (KO1, "ko", "ja"), (KO2, "ko", "ja"), ("ha " * 150, "en", "fr"),
       ("Go team! " * 30, "en", "fr")]

async def rep(tr, settings, out):
    rows = []
    for rp in (1.05, 1.0):
        for window in (16, 0):
            t2 = tr.with_settings(settings.model_copy(update={"repetition_penalty": rp, "repeat_window": window}))
            if rp == 1.05 and window == 16:
                print("params", t2._base_params, flush=True)
            outs = await run_all(t2, REP)
            for (t, s, g), o in zip(REP, outs):
                ids, mt = t2.prompts.build(t, s, g)
                rows.append({"rp": rp, "window": window, "src": t[:40], "pair": f"{s}-{g}", "chars_in": len(t),
                             "max_tokens": mt, "finish": o.finish_reason, "out_tokens": o.output_tokens,
                             "chars_out": len(o.text), "text": o.text})
                print(rp, window, s, g, o.finish_reason, o.output_tokens, len(o.text), repr(o.text[:300]), flush=True)
    json.dump(rows, open(out, "w"), ensure_ascii=False, indent=1)

async def main():
    settings = EngineSettings()
    async with open_vllm(settings, QWEN25_LANGUAGES) as tr:
        if sys.argv[1] == "both":
            await rep(tr, settings, "repetitive.json")
            await leak(tr, sys.argv[3])
        elif sys.argv[1] == "leak":
            await leak(tr, sys.argv[3])
        elif sys.argv[1] == "rep":
            await rep(tr, settings, sys.argv[2])

if __name__ == "__main__":
    asyncio.run(main())
