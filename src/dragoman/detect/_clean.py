"""What a detector should not see: URLs, e-mail addresses, digits, placeholders and markup say
nothing about the language around them, and every detector answers junk for them. Also the
scripts that name their language outright, so those texts skip the statistical model."""

from __future__ import annotations

import re
import unicodedata

from dragoman.text.letters import has_letters

# Longest and most specific first: a URL may hold an '@' or '%s', a {{var}} holds a {var}. A
# URL's scheme and an address start only where their run of characters starts: tried at every
# letter of a long word, each try scans the rest of it (quadratic: 8,000 letters took a second).
# Possessive where neighbours take the same character (printf's flag `0` and its width's
# digits): otherwise a `%` before a long run of zeros is tried at every split of the run.
_NOT_LANGUAGE = re.compile(
    r"""
    (?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://|www\.)\S+          # URLs
    | (?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+             # e-mail addresses
    | \{\{[^{}]*\}\} | \$\{[^{}]*\}            # {{var}} ${var}
    | \{[\w.:-]*\}                             # {name} {0}; not ICU {n, plural, ...}: it holds text
    | %(?:\([\w.-]++\)|\d++\$)?+[-+\#0]*+\d*+(?:\.\d++)?+[sdifuxXoeEgGcr@]  # printf: %s %1$s %(n)s
    | \[[A-Z]\d+[A-Z]\]                        # [X1X]-style tokens
    | </?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?> | </?\d+/?>   # tags, i18next <0></0>
    | &(?:\#\d+|\#x[0-9a-fA-F]+|[A-Za-z]+);    # character references
    | \d+
    """,
    re.VERBOSE | re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")


def strip_non_language(text: str) -> str:
    """`text` without URLs, e-mail addresses, placeholders, tags and digits, spaces collapsed."""
    return _SPACES.sub(" ", _NOT_LANGUAGE.sub(" ", text)).strip()


# What every pattern of _NOT_LANGUAGE but digits needs: without any, stripping removes only
# digits and spaces, which are no letters either.
_MAYBE_NOT_LANGUAGE = re.compile(r"[:/@{}%\[<&]|www\.", re.IGNORECASE)


def has_language(text: str) -> bool:
    """False for numbers, emoji, URLs, placeholders or markup alone: nothing in any language.
    Asked of every text and unit on a request's path; plain text (no character any pattern
    needs) is answered from its letters alone (~1 us against ~15 us for the full strip)."""
    if _MAYBE_NOT_LANGUAGE.search(text) is None:
        return has_letters(text)
    return has_letters(strip_non_language(text))


def _script(ch: str) -> str:
    """The script of one letter, as far as the shortcuts need it."""
    cp = ord(ch)
    if 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F:
        return "hangul"
    if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF66 <= cp <= 0xFF9F:
        return "kana"
    if 0x0E00 <= cp <= 0x0E7F:
        return "thai"
    if unicodedata.name(ch, "").startswith("CJK"):
        return "han"
    return "other"


def script_language(text: str, served: frozenset[str]) -> str | None:
    """The language a text's letters name outright, if it is served: all Hangul (with any
    Hanja) is Korean, kana with or without kanji is Japanese, all Thai is Thai. Any other letter
    (a Latin word inside, say) leaves the text to the model."""
    if max(text, default="\0") < "\u0e00":  # Latin, Cyrillic, Arabic...: no shortcut
        return None
    scripts = {_script(ch) for ch in set(text) if ch.isalpha()}  # each character once
    if "hangul" in scripts and scripts <= {"hangul", "han"} and "ko" in served:
        return "ko"
    if "kana" in scripts and scripts <= {"kana", "han"} and "ja" in served:
        return "ja"
    if scripts == {"thai"} and "th" in served:
        return "th"
    return None
