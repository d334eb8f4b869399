"""ICU MessageFormat in a resource string (`{count, plural, one {# item} other {# items}}`):
only its message texts are translated, its syntax is kept.

Sent whole as plain text, a model sees (and translates) `plural`, `one`, `other` and the
argument's name; the service masks only simple `{name}`. So a message is cut into its texts:
the outer text with each complex argument (and `#`, and a typed `{n, number}`) standing as a
simple `{icuN}`, which the service masks and restores, then each case's text the same way. A
case is translated apart from the sentence around it: the price of a syntax kept intact.

ICU's apostrophe quoting (`'{'`, `''`) is read and kept; in a translation, an apostrophe right
before a brace (`l'{icu1}`) is doubled so it stays an apostrophe. The scan is one pass over the
string; a message that does not scan (unbalanced braces, nesting past `_MAX_DEPTH`) is left for
the caller to send as plain text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from dragoman.text.letters import has_letters

# A string worth scanning: an argument with a type (`{n, plural,`, `{d, date}`).
_COMPLEX = re.compile(r"\{\s*+[^\s{},']++\s*+,\s*+[a-z]")
_CASES = ("plural", "select", "selectordinal")
_MAX_DEPTH = 12
_QUOTE_BEFORE_BRACE = re.compile(r"(?<!')'(?=[{}|])")
_QUOTING = re.compile(r"'[{}#|]")


class NotIcu(ValueError):
    """The string does not scan as a message."""


@dataclass
class _Arg:
    head: str
    """`{count, plural, offset:1 ` up to the first case; a typed argument whole, no cases."""
    cases: list[tuple[str, Message]] = field(default_factory=list)
    """Each case's selector with its spaces (` one `) and its message."""
    tail: str = ""
    """The spaces and `}` after the last case."""


@dataclass
class Message:
    parts: list[str | _Arg]
    """Text as written (quoting kept), and arguments; `#` is an argument with no cases."""


def scan(text: str) -> Message | None:
    """The message `text` holds, or None when it has no typed argument (plain text serves)."""
    if not _COMPLEX.search(text):
        return None
    message, at = _message(text, 0, False, 0)
    if at != len(text):
        raise NotIcu(f"an unbalanced '}}' at {at}")
    return message


def _message(s: str, i: int, plural: bool, depth: int) -> tuple[Message, int]:
    if depth > _MAX_DEPTH:
        raise NotIcu("nested too deep")
    parts: list[str | _Arg] = []
    start = i
    while i < len(s):
        c = s[i]
        if c == "'":
            i = _quoted(s, i, plural)
        elif c == "{" or (c == "#" and plural):
            if i > start:
                parts.append(s[start:i])
            if c == "#":
                parts.append(_Arg("#"))
                i += 1
            else:
                arg, i = _argument(s, i, plural, depth)
                parts.append(arg)
            start = i
        elif c == "}":
            break
        else:
            i += 1
    if i > start:
        parts.append(s[start:i])
    return Message(parts), i


def _quoted(s: str, i: int, plural: bool) -> int:
    """Past the apostrophe at i: `''` is one, `'{...'` quotes up to the next lone one."""
    nxt = s[i + 1 : i + 2]
    if nxt == "'":
        return i + 2
    if nxt in ("{", "}", "|") or (nxt == "#" and plural):
        end = s.find("'", i + 1)
        while end != -1 and s[end + 1 : end + 2] == "'":
            end = s.find("'", end + 2)
        return len(s) if end == -1 else end + 1
    return i + 1


_NAME = re.compile(r"\{\s*+([^\s{},']++)\s*+(?:,\s*+([a-z]++)\s*+)?")
_SELECTOR = re.compile(r"\s*+(offset:\s*+\d++\s*+)?([^\s{}]++)\s*+|\s*+")


