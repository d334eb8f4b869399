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


_PRIVATE_USE = (range(0xE000, 0xF900), range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE))


def unused_private_char(text: str) -> str | None:
    """A private-use character `text` does not hold (None if it holds them all): a mark our
    own code can put in a text and find again without mistaking the text's characters for it."""
    for block in _PRIVATE_USE:
        for code in block:
            if chr(code) not in text:
                return chr(code)
    return None
