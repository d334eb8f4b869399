"""Per-text language detection with lingua, restricted to the languages a model serves.

lingua's models are compiled into its wheel: nothing is downloaded at run time. Built only for
the served languages (about 450 MB preloaded for 19, against 1.25 GB for all 75), in
high-accuracy mode, which is the most accurate on short UI strings (benchmarks/detect/README.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.detect._clean import has_letters, script_language, strip_non_language
from dragoman.errors import ConfigError

MAX_CANDIDATES = 3
# Long texts are detected on their start: accuracy is already flat at 100 characters while
# lingua's time grows with the length (benchmarks/detect/README.md, "Sample length"); 400 keeps
# a few sentences of margin for texts that open with names or a title, for about 0.35 ms.
SAMPLE_CHARS = 400
HEAD_CHARS = 8 * SAMPLE_CHARS
"""A longer text is cleaned on its start when that gives a sample with letters: stripping all
of a 60 KB text took 7.7 ms (holding the GIL) for the 400 characters lingua reads; a /detect
of 64 such texts spent 0.86 of its 0.92 s there."""


@dataclass(frozen=True)
class Candidate:
    language: str
    """ISO 639-1 code."""
    confidence: float
    """0-100, one decimal."""


@dataclass(frozen=True)
class Detection:
    candidates: tuple[Candidate, ...] = ()
    """Best first, at most three, only languages the detector was built for; empty when the
    text has no letters or none the detector knows."""
    has_letters: bool = True
    """False for texts of numbers, emoji, URLs or placeholders only: those are returned
    unchanged rather than translated."""

    @property
    def language(self) -> str | None:
        return self.candidates[0].language if self.candidates else None


NO_LETTERS = Detection(has_letters=False)


def _clean(text: str) -> str:
    """What the detector reads of `text` (strip_non_language). A long text's start, cut at a
    space, where it holds more than a sample with letters; else the whole text (a page that
    opens with a long run of links or numbers)."""
    if len(text) > HEAD_CHARS:
        cut = text.rfind(" ", HEAD_CHARS // 2, HEAD_CHARS)
        head = strip_non_language(text[: cut if cut > 0 else HEAD_CHARS])
        if len(head) > SAMPLE_CHARS and has_letters(head):
            return head
    return strip_non_language(text)


def _sample(text: str) -> str:
    """The leading SAMPLE_CHARS of a long text, cut at a space when there is one."""
    if len(text) <= SAMPLE_CHARS:
        return text
    head = text[:SAMPLE_CHARS]
    cut = head.rfind(" ", SAMPLE_CHARS // 2)
    return head[:cut] if cut > 0 else head


class LanguageDetector:
    """Built from the ISO 639-1 codes the model serves; an unknown code is a ConfigError.
    Construction is cheap; `load()` builds lingua's detector (seconds, hundreds of MB) and is
    safe to call from several threads, once or many times. Detection is thread-safe."""

    def __init__(self, codes: Sequence[str]) -> None:
        from lingua import IsoCode639_1

        self.codes = tuple(dict.fromkeys(code.lower() for code in codes))
        if not self.codes:
            raise ConfigError("language detection needs at least one language")
        self._iso: list[Any] = []
        for code in self.codes:
            try:
                self._iso.append(IsoCode639_1.from_str(code))
            except ValueError:
                raise ConfigError(
                    f"language detection: no model for language code {code!r} (ISO 639-1)"
                ) from None
        self._served = frozenset(self.codes)
        self._lingua: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._lingua is not None or len(self.codes) == 1

    def load(self) -> None:
        """Build lingua's detector with every model preloaded, so no request pays for it."""
        if self.loaded:
            return
        with self._lock:
            if self._lingua is None:
                from lingua import LanguageDetectorBuilder

                builder = LanguageDetectorBuilder.from_iso_codes_639_1(*self._iso)
                self._lingua = builder.with_preloaded_language_models().build()

    def detect(self, text: str) -> Detection:
        return self.detect_many([text])[0]

    def detect_many(self, texts: Sequence[str]) -> list[Detection]:
        """One Detection per text, each text judged alone (never the batch as a whole)."""
        out: list[Detection | None] = []
        todo: list[tuple[int, str]] = []
        for i, text in enumerate(texts):
            clean = _clean(text)
            if not has_letters(clean):
                out.append(NO_LETTERS)
            elif len(self.codes) == 1:
                out.append(Detection((Candidate(self.codes[0], 100.0),)))
            elif (code := script_language(clean, self._served)) is not None:
                out.append(Detection((Candidate(code, 100.0),)))
            else:
                out.append(None)
                todo.append((i, _sample(clean)))
        if todo:
            self.load()
            samples = [sample for _, sample in todo]
            # lingua lets go of the GIL while it works, and its parallel call spreads a batch
            # over the cores (1.8x per text for batches of 16 on 2 cores); one text skips
            # the thread pool.
            if len(samples) == 1:
                values = [self._lingua.compute_language_confidence_values(samples[0])]
            else:
                values = self._lingua.compute_language_confidence_values_in_parallel(samples)
            for (i, _), ranked in zip(todo, values, strict=True):
                out[i] = Detection(_candidates(ranked))
        return [d if d is not None else NO_LETTERS for d in out]


def _candidates(ranked: list[Any]) -> tuple[Candidate, ...]:
    """lingua's confidence values (highest first, summing to 1) -> the top candidates above 0."""
    best = []
    for value in ranked[:MAX_CANDIDATES]:
        confidence = round(value.value * 100, 1)
        if confidence > 0:
            best.append(Candidate(value.language.iso_code_639_1.name.lower(), confidence))
    return tuple(best)


def pooled(detections: Sequence[Detection], lengths: Sequence[int]) -> tuple[Candidate, ...]:
    """One ranking for a batch, as LibreTranslate's /detect answers a list of texts: each
    language's confidence averaged over the texts that name it, ranked by that average times
    those texts' characters (a long text outweighs a short one); at most three."""
    names: dict[str, list[float]] = {}  # language -> [confidence sum, texts, characters]
    for detection, length in zip(detections, lengths, strict=True):
        for c in detection.candidates:
            pool = names.setdefault(c.language, [0.0, 0, 0])
            pool[0] += c.confidence
            pool[1] += 1
            pool[2] += length
    ranked = sorted(names.items(), key=lambda kv: kv[1][0] / kv[1][1] * kv[1][2], reverse=True)
    return tuple(Candidate(code, round(total / texts, 1)) for code, (total, texts, _) in ranked)[
        :MAX_CANDIDATES
    ]
