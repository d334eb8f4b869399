"""Gettext catalogues (.po, .pot), read and written with polib.

Each entry that needs a translation is translated: its msgid, and its msgid_plural when it has
one. An entry already translated and not fuzzy is kept as it is (a translator's work is never
overwritten); the header, obsolete entries (`#~`), comments, references, flags, msgctxt and
previous msgids are kept.
- A machine-translated entry is marked `fuzzy`: a translation nobody reviewed is what the flag
  says, and gettext's tools leave fuzzy entries out of a compiled catalogue until a reviewer
  clears the flag (msgfmt --use-fuzzy takes them as they are).
- Plural forms: as many as the header's `Plural-Forms: nplurals=N` says (else as many as the
  entry has, at least 2); the first from msgid's translation, the others from msgid_plural's
  (a language with one form, nplurals=1, gets msgid_plural's: the general one).
- The file is read in the charset its header declares (UTF-8 when it declares none, or the
  template's `CHARSET`) and always written in UTF-8, its header saying so: a translation may
  hold letters the old charset lacks. `render_in` also sets the header's `Language`."""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass

import polib

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits, Segment

_CHARSET = re.compile(rb'"Content-Type:[^"\n]*?charset=([-\w.:]++)')
_NPLURALS = re.compile(r"nplurals\s*+=\s*+(\d{1,2})(?!\d)")
_LINE = re.compile(r"\(line (\d++)\)")
_MAX_FORMS = 6  # Arabic's; a header saying more is not a language's


@dataclass
class _Po:
    catalogue: polib.POFile
    todo: list[polib.POEntry]
    """The entries translated, in order: one segment each, two with a plural."""

    @property
    def segments(self) -> list[Segment]:
        out = []
        for entry in self.todo:
            out.append(Segment(entry.msgid))
            if entry.msgid_plural:
                out.append(Segment(entry.msgid_plural))
        return out

    def render(self, translated: list[str]) -> bytes:
        return self._write(translated, None)

    def render_in(self, translated: list[str], target: str) -> bytes:
        return self._write(translated, target)

    def _write(self, translated: list[str], target: str | None) -> bytes:
        forms = _forms(self.catalogue.metadata.get("Plural-Forms", ""))
        it = iter(translated)
        for entry in self.todo:
            one = next(it)
            if entry.msgid_plural:
                other = next(it)
                n = forms or max(2, len(entry.msgstr_plural))
                entry.msgstr_plural = {i: one if i == 0 and n > 1 else other for i in range(n)}
            else:
                entry.msgstr = one
            if "fuzzy" not in entry.flags:
                entry.flags.append("fuzzy")
        meta = self.catalogue.metadata
        if target is not None:
            meta["Language"] = target
        meta["Content-Type"] = "text/plain; charset=UTF-8"
        self.catalogue.encoding = "utf-8"
        return str(self.catalogue).encode()


def _forms(header: str) -> int | None:
    m = _NPLURALS.search(header)
    n = int(m.group(1)) if m else 0
    return n if 1 <= n <= _MAX_FORMS else None


def _charset(data: bytes) -> str:
    m = _CHARSET.search(data)
    name = m.group(1).decode("ascii") if m else "utf-8"
    if name.upper() == "CHARSET":  # a template's placeholder
        return "utf-8"
    try:
        codec = codecs.lookup(name)
        ascii_compatible = "msgid".encode(codec.name) == b"msgid"
    except (LookupError, UnicodeError):  # unknown, or no text encoding ('uu', 'base64')
        raise BadFile(f"the catalogue's charset {name!r} is not one we know") from None
    if not ascii_compatible:
        raise BadFile(f"the catalogue's charset {name!r} is not ASCII-compatible")
    return codec.name


def _read(data: bytes, limits: Limits) -> _Po:
    charset = _charset(data)
    try:
        text = data.decode(charset)
    except UnicodeDecodeError as e:
        raise BadFile(
            f"not {charset} text, as the catalogue's header says (byte {e.start})"
        ) from None
    text = text.removeprefix("\ufeff")
    if "\x00" in text:
        raise BadFile("not a gettext catalogue (it holds NUL bytes)")
    # polib reads a string that names an existing file as that file: a catalogue always holds
    # a line break, and one that names a file is refused rather than read from disk.
    text += "\n"
    if os.path.isfile(text):
        raise BadFile("not a gettext catalogue")
    try:
        catalogue = polib.pofile(text, encoding="utf-8", wrapwidth=78)
    except OSError as e:  # polib's syntax error, "... (line 3)"
        line = _LINE.search(str(e))
        at = f" at line {line.group(1)}" if line else ""
        raise BadFile(f"not a gettext catalogue: a syntax error{at}") from None
    if not len(catalogue) and not catalogue.metadata:
        raise BadFile("not a gettext catalogue: it holds no entries")
    todo = [e for e in catalogue if not e.obsolete and e.msgid and _needs(e)]
    count = sum(2 if e.msgid_plural else 1 for e in todo)
    if count > limits.max_segments:
        raise BadFile(
            f"the catalogue holds {count} texts to translate; the limit is {limits.max_segments}"
        )
    return _Po(catalogue, todo)


def _needs(entry: polib.POEntry) -> bool:
    """Not translated yet, or only fuzzily (a guess by msgmerge, or an earlier machine's)."""
    return entry.fuzzy or not entry.translated()


FORMAT = FileFormat("po", (".po", ".pot"), "text/x-gettext-translation; charset=utf-8", _read)
