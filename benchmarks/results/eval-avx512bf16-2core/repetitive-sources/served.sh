#!/usr/bin/env bash
# Start the worktree's server, probe repetitive sources, stop it. Run under the engine lock.
set -u
cd /tmp/wt-reply
export PYTHONPATH=/tmp/wt-reply/src
/work/main/.venv/bin/python -m dragoman serve --host 127.0.0.1 --port 8462 --cache-mib 0 > /tmp/reply-probe/live-server.log 2>&1 &
pid=$!
for i in $(seq 1 150); do curl -fs http://127.0.0.1:8462/ready >/dev/null 2>&1 && break; sleep 2; done
/work/main/.venv/bin/python - <<'PY'
import httpx, json
c = httpx.Client(base_url="http://127.0.0.1:8462", timeout=300)
cases = [("na" * 400, "en", "fr"), ("비가 오고 바람이 불었다, " * 20, "ko", "ja"),
         (", ".join(["그는 창문을 열고 밖을 보았다"] * 20) + ".", "ko", "ja"), ("Go team! " * 30, "en", "fr"),
         ("ha " * 150, "en", "fr")]
for text, s, t in cases:
    r = c.post("/v1/translate", json={"text": text, "source_lang": s, "target_lang": t}).json()
    it = r["translations"][0]
    print(json.dumps({"src": text[:30], "pair": f"{s}-{t}", "finish": it["finish_reason"], "out_tokens": it["output_tokens"], "chars": len(it["text"]), "text": it["text"][:160]}, ensure_ascii=False), flush=True)
m = c.get("/metrics").text
print("\n".join(l for l in m.splitlines() if l.startswith("dragoman_validation_retries_total")))
PY
kill -INT $pid; wait $pid
