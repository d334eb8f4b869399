"""Placeholders in plain text (`{name}`, `%s`, `%(name)s`, `%1$s`, `{{var}}`, `${var}`,
`:emoji:`, URLs, e-mails, `[X1X]`, inline code, i18next `<0>`, fenced code, long base64 or hex
runs, and in plain text what reads as our own inline markers `<g1>`...) are masked before the model
sees the text and restored after, each exactly once: the model gets `{1}`, `{2}`, ..., which it
leaves alone far more reliably than the originals (a 0.5B model "translates" `%(name)s` into
`%(nom)s`). A reply that loses a token gets it back at the same relative position; a token it
repeats or invents is dropped. Every repair is reported."""

from __future__ import annotations

import re
from typing import NamedTuple

from dragoman.text.letters import unused_private_char

# The letters of scripts written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar;
# Korean's particles): word characters, which a placeholder stands right beside
# ("密钥是abc...XYZ请保存", "邮箱是a@b.com请联系", "你好%s欢迎"); a Latin, Cyrillic or Greek letter
# there is a word the placeholder is part of. Their punctuation ends a URL as ours does.
_UNSPACED = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3005-\u3007\u3040-\u30ff"
    "\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
_WIDE_PUNCTUATION = "\u3000-\u3004\u3008-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_LETTER = rf"[^\W{_UNSPACED}]"  # a word character of a spaced script
# A URL's characters: such a letter only where no ASCII letter or digit is right before it (a
# path's /北京 is the URL's, the words after https://example.com了解更多 are not).
_URL_SCRIPT = rf"(?<![A-Za-z0-9])[{_UNSPACED}]"
_URL = (
    r"(?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://|www\.)"
    rf"""(?:[^\s<>"'{_UNSPACED}{_WIDE_PUNCTUATION}]|{_URL_SCRIPT})*"""
    rf"""(?:[^\s<>"'.,;:!?)\]{_UNSPACED}{_WIDE_PUNCTUATION}]|{_URL_SCRIPT})"""
)
_ADDRESS = rf"(?:{_LETTER}|[.+-])"
# Where an address starts, right after its first character: none of them before it (looked
# for after that character, which most positions of a text fail at once)
_STARTED = rf"(?<!{_LETTER}.)(?<![.+-].)"
_LABEL = rf"(?:{_LETTER}++|-++)++"  # runs of one class at a time: sre's quick loop
_DATA = rf"""[^\s<>"'{_UNSPACED}{_WIDE_PUNCTUATION}]"""  # base64 holds none of them
# Longest and most specific first (a URL may hold '%s' or '@'; {{var}} holds {var}). A URL's
# scheme and an address start only where their run of characters starts: tried at every
# letter of every word, they cost a scan of the rest of the word each time.
# Inline code (`a`, ``a`b``) is found apart, as fenced code is (`code_spans`): in the pattern,
# each backtick run with no closing run of its length scanned the rest of its line (a line of
# runs of 1, 2, 3... backticks, 100 KB, took 0.48 s, holding the GIL).
# printf's flags, width and precision are possessive: a flag `0` is a width digit too, and a
# `%` before a long run of zeros was otherwise tried at every split of the run.
_BASE = rf"""
    {_URL}                                      # URLs
    | data:(?<!{_LETTER}data:)(?<![.+-]data:)[\w.+-]+/[\w.+-]+(?:;[^\s,;<>"']+)*,{_DATA}+  # data:
    | {_ADDRESS}{_STARTED}(?:{_LETTER}++|[.+-]++)*+@{_LABEL}(?:\.{_LABEL})++  # e-mail addresses
    | \{{\{{[^{{}}]*\}}\}} | \$\{{[^{{}}]*\}}             # {{{{var}}}} ${{var}}
    | %\([\w.-]++\)[-+\#0]*+\d*+(?:\.\d++)?+[sdifuxXoeEgGcr]   # %(name)s
    | %\d++\$[-+\#0]*+\d*+(?:\.\d++)?+[sdifuxXoeEgGc@]        # %1$s
    | %[-+\#0]*+\d*+(?:\.\d++)?+(?:ll|l|h)?[sdifuxXoeEgGc@](?!{_LETTER})  # %s %-5.2f (not %success)
    | \{{[\w.:-]*\}}                              # {{name}} {{0}} (not ICU plural: it holds text)
    | :[a-z0-9_+-]+:                            # :emoji_name:
    | \[[A-Z]\d+[A-Z]\]                         # [X1X] (Weblate's masks)
    | </?\d+/?>                                 # i18next <0></0> <1/>
"""
# A run of 40+ base64 or hex characters with a digit and a letter (a key, an encoded image):
# never a word, and thousands of them took the model minutes. Tried only in a text that has
# such a run (`_LONG_RUN`): tried at every word, it made a 10 KB text's mask twice as slow.
# Not words joined by hyphens, each letters, digits or both in turn (`40-Tonnen-Lkw-...-ab-2025`,
# `state-of-the-art-...-v2`, `1990s`, `MP3`, `H2O`): a hyphenated compound is text to translate.
# Its edges are no word character, but for the letters of scripts written without spaces
# (Chinese, Japanese, Thai; Korean's particles), which a key stands right beside
# ("密钥是abc...XYZ请保存"): a Latin, Cyrillic or Greek letter there is a word the run is part of.
_WORD = r"(?>[A-Za-z]*[0-9]*[A-Za-z]*)"
_EDGE = rf"[^\W{_UNSPACED}]|[+/=-]"
_RUN = rf"""
    | (?<!{_EDGE}) (?=[A-Za-z+/_-]*[0-9]) (?=[0-9+/_-]*[A-Za-z])
      (?!{_WORD}(?:-{_WORD})+(?!{_EDGE}))
      [A-Za-z0-9+/_-]{{40,}}={{0,2}}(?!{_EDGE})
"""
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_-]{40}")
# In plain text, also what reads as our own inline markers (markup/markers.py).
_LOOKALIKES = r"""
    | (?i:<\s*+/?+\s*+[gx]\s*+\d{1,6}+\s*+/?+\s*+>)      # <g1> </g1> <x2/>
"""
_PATTERNS = {
    (markers, runs): re.compile(
        _BASE + (_LOOKALIKES if markers else "") + (_RUN if runs else ""), re.VERBOSE | re.DOTALL
    )
    for markers in (False, True)
    for runs in (False, True)
}
_PLACEHOLDER = _PATTERNS[False, True]
_PLAIN = _PATTERNS[True, True]
# What every placeholder holds: most sentences have none, and this finds that at C speed (few
# first characters: sre skips to them). `True` (plain text, or any text without a `<`) also
# finds a digit, which a long run holds; a markup unit's own <g1> holds one too, and must not
# send every unit with an inline tag through the whole pattern: there (`False`) long runs are
# looked for on their own.
_MAYBE = {
    False: re.compile(r"[`@{%\[]|~~~|:[a-z0-9_+/-]|www\.|</?\d"),
    True: re.compile(r"[`@{%\[<0-9]|~~~|:[a-z0-9_+/-]|www\."),
}
_TOKEN = re.compile(r"( ?)\{(\d+)\}")
_NUL_MARKED = re.compile("\x00(\\d+)\x00")


