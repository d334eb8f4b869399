"""Strip what a chat model wraps around a translation ("Here is the translation:", quotes, a
closing note) without touching content. Each rule applies only when the source does not have
the same thing, so a source that is a quotation, a list under a heading or a note survives."""

from __future__ import annotations

import re

_COLON = r"\s*[:：]"
_LINE = r"[^\n:：]*"  # the rest of a phrase, up to its colon, on one line

# A label alone, at the very start: "Translation: Bonjour", "翻译：你好".
_LABEL = re.compile(
    r"(?:(?:[A-Z][a-z]+ )?translation(?: (?:in|into|to) [A-Z][a-z]+)?|traduction|übersetzung"
    r"|traducción|traduzione|tradução|vertaling|翻译|译文|翻訳|訳文|번역)" + _COLON + r"\s*",
    re.IGNORECASE,
)


# A sentence announcing the translation, in the languages models chat in. It must name the
# translation, so "Voici le plan : ..." (a translated "Here is the plan: ...") is content.
# Each phrase's line is looked through once for the word (a lookahead) and then taken whole up
# to its colon, possessive: a line of many such words or a long run of spaces was otherwise
# tried at every split (quadratic).
def _naming(opening: str, word: str) -> str:
    return rf"{opening}(?={_LINE}?{word}){_LINE}+"


_PREAMBLE = re.compile(
    r"(?:(?:sure|certainly|of course|okay|ok)\b[^\n:：.!]*[.!,]\s*)?(?:"
    + "|".join(
        [
            _naming(r"here(?:['’]s| is| are)\b", r"\btranslat"),
            _naming(r"voici\b", r"\btradu"),
            _naming(r"hier ist\b", "übersetz"),
            _naming(r"aquí (?:está|tienes)\b", "traduc"),
            _naming(r"ecco\b", "tradu"),
            _naming("以下是", "翻译"),
            _naming("以下は", "翻訳"),
            _naming("다음은", "번역"),
            _naming(r"아래의?\s", "(?:번역|다음과 같습니다)"),
        ]
    )
    + ")"
    + _COLON
    + r"\s*",
    re.IGNORECASE,
)
# The source starts with a label of its own ("Übersetzung: ...", "Q: ..."): ours translates it.
_SOURCE_LABEL = re.compile(r"\s*[^\W\d_][^\s:：]{0,24}" + _COLON)

_QUOTES = (
    ('"', '"'), ("“", "”"), ("«", "»"), ("„", "“"), ("„", "”"), ("「", "」"), ("『", "』"),
    ("'", "'"), ("‘", "’"),
)  # fmt: skip
_FENCE = re.compile(r"```[\w+-]*[ \t]*\n(.*?)\n?```", re.DOTALL)

_NOTE = re.compile(
    r"[\s*_\[]*+\(?+\s*+(?:note|notes|nb|n\.b\.|translator'?s note|remarque|anmerkung|hinweis"
    r"|nota|注|注意|备注|注释|注記|備考|참고|주의)[*_]*" + _COLON + r"|\(\s*note\b",
    re.IGNORECASE,
)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = tuple(".!?。！？…\"”»」』'’)")


def clean_output(text: str, source: str) -> str:
    """The translation in `text` without preamble, wrapping quotes or fence, or trailing note
    that `source` does not have. Never empty: if nothing would be left, `text` stripped."""
    original = text.strip()
    out = _drop_preamble(original, source)
    out = _drop_fence(out, source)
    out = _one_line_for_one_line(out, source)
    out = _drop_notes(out, source)
    out = _unwrap(out, source)
    return out or original


def _drop_preamble(out: str, source: str) -> str:
    src = source.strip()
    match = _PREAMBLE.match(out)
    if match and not _PREAMBLE.match(src):
        return out[match.end() :].strip()
    match = _LABEL.match(out)
    if match and not (_LABEL.match(src) or _SOURCE_LABEL.match(src)):
        return out[match.end() :].strip()
    # Any other first line ending in a colon, when the output has a line more than the source
    # and the source's first line has no colon the line could be translating ("He said: hi").
    first, _, rest = out.partition("\n")
    if (
        first.rstrip().endswith((":", "："))
        and _lines(out) > _lines(src)
        and not any(colon in src.partition("\n")[0] for colon in ":：")
    ):
        return rest.strip()
    return out


def _drop_notes(out: str, source: str) -> str:
    if any(_NOTE.match(p) for p in _PARAGRAPH_BREAK.split(source.strip())):
        return out
    paragraphs = _PARAGRAPH_BREAK.split(out)
    wanted = len(_PARAGRAPH_BREAK.split(source.strip()))
    while len(paragraphs) > wanted and _NOTE.match(paragraphs[-1]):
        paragraphs.pop()
    return "\n\n".join(paragraphs).strip()


def _drop_fence(out: str, source: str) -> str:
    fence = _FENCE.fullmatch(out)
    if fence and "```" not in source and "```" not in fence.group(1):
        return fence.group(1).strip()
    return out


def _one_line_for_one_line(out: str, source: str) -> str:
    """A one-line source translates to one line: what a chat model adds on later lines is
    commentary ('이 문장은 한국어로는 "..."', "This means ...", a second attempt)."""
    if "\n" in source.strip() or "\n" not in out:
        return out
    first = next(line for line in out.splitlines() if line.strip()).strip()
    # Only a finished sentence stands alone; "Il a dit :" goes on to the next line.
    return first if first.endswith(_SENTENCE_END) else out


_OPENINGS = frozenset(opening for opening, _ in _QUOTES)  # each one character


def _unwrap(out: str, source: str) -> str:
    if out[:1] not in _OPENINGS:  # most replies: no quote to take off
        return out
    src = source.strip()
    for opening, closing in _QUOTES:
        if _wrapped(src, opening, closing):
            return out
    for opening, closing in _QUOTES:
        inner = out[len(opening) : -len(closing)]
        if _wrapped(out, opening, closing) and opening not in inner and closing not in inner:
            return inner.strip()
    return out


def _wrapped(text: str, opening: str, closing: str) -> bool:
    return (
        len(text) > len(opening) + len(closing)
        and text.startswith(opening)
        and (text.endswith(closing))
    )


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())
