"""The sentence CI caught w8a8 mistranslating: 32 concurrent "The museum has N paintings." en->fr
to a running dragoman server, as tests/integration/test_translate_live.py sends them, five rounds;
prints how many replies hold the number and "musée", and each one that does not.

    python benchmarks/quantized/museum.py [URL]      # default http://127.0.0.1:8177
"""

import asyncio
import sys

import httpx


async def main(url: str) -> None:
    numbers = [3 + 7 * i for i in range(32)]
    bodies = [
        {"text": f"The museum has {n} paintings.", "source_lang": "en", "target_lang": "fr"}
        for n in numbers
    ]
    async with httpx.AsyncClient(base_url=url, timeout=300) as c:
        for rnd in range(5):
            rs = await asyncio.gather(*(c.post("/v1/translate", json=b) for b in bodies))
            bad = []
            for n, r in zip(numbers, rs, strict=True):
                text = r.json()["translations"][0]["text"] if r.status_code == 200 else ""
                if str(n) not in text or "musée" not in text.lower():
                    bad.append((n, r.status_code, r.text[:200]))
            print(f"round {rnd}: {32 - len(bad)}/32 with the number and 'musée'", flush=True)
            for b in bad:
                print("  ", b, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8177"))