def _argument(s: str, i: int, plural: bool, depth: int) -> tuple[_Arg, int]:
    m = _NAME.match(s, i)
    if not m:
        raise NotIcu(f"an argument without a name at {i}")
    kind, at = m.group(2), m.end()
    if kind not in _CASES:  # `{name}`, `{n, number, ::currency/EUR}`: whole, to its brace
        end = s.find("}", at)
        if end == -1 or "{" in s[at:end]:
            raise NotIcu(f"an argument left open at {i}")
        return _Arg(s[i : end + 1]), end + 1
    if s[at : at + 1] != ",":
        raise NotIcu(f"{kind} without cases at {i}")
    arg = _Arg(s[i : at + 1])
    at += 1
    while True:
        sel = _SELECTOR.match(s, at)
        if sel is None or s[sel.end() : sel.end() + 1] != "{" or sel.group(2) is None:
            if sel is not None and sel.group(2) is None and s[sel.end() : sel.end() + 1] == "}":
                if not arg.cases:
                    raise NotIcu(f"{kind} without cases at {i}")
                arg.tail = s[at : sel.end() + 1]
                return arg, sel.end() + 1
            raise NotIcu(f"a case without a message at {at}")
        if sel.group(1) and arg.cases:
            raise NotIcu(f"an offset after the cases at {at}")
        sub, end = _message(s, sel.end() + 1, plural or kind != "select", depth + 1)
        if s[end : end + 1] != "}":
            raise NotIcu(f"a case left open at {sel.end()}")
        arg.cases.append((s[at : sel.end()], sub))
        at = end + 1


@dataclass
class Texts:
    """A message's texts to translate, in order, and how translations go back."""

    message: Message
    prefix: str
    texts: list[str] = field(default_factory=list)
    _sent: list[bool] = field(default_factory=list)

    def rebuild(self, translated: Iterator[str]) -> str:
        return self._build(self.message, translated, iter(self._sent))

    def _build(self, message: Message, translated: Iterator[str], sent: Iterator[bool]) -> str:
        skeleton, args = self._skeleton(message)
        text = skeleton
        if next(sent):
            text = next(translated)
            if not _QUOTING.search(skeleton):
                text = _QUOTE_BEFORE_BRACE.sub("''", text)
        built = [self._render(a, translated, sent) for a in args]
        used: set[int] = set()

        def put(m: re.Match[str]) -> str:
            k = int(m.group(1))
            if k >= len(built) or k in used:
                return ""
            used.add(k)
            return built[k]

        out = re.sub(r"\{" + re.escape(self.prefix) + r"(\d++)\}", put, text)
        return out + "".join(b for k, b in enumerate(built) if k not in used)

    def _render(self, arg: _Arg, translated: Iterator[str], sent: Iterator[bool]) -> str:
        if not arg.cases:
            return arg.head
        cases = "".join(f"{sel}{{{self._build(m, translated, sent)}}}" for sel, m in arg.cases)
        return arg.head + cases + arg.tail

    def _skeleton(self, message: Message) -> tuple[str, list[_Arg]]:
        out: list[str] = []
        args: list[_Arg] = []
        for part in message.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(f"{{{self.prefix}{len(args)}}}")
                args.append(part)
        return "".join(out), args

    def collect(self, message: Message) -> None:
        skeleton, args = self._skeleton(message)
        words = re.sub(r"\{" + re.escape(self.prefix) + r"\d++\}", "", skeleton)
        self._sent.append(has_letters(words))
        if self._sent[-1]:
            self.texts.append(skeleton)
        for arg in args:
            for _, sub in arg.cases:
                self.collect(sub)


def texts(message: Message, source: str) -> Texts:
    """The texts of `message` (scanned from `source`) to translate, outer text first."""
    runs = [len(m.group(1)) for m in re.finditer(r"\{icu(_*+)", source)]
    prefix = "icu" + "_" * (max(runs) + 1 if runs else 0)
    out = Texts(message, prefix)
    out.collect(message)
    return out