class Masked(NamedTuple):
    text: str
    """The text with each placeholder replaced by {1}, {2}, ..."""
    originals: tuple[str, ...]

    def unmask(self, reply: str) -> tuple[str, list[str]]:
        """The reply with the placeholders back, and what had to be repaired."""
        if not self.originals:
            return reply, []
        repairs: list[str] = []
        seen: set[int] = set()
        # Restored tokens stand as <mark>n<mark> until the end; the mark is a character the
        # reply does not hold (a text may hold NULs and digits of its own).
        if "\x00" not in reply:
            mark, marks = "\x00", _NUL_MARKED
        else:
            mark = unused_private_char(reply) or "\x00"
            marks = re.compile(f"{mark}(\\d+){mark}")

        def restore(m: re.Match[str]) -> str:
            n = int(m.group(2))
            if not 1 <= n <= len(self.originals):
                repairs.append(f"invented placeholder {m.group(0).strip()} removed")
                return ""  # with the space before it
            if n in seen:
                repairs.append(f"repeated placeholder {self.originals[n - 1]!r} removed")
                return ""
            seen.add(n)
            return m.group(1) + mark + str(n) + mark

        marked = _TOKEN.sub(restore, reply)
        for n in range(1, len(self.originals) + 1):
            if n in seen:
                continue
            # Back at the same relative position as in the source, at a word boundary.
            where = self.text.find("{" + str(n) + "}") / max(1, len(self.text))
            at = round(where * len(marked))
            space = marked.rfind(" ", 0, at)
            at = 0 if at == 0 else (space + 1 if space >= 0 else len(marked))
            token = mark + str(n) + mark
            if at < len(marked) and not marked[at].isspace():
                token += " "  # before a word
            elif at == len(marked) and marked and not marked[-1].isspace():
                token = " " + token  # at the end
            marked = marked[:at] + token + marked[at:]
            repairs.append(f"lost placeholder {self.originals[n - 1]!r} put back")
        out = marks.sub(lambda m: self.originals[int(m.group(1)) - 1], marked)
        return out, repairs


# A line that may open or close a block of fenced code: indent, a run of 3+ backticks or
# tildes, then the rest of the line (an info string on an opening fence).
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)


