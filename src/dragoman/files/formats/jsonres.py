"""i18n resource files in JSON (.json): every string value translated (in objects and arrays,
however nested), keys, numbers, booleans and nulls kept.

The file is checked with the json module, then its string values are found where they stand
and only they are replaced: keys, their order (and any duplicate), indentation, spacing and
numbers come back as they were written. A translated string is written with JSON's escapes
and its letters as they are (not `\\u` escapes). A string with no letters (`"%d"`, `"—"`,
`"12:00"`) is kept. An ICU MessageFormat string sends only its texts (`_icu`); `{name}`, `%s`
and the like are masked by the service."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from dragoman.errors import BadFile
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.files.formats._icu import NotIcu, Texts, scan, texts
from dragoman.text.letters import has_letters

_BOM = "\ufeff"
# In valid JSON a quote outside a string opens one: strings are found left to right.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"')
_KEY = re.compile(r"\s*+:")


@dataclass
class _Value:
    start: int
    end: int
    icu: Texts | None


@dataclass
class _Json:
    text: str
    bom: bool
    values: list[_Value]
    segments: list[Segment]

    def render(self, translated: list[str]) -> bytes:
        if len(translated) != len(self.segments):
            raise ValueError(f"{len(translated)} translations for {len(self.segments)} segments")
        it = iter(translated)
        out = [_BOM] if self.bom else []
        at = 0
        for v in self.values:
            new = v.icu.rebuild(it) if v.icu is not None else next(it)
            out += [self.text[at : v.start], json.dumps(new, ensure_ascii=False)]
            at = v.end
        out.append(self.text[at:])
        # A lone surrogate (`"\ud800"` in the file) goes back as the escape it came as.
        return "".join(out).encode("utf-8", "backslashreplace")


def _read(data: bytes, limits: Limits) -> _Json:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadFile(f"not UTF-8 text (byte {e.start})") from None
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        raise BadFile(f"not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise BadFile("not a resource file: JSON nested too deep") from None
    values: list[_Value] = []
    segments: list[Segment] = []
    for m in _STRING.finditer(text):
        if _KEY.match(text, m.end()):
            continue
        value = json.loads(m.group())
        if not has_letters(value):
            continue
        icu = _icu(value)
        if icu is not None and not icu.texts:
            continue
        values.append(_Value(m.start(), m.end(), icu))
        segments += [Segment(t) for t in icu.texts] if icu is not None else [Segment(value)]
        if len(segments) > limits.max_segments:
            raise BadFile(f"the file holds more than {limits.max_segments} strings")
    return _Json(text, bom, values, segments)


def _icu(value: str) -> Texts | None:
    try:
        message = scan(value)
    except NotIcu:  # braces that are not MessageFormat: the string goes as plain text
        return None
    return texts(message, value) if message is not None else None


FORMAT = FileFormat("json", (".json",), "application/json", _read)
