"""How often the reply check (dragoman.service.validate) calls a reply wrong: on the eval's
references (right by construction: every flag is a false alarm) and on committed outputs
(against the eval's own wrong-language verdicts). No engine.

    python benchmarks/validation/false_alarms.py \
        benchmarks/results/eval-avx512bf16-2core/dragoman/eval.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from dragoman.detect import LanguageDetector
from dragoman.models.catalogue import QWEN25_LANGUAGES
from dragoman.service.validate import Validator

PAIRS = ("en-fr", "en-de", "en-es", "en-ko")


def main() -> None:
    validator = Validator(LanguageDetector(QWEN25_LANGUAGES))
    for path in sys.argv[1:]:
        items = [i for i in json.loads(Path(path).read_text())["items"] if i["id"][:5] in PAIRS]
        refs: Counter[str] = Counter()
        outs: Counter[str] = Counter()
        agree = Counter[str]()
        for i in items:
            target = i["id"][3:5]
            if (f := validator.check(i["source"], i["reference"], target)) is not None:
                refs[f] += 1
                print(f"  reference flagged {f}: {i['id']} {i['reference'][:70]!r}")
            f = validator.check(i["source"], i["text"] or "", target)
            if f is not None:
                outs[f] += 1
            if f == "language" or i["wrong_language"]:
                key = f"check={f == 'language'} eval={bool(i['wrong_language'])}"
                agree[key] += 1
                print(f"  output {key}: {i['id']} {(i['text'] or '')[:70]!r}")
        print(
            f"{path}: {len(items)} items; references flagged {dict(refs)}; "
            f"outputs flagged {dict(outs)}; language vs eval {dict(agree)}"
        )


if __name__ == "__main__":
    main()