def fences(text: str) -> list[tuple[int, int]]:
    """The blocks of fenced code in `text`, (start, end) from the opening fence's first
    backtick (or tilde) to the end of the closing fence's run, in order. As Markdown: a fence
    opens a line, and a line of only a fence of the same character, at least as long, closes
    it. Unlike CommonMark, a fence never closed is no block: one stray fence would have kept
    the rest of the text from the model. Linear: a fence is closed when a later closing
    line of its character is at least as long (known for all of them in one pass back)."""
    if "```" not in text and "~~~" not in text:
        return []
    lines = list(_FENCE_LINE.finditer(text))
    if not lines:
        return []
    # The longest closing fence of each character at or after each fence line.
    longest: list[dict[str, int]] = [{}] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        run, rest = lines[i].group(1), lines[i].group(2)
        here = dict(longest[i + 1])
        if not rest.strip() and len(run) > here.get(run[0], 0):
            here[run[0]] = len(run)
        longest[i] = here
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        run, rest = lines[i].group(1), lines[i].group(2)
        opens = not (run[0] == "`" and "`" in rest)  # a backtick fence's info has none
        if not opens or longest[i + 1].get(run[0], 0) < len(run):
            i += 1
            continue
        j = i + 1
        while not (
            lines[j].group(1)[0] == run[0]
            and len(lines[j].group(1)) >= len(run)
            and not lines[j].group(2).strip()
        ):
            j += 1
        out.append((lines[i].start(1), lines[j].end(1)))
        i = j + 1
    return out


_TICKS = re.compile(r"`+")


def code_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The inline code in text[start:end], (start, end) in order: as Markdown, a run of
    backticks opens one that the next run of the same length on its line closes (`a`,
    ``a`b``). Linear: each run's next one of its length is known from one pass back."""
    end = len(text) if end is None else end
    if text.find("`", start, end) < 0:
        return []
    runs = [m.span() for m in _TICKS.finditer(text, start, end)]
    closer: list[int | None] = [None] * len(runs)
    later: dict[int, int] = {}  # a run's length -> the next run of it on the same line
    for i in range(len(runs) - 1, -1, -1):
        a, b = runs[i]
        if i + 1 < len(runs) and text.find("\n", b, runs[i + 1][0]) >= 0:
            later = {}
        closer[i] = later.get(b - a)
        later[b - a] = i
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        j = closer[i]
        if j is None:
            i += 1
            continue
        out.append((runs[i][0], runs[j][1]))
        i = j + 1
    return out


def _long_run(text: str) -> bool:
    return len(text) >= 40 and _LONG_RUN.search(text) is not None


def _matches(text: str, markers: bool) -> list[tuple[int, int]]:
    """The spans of `text`'s fenced blocks and, outside them, of its other placeholders (and
    our markers' lookalikes where `markers`), in order."""
    # A long run is looked for on its own: any letter may start one, and in one pattern with
    # the rest it made sre try every position (a 10 KB text's mask took 30% longer).
    if markers or "<" not in text:  # no marker's digit: _MAYBE finds a long run's digit
        if not _MAYBE[True].search(text):
            return []
        runs = _long_run(text)
    else:  # a markup unit's markers hold digits: a long run is looked for first
        runs = _long_run(text)
        if not runs and not _MAYBE[False].search(text):
            return []
    pattern = _PATTERNS[markers, runs]
    out: list[tuple[int, int]] = []
    at = 0
    for a, b in [*fences(text), (len(text), len(text))]:
        for c, d in [*code_spans(text, at, a), (a, a)]:
            out += [m.span() for m in pattern.finditer(text, at, c)]
            if c < d:
                out.append((c, d))
            at = d
        if a < b:
            out.append((a, b))
        at = b
    return out


def spans(text: str) -> list[tuple[int, int]]:
    """Where `text`'s placeholders are, (start, end) in order: a cut inside one leaves each
    part a piece of it that is no placeholder, sent to the model as words."""
    return _matches(text, False)


def mask(text: str, markup: bool = False) -> Masked:
    """`text` with its placeholders (and any literal {n}) replaced by numbered tokens. In
    plain text (not `markup`, a unit of markup taken apart, whose `<g1>` and `<x2/>` are its
    inline markers) the lookalikes of those markers are masked too: they are the text's own,
    and a model told about markers moves or drops them."""
    found = _matches(text, not markup)
    if not found:
        return Masked(text, ())
    originals: list[str] = []
    parts: list[str] = []
    at = 0
    for a, b in found:
        originals.append(text[a:b])
        parts += [text[at:a], "{" + str(len(originals)) + "}"]
        at = b
    parts.append(text[at:])
    return Masked("".join(parts), tuple(originals))
