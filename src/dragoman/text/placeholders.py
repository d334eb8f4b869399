"""Placeholders in plain text (`{name}`, `%s`, `%(name)s`, `%1$s`, `{{var}}`, `${var}`,
`:emoji:`, URLs, e-mails, `[X1X]`, inline code, i18next `<0>`...) are masked before the model
sees the text and restored after, each exactly once: the model gets `{1}`, `{2}`, ..., which it
leaves alone far more reliably than the originals (a 0.5B model "translates" `%(name)s` into
`%(nom)s`). A reply that loses a token gets it back at the same relative position; a token it
repeats or invents is dropped. Every repair is reported."""

from __future__ import annotations

import re
from typing import NamedTuple

from dragoman.text.letters import unused_private_char

# Longest and most specific first (a URL may hold '%s' or '@'; {{var}} holds {var}). A URL's
# scheme and an address start only where their run of characters starts: tried at every
# letter of every word, they cost a scan of the rest of the word each time.
_PLACEHOLDER = re.compile(
    r"""
    ```.*?```                                   # fenced code
    | `[^`\n]+`                                 # inline code
    | (?:(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://|www\.)[^\s<>"']+[^\s<>"'.,;:!?)\]]   # URLs
    | (?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+  # e-mail addresses
    | \{\{[^{}]*\}\} | \$\{[^{}]*\}             # {{var}} ${var}
    | %\([\w.-]+\)[-+\#0]*\d*(?:\.\d+)?[sdifuxXoeEgGcr]   # %(name)s
    | %\d+\$[-+\#0]*\d*(?:\.\d+)?[sdifuxXoeEgGc@]        # %1$s
    | %[-+\#0]*\d*(?:\.\d+)?(?:ll|l|h)?[sdifuxXoeEgGc@]\b  # %s %d %-5.2f %@ (not "50% off")
    | \{[\w.:-]*\}                              # {name} {0} (not ICU plural: it holds text)
    | :[a-z0-9_+-]+:                            # :emoji_name:
    | \[[A-Z]\d+[A-Z]\]                         # [X1X] (Weblate's masks)
    | </?\d+/?>                                 # i18next <0></0> <1/>
    """,
    re.VERBOSE | re.DOTALL,
)
# What every placeholder holds: most sentences have none, and this finds that at C speed.
_MAYBE = re.compile(r"[`@{%\[]|:[a-z0-9_+/-]|www\.|</?\d")
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


def spans(text: str) -> list[tuple[int, int]]:
    """Where `text`'s placeholders are, (start, end) in order: a cut inside one leaves each
    part a piece of it that is no placeholder, sent to the model as words."""
    if not _MAYBE.search(text):
        return []
    return [m.span() for m in _PLACEHOLDER.finditer(text)]


def mask(text: str) -> Masked:
    """`text` with its placeholders (and any literal {n}) replaced by numbered tokens."""
    if not _MAYBE.search(text):
        return Masked(text, ())
    originals: list[str] = []

    def swap(m: re.Match[str]) -> str:
        originals.append(m.group(0))
        return "{" + str(len(originals)) + "}"

    return Masked(_PLACEHOLDER.sub(swap, text), tuple(originals))
