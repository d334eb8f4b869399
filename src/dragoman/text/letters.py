"""Whether a text has letters, at C speed: the regex finds the alphanumerics that are not
decimal digits or `_` (a letter, or a rare numeric such as `²`), and each found is confirmed
with `str.isalpha`, so the answer is exactly `any(c.isalpha() for c in text)`."""

from __future__ import annotations

import re

_CANDIDATE = re.compile(r"[^\W\d_]")


def has_letters(text: str) -> bool:
    found = _CANDIDATE.search(text)
    while found is not None:  # nearly always a letter at the first try
        if found.group().isalpha():
            return True
        found = _CANDIDATE.search(text, found.end())
    return False
