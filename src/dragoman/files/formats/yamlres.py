"""i18n resource files in YAML (.yaml, .yml), read and written with ruamel.yaml's round trip:
comments, key order, quoting and block styles (`|`, `>`) kept, string values translated, keys
and other values kept.

- Safe: the round-trip loader builds only data; a tag (`!!python/object`, `!custom`) is kept as
  data and what it tags is not translated.
- Anchors and aliases: a value is translated once however many aliases name it, and written
  back with its anchor and aliases; the walk visits each node once, so an alias bomb (a billion
  laughs) costs what its text costs. Keys merged in with `<<` are their anchor's.
- A plain `yes`, `no`, `on`, `off` or `null` is a boolean or null to YAML 1.1 readers (Ruby's,
  PyYAML): kept, never translated.
- Layout: the indentation of mappings and of sequences is taken from the file; a long line is
  not re-wrapped.
- Bounds: ruamel.yaml is pure Python: files are read up to `MAX_BYTES`, and brackets nested
  past `_MAX_FLOW_DEPTH` are refused before its scanner sees them."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString, ScalarString

from dragoman.errors import BadFile, FileTooLarge
from dragoman.files.base import FileFormat, Limits, Segment
from dragoman.text.letters import has_letters

_BOM = "\ufeff"
_YAML11_WORDS = re.compile(r"(?i:y|n|yes|no|on|off|true|false|null|~)")
_KEY_LINE = re.compile(r"( *+)[^\s#-][^:#]*+:[ \t]*+(?:#.*+)?")
_ITEM_LINE = re.compile(r"( *+)- ")
# ruamel.yaml reads some 150 KB a second: a bigger file would hold a core for minutes. A
# locale file of a large application is a few hundred KB.
MAX_BYTES = 4 * 2**20
_BRACKET = re.compile(r"[\[\]{}]")
_MAX_FLOW_DEPTH = 64
_START = re.compile(r"(?:[ \t]*+(?:#[^\n]*+)?\n|%[^\n]*+\n)*+---")

Slot = tuple[Any, Any]  # (mapping or sequence, key or index)


@dataclass
class _Value:
    value: str
    slots: list[Slot] = field(default_factory=list, repr=False)


@dataclass
class _Yaml:
    yaml: YAML
    docs: list[Any] = field(repr=False)  # an alias bomb's repr is its expansion
    values: list[_Value]
    bom: bool

    @property
    def segments(self) -> list[Segment]:
        return [Segment(str(v.value)) for v in self.values]

    def render(self, translated: list[str]) -> bytes:
        if len(translated) != len(self.values):
            raise ValueError(f"{len(translated)} translations for {len(self.values)} segments")
        try:
            for v, text in zip(self.values, translated, strict=True):
                new = _restyled(v.value, text)
                for holder, key in v.slots:
                    holder[key] = new
            out = io.StringIO()
            self.yaml.dump_all(self.docs, out)
        finally:
            for v in self.values:
                for holder, key in v.slots:
                    holder[key] = v.value
        return ((_BOM if self.bom else "") + out.getvalue()).encode()


def _restyled(old: str, text: str) -> str:
    """The translation in the original's style (quoted, literal, folded) and with its anchor."""
    if text == old:
        return old  # as it was, anchor and line folds included
    if not isinstance(old, ScalarString):
        return text
    if isinstance(old, LiteralScalarString) and old.endswith("\n") and not text.endswith("\n"):
        text += "\n"  # `|` keeps its final line break, not turned into `|-`
    anchor = old.yaml_anchor()
    new: str = type(old)(text, anchor=anchor.value if anchor is not None else None)
    return new


def _collect(docs: list[Any], limits: Limits) -> list[_Value]:
    """The string values under `docs` in document order, each node visited once (an alias is
    its anchor's node: one value, several slots)."""
    values: dict[int, _Value] = {}
    seen: set[int] = set()
    stack: list[tuple[Any, Any, Any]] = [(d, docs, i) for i, d in reversed(list(enumerate(docs)))]
    while stack:
        node, holder, key = stack.pop()
        if isinstance(node, str):
            if _translatable(node):
                values.setdefault(id(node), _Value(node)).slots.append((holder, key))
                if len(values) > limits.max_segments:
                    raise BadFile(f"the file holds more than {limits.max_segments} strings")
            continue
        if id(node) in seen or getattr(getattr(node, "tag", None), "value", None):
            continue  # visited, or tagged: kept as it is
        seen.add(id(node))
        if isinstance(node, CommentedMap):
            items: list[Slot] = list(node.non_merged_items())
        elif isinstance(node, CommentedSeq):
            items = list(enumerate(node))
        else:
            continue
        stack += [(v, node, k) for k, v in reversed(items)]
    return list(values.values())


def _translatable(value: str) -> bool:
    if type(value) is str and _YAML11_WORDS.fullmatch(value):
        return False
    return has_letters(value)


def _indents(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as the file writes them; YAML's usual
    (2, 2, 0) where it does not say."""
    mapping = sequence = offset = None
    parent: int | None = None
    for line in text.split("\n"):
        key, item = _KEY_LINE.fullmatch(line), _ITEM_LINE.match(line)
        if item and parent is not None and offset is None:
            offset = len(item.group(1)) - parent
            sequence = offset + 2
        if key:
            depth = len(key.group(1))
            if parent is not None and mapping is None and depth > parent:
                mapping = depth - parent
            parent = depth
        elif not item:
            parent = None
        if mapping is not None and offset is not None:
            break
    return mapping or 2, sequence or 2, offset or 0


def _flow_depth(text: str) -> int:
    """How deep `[` and `{` nest, counting those in strings too (over, never under). The
    scanner's cost grows with the square of the depth: 2,000 brackets took it 5 s."""
    depth = deepest = 0
    for m in _BRACKET.finditer(text):
        depth = depth + 1 if m.group() in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def _read(data: bytes, limits: Limits) -> _Yaml:
    if len(data) > MAX_BYTES:
        raise FileTooLarge(f"a YAML file may be up to {MAX_BYTES} bytes; this one is {len(data)}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadFile(f"not UTF-8 text (byte {e.start})") from None
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    if _flow_depth(text) > _MAX_FLOW_DEPTH:
        raise BadFile(f"not a resource file: brackets nested deeper than {_MAX_FLOW_DEPTH}")
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 100_000
    mapping, sequence, offset = _indents(text)
    yaml.indent(mapping=mapping, sequence=max(sequence, offset + 2), offset=offset)
    yaml.explicit_start = bool(_START.match(text))
    try:
        docs = list(yaml.load_all(text))
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise BadFile(f"not YAML: {e.problem or e.context}{at}") from None
    except YAMLError as e:
        raise BadFile(f"not YAML: {e}") from None
    except RecursionError:
        raise BadFile("not a resource file: YAML nested too deep") from None
    except (ValueError, TypeError, OverflowError) as e:  # a typed value (`!!int x`) unreadable
        raise BadFile(f"not YAML: a value cannot be read ({e})") from None
    return _Yaml(yaml, docs, _collect(docs, limits), bom)


FORMAT = FileFormat("yaml", (".yaml", ".yml"), "application/yaml", _read)
