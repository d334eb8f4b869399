"""Whether a change to the markup code changes what it writes. `python benchmarks/markup/corpus.py
dump SRC OUT.json` runs plan and reassembly from the source tree SRC over a corpus (the HTML and
XML literals of the tests, the bench's 3 KB and 10 KB pages, 1,500 random pages of a fixed seed)
as html and as xml, with five kinds of reply to each unit (unchanged, upper-cased with words
added, first and last markers swapped, a marker dropped, markers re-spaced or control characters
added); `... compare A.json B.json` counts the documents written differently."""

from __future__ import annotations

import json
import pathlib
import random
import re
import sys
import types
from collections.abc import Callable
from typing import Any

MARK = re.compile(r"(<\s*/?\s*[gx]\s*\d{1,6}\s*/?\s*>)", re.IGNORECASE)
TAGS = [
    "b",
    "i",
    "a",
    "span",
    "p",
    "div",
    "li",
    "ul",
    "code",
    "pre",
    "img",
    "br",
    "em",
    "strong",
    "td",
    "tr",
    "table",
    "h1",
    "sup",
]
WORDS = ["hello", "world", "Save", "%(name)s", "{n}", "&amp;", "&lt;g1&gt;", "x", "The cat", "é"]
WORDS += ["  ", "\n", "https://a.b/c"]


def _literals(code: types.CodeType, out: set[str]) -> None:
    for c in code.co_consts:
        if isinstance(c, str) and "<" in c and ">" in c:
            out.add(c)
        elif isinstance(c, types.CodeType):
            _literals(c, out)


def corpus(page: Callable[[int], str]) -> list[str]:
    found: set[str] = set()
    for f in (pathlib.Path(__file__).parents[2] / "tests").rglob("*.py"):
        _literals(compile(f.read_text(), str(f), "exec"), found)
    docs = [*sorted(found), page(10_000), page(3000)]
    rnd = random.Random(7)
    for _ in range(1500):
        out = []
        for _ in range(rnd.randint(1, 30)):
            r = rnd.random()
            if r < 0.35:
                out.append(rnd.choice(WORDS) + " ")
            elif r < 0.6:
                out.append(f'<{rnd.choice(TAGS)} title="T {rnd.randint(0, 9)}">')
            elif r < 0.85:
                out.append(f"</{rnd.choice(TAGS)}>")
            else:
                out.append(rnd.choice(WORDS))
        docs.append("".join(out))
    return docs


def _marks(unit: str) -> tuple[list[str], list[int]]:
    parts = MARK.split(unit)
    return parts, [k for k, p in enumerate(parts) if MARK.fullmatch(p)]


def same(unit: str, i: int) -> str:
    return unit


def upper(unit: str, i: int) -> str:
    parts, _ = _marks(unit)
    extra = "" if i % 3 else " da"
    return "".join(p if MARK.fullmatch(p) else p.upper() + extra for p in parts)


def swap(unit: str, i: int) -> str:
    parts, at = _marks(unit)
    if len(at) >= 2:
        parts[at[0]], parts[at[-1]] = parts[at[-1]], parts[at[0]]
    return "".join(parts)


def drop(unit: str, i: int) -> str:
    parts, at = _marks(unit)
    if at and i % 2:
        parts[at[i % len(at)]] = ""
    return "".join(parts)


def spaced(unit: str, i: int) -> str:
    return MARK.sub(lambda m: " " + m.group().upper() + " ", unit) if i % 2 else unit + "\x0c\x01"


def dump(src: str, out: str) -> None:
    sys.path.insert(0, src)
    from dragoman.bench.documents import _page
    from dragoman.errors import InvalidRequest
    from dragoman.service.documents import Sizes, TextOptions, plan

    results: list[Any] = []
    docs = corpus(_page)
    for doc in docs:
        for kind in ("html", "xml"):
            for reply in (same, upper, swap, drop, spaced):
                try:
                    p = plan(doc, "en", TextOptions(markup=kind), Sizes(300, 200))  # type: ignore[arg-type]
                    got: Any = list(p.assemble([reply(u, i) for i, u in enumerate(p.units)]))
                except InvalidRequest as e:
                    got = f"InvalidRequest {e}"
                except Exception as e:  # a crash is a result to compare
                    got = f"ERROR {type(e).__name__} {e}"
                results.append([kind, reply.__name__, doc, got])
    pathlib.Path(out).write_text(json.dumps(results))
    print(f"{len(docs)} documents, {len(results)} results")


def compare(a: str, b: str) -> None:
    left = {(k, r, d): got for k, r, d, got in json.loads(pathlib.Path(a).read_text())}
    right = {(k, r, d): got for k, r, d, got in json.loads(pathlib.Path(b).read_text())}
    common = left.keys() & right.keys()
    differ = [key for key in common if left[key] != right[key]]
    print(f"{len(common)} results in both, {len(differ)} differ")
    for key in differ[:5]:
        print(repr(key)[:300], "\n  A", repr(left[key])[:400], "\n  B", repr(right[key])[:400])


if __name__ == "__main__":
    {"dump": dump, "compare": compare}[sys.argv[1]](*sys.argv[2:])
