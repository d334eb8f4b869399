"""Each engine reply checked before it is used, and asked again once when it fails. A reply
fails when the placeholders ({1}) or inline markers (<g1>, <x1/>) of its unit are not each there
exactly once, when it is read as another language than the target, or when it runs far longer
than its source. The second request carries an instruction that names what was wrong (in the
target language, for a wrong language); the better of the two replies by the same check is
kept (the first when both fail: the placeholders are then repaired as before). Measured:
benchmarks/README.md, "Reply validation"."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from dragoman.detect import LanguageDetector
from dragoman.engine.prompts import MARKERS, PLACEHOLDERS
from dragoman.eval.metrics import text_length, without_copied_names

Failure = Literal["placeholders", "language", "length"]
FAILURES: tuple[Failure, ...] = ("placeholders", "language", "length")

_TOKENS = re.compile(f"{PLACEHOLDERS.pattern}|{MARKERS.pattern}")

# A reply is called wrong-language only when the detector is sure and has enough to go on:
# measured on the eval's references, which are right by construction (false alarms), and its
# outputs (benchmarks/results/eval-avx512bf16-2core/validation/README.md).
MIN_LETTERS = 4
MIN_CONFIDENCE = 35.0
"""The other language's confidence (0-100) at least this..."""
MAX_TARGET = 15.0
"""...and the target's at most this."""
LONG_RATIO = 3.0
LONG_SLACK = 20
"""A reply longer than 3x its source plus 20 Latin-letter equivalents is suspect."""


def tokens(text: str) -> Counter[str]:
    return Counter(_TOKENS.findall(text))


def placeholders_broken(unit: str, reply: str) -> bool:
    """The reply lacks, repeats or invents a placeholder or marker of the unit."""
    return tokens(unit) != tokens(reply)


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def judged_text(unit: str, reply: str) -> str:
    """What the language check reads: the reply without its tokens and without the names and
    identifiers it copies from the unit ("UUID", `master_doc`), which belong to no language."""
    return without_copied_names(_TOKENS.sub(" ", reply), _TOKENS.sub(" ", unit))


def wrong_language(detector: LanguageDetector, unit: str, reply: str, target: str) -> bool:
    text = judged_text(unit, reply)
    if _letters(text) < MIN_LETTERS:
        return False
    found = detector.detect(text)
    if not found.candidates or found.language == target:
        return False
    best = found.candidates[0].confidence
    own = next((c.confidence for c in found.candidates if c.language == target), 0.0)
    return best >= MIN_CONFIDENCE and own <= MAX_TARGET


def too_long(unit: str, reply: str) -> bool:
    return text_length(reply) > LONG_RATIO * text_length(unit) + LONG_SLACK


@dataclass(frozen=True)
class Validator:
    detector: LanguageDetector

    def check(self, unit: str, reply: str, target: str) -> Failure | None:
        """What is wrong with `reply` as the translation of `unit` into `target`, or None.
        Blocking (the detector takes about a millisecond): call it off the event loop."""
        if placeholders_broken(unit, reply):
            return "placeholders"
        if wrong_language(self.detector, unit, reply, target):
            return "language"
        if too_long(unit, reply):
            return "length"
        return None


def rank(failure: Failure | None) -> int:
    """Lower is better: a valid reply; then broken placeholders (repaired afterwards, in the
    right language); then one too long; a reply in the wrong language is worst."""
    return {None: 0, "placeholders": 1, "length": 2, "language": 3}[failure]
