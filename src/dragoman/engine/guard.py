"""The guard against degenerate repetition, fed tokens as they are generated.

Looping greedy output on small models repeats units from one token ("빠르게 빠르게 ...") to a
whole sentence. Rescanning the output at every step costs O(length) per token; this keeps, for
each period p, how long the tail has been periodic, so each token costs O(max_unit) in numpy
whatever the output length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Longest unit and text `source_copies` looks at: enough for a repeated line, bounded work.
SOURCE_MAX_UNIT = 80
SOURCE_MAX_CHARS = 100_000


class RepetitionGuard:
    """Watches one output grow. `feed` returns, the first time the tail is one unit of
    1..max_unit tokens repeated back to back at least `min_copies` times over at least
    `min_span` tokens, the index at which to cut so only the first `keep` copies of the run are
    kept (at most min_copies - 1)."""

    def __init__(self, min_span: int, max_unit: int, min_copies: int = 3, keep: int = 1) -> None:
        self.tokens: list[int] = []
        self.cut: int | None = None
        self._keep = max(1, min(keep, max(2, min_copies) - 1))
        self._on = min_span >= 2 and max_unit > 0
        unit = max(1, max_unit)
        periods = np.arange(1, unit + 1, dtype=np.int64)
        # A run of r matches at period p is a periodic tail of r + p tokens: (r + p) / p copies.
        self._need = np.maximum((max(2, min_copies) - 1) * periods, min_span - periods)
        self._run = np.zeros(unit, dtype=np.int64)
        # Ring of the last `unit` tokens written twice, so that a contiguous slice reads
        # t[n-1], t[n-2], ..., t[n-unit]: the token each period compares the new one with.
        # -1 (no token id) stands for positions before the output's start.
        self._ring = np.full(2 * unit, -1, dtype=np.int64)
        self._unit = unit

    def feed(self, new_tokens: Sequence[int]) -> int | None:
        """Add the tokens generated since the last call. Token by token, so the answer does
        not depend on how the engine groups its outputs."""
        start = len(self.tokens)
        self.tokens.extend(new_tokens)
        if not self._on or self.cut is not None:
            return None
        unit, ring, run, need = self._unit, self._ring, self._run, self._need
        for n in range(start, len(self.tokens)):
            token = self.tokens[n]
            pos = -n % unit
            last = (pos + 1) % unit  # where the slice of the tokens before this one starts
            same = ring[last : last + unit] == token
            run += 1
            run *= same
            ring[pos] = ring[pos + unit] = token
            hit = run >= need
            if hit.any():
                period = int(hit.argmax())  # index p-1 of the smallest period that loops
                # Keep `keep` periods from where the run starts. The first copy may be the unit
                # rotated when the text before ends like the unit ("X. He ran. He ran." keeps
                # "X. He ran").
                self.cut = n + 1 - int(run[period]) + (self._keep - 1) * (period + 1)
                return self.cut
        return None


def guard_for(text: str, min_span: int, max_tokens: int) -> RepetitionGuard:
    """The guard of one translation, the same on every engine: units up to a long sentence.
    Repetition the source itself has (3+ copies: "ha ha ha ha"; doubled letters do not count)
    may come through with two copies to spare, and a loop past that is cut back to as many
    copies as the source has: the model does not stop where its source does ("Go team! " x 30
    went on to the output budget), and cut to one copy it had lost the source's own repeats."""
    copies = source_copies(text)
    if copies < 3:
        return RepetitionGuard(min_span, min(256, max_tokens // 3))
    return RepetitionGuard(min_span, min(256, max_tokens // 3), copies + 2, keep=copies)


def source_copies(text: str) -> int:
    """Most back-to-back copies of any unit of 1..80 characters in `text` (1 when nothing
    repeats), counting only units with a letter, so "...." and "1000" give 1. A last copy
    missing less than half of itself (its separator, say) still counts: "ha ha ha ha" gives 4.
    A translation may repeat what its source repeats; the guard is built to allow that."""
    chars = np.frombuffer(text[:SOURCE_MAX_CHARS].encode("utf-32-le"), dtype=np.uint32)
    size = len(chars)
    letters = np.concatenate(([0], np.cumsum([c.isalpha() for c in text[:SOURCE_MAX_CHARS]])))
    best = 1
    for period in range(1, min(SOURCE_MAX_UNIT, size // 2) + 1):
        same = chars[period:] == chars[:-period]
        # Runs of matches: a run of r from j makes text[j : j + r + period] periodic, that is
        # (r + period) / period copies, rounded to the nearest (halves down) once two are whole.
        edges = np.diff(np.concatenate(([0], same.view(np.int8), [0])))
        starts = np.flatnonzero(edges == 1)
        lengths = np.flatnonzero(edges == -1) - starts
        copies = (2 * (lengths + period) + period - 1) // (2 * period)
        keep = (copies > best) & (lengths >= period)
        if not keep.any():
            continue
        starts, lengths, copies = starts[keep], lengths[keep], copies[keep]
        wordy = letters[starts + lengths + period] > letters[starts]
        if wordy.any():
            best = int(copies[wordy].max())
    return best
