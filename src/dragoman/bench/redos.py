"""Adversarial texts for a regular expression, built from its own parse tree: for every
repetition in it, what leads up to the repetition, then a long run of what the repetition
takes, then a character that ends the match. Two adjacent quantifiers that both take the run
(`[-+#0]*\\d*` on a run of zeros), or a try at every position that scans the rest, make such
a text quadratic; a linear pattern reads it in one pass. Used by the tests (every pattern that
sees request text) and by `dragoman bench --hostile`."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from importlib import import_module
from types import ModuleType
from typing import Any

# The standard library's own parser of patterns, untyped (what `re.compile` reads).
C: Any = import_module("re._constants")
P: Any = import_module("re._parser")

# The characters a class is sampled from: what each category takes and leaves.
_POOL = "a0 \t\n.-_+/:@%#&;=,!?\"'<>()[]{}$*\\|~`^Zz9Aé中ア가ก\u200b\x00"
_CATEGORY = {
    C.CATEGORY_DIGIT: "0",
    C.CATEGORY_NOT_DIGIT: "a",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: "a",
    C.CATEGORY_WORD: "a",
    C.CATEGORY_NOT_WORD: "!",
    C.CATEGORY_LINEBREAK: "\n",
    C.CATEGORY_NOT_LINEBREAK: "a",
}
_ENDS = ("", "!", "\n")  # what follows a run: nothing, or what most patterns refuse
_MAX_SAMPLES = 6  # characters tried per class


def _class_chars(items: list[tuple[Any, Any]], flags: int) -> list[str]:
    """A few characters a character class takes: its literals, its ranges' ends, its
    categories' typical members; of a negated class, pool characters it takes."""
    negated = any(op is C.NEGATE for op, _ in items)
    found: list[str] = []
    if not negated:
        for op, av in items:
            if op is C.LITERAL:
                found.append(chr(av))
            elif op is C.RANGE:
                found += [chr(av[0]), chr(av[1])]
            elif op is C.CATEGORY and av in _CATEGORY:
                found.append(_CATEGORY[av])
    if negated or not found:
        # Which pool characters the class itself takes, asked of the class compiled alone.
        body = P.SubPattern(P.State(), [(C.IN, items)])
        try:
            test = re.compile(_source(body), flags & ~re.VERBOSE)
        except re.error:
            return []
        found = [ch for ch in _POOL if test.fullmatch(ch)]
    return list(dict.fromkeys(found))[:_MAX_SAMPLES]


def _source(sub: Any) -> str:
    """A class rebuilt as pattern text (only `[...]` bodies are ever rebuilt)."""
    ((_, items),) = sub.data
    parts: list[str] = []
    for iop, av in items:
        if iop is C.NEGATE:
            parts.insert(0, "^")
        elif iop is C.LITERAL:
            parts.append(re.escape(chr(av)))
        elif iop is C.RANGE:
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif iop is C.CATEGORY:
            parts.append(
                {
                    C.CATEGORY_DIGIT: r"\d",
                    C.CATEGORY_NOT_DIGIT: r"\D",
                    C.CATEGORY_SPACE: r"\s",
                    C.CATEGORY_NOT_SPACE: r"\S",
                    C.CATEGORY_WORD: r"\w",
                    C.CATEGORY_NOT_WORD: r"\W",
                }.get(av, "")
            )
    return "[" + "".join(parts) + "]"


def _chars(op: Any, av: Any, flags: int) -> list[str]:
    """The single characters one node takes (empty: it is no single character)."""
    if op is C.LITERAL:
        return [chr(av)]
    if op is C.NOT_LITERAL:
        return [ch for ch in _POOL if ord(ch) != av][:_MAX_SAMPLES]
    if op is C.ANY:
        return ["a", "\n"]
    if op is C.IN:
        return _class_chars(av, flags)
    return []


def _sample(seq: Iterable[tuple[Any, Any]], flags: int) -> str:
    """One short text the sequence takes (or nearly: lookarounds and references skipped)."""
    out = []
    for op, av in seq:
        chars = _chars(op, av, flags)
        if chars:
            out.append(chars[0])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, _, body = av
            out.append(_sample(body, flags) * low)
        elif op is C.SUBPATTERN:
            out.append(_sample(av[3], flags))
        elif op is C.ATOMIC_GROUP:
            out.append(_sample(av, flags))
        elif op is C.BRANCH:
            out.append(_sample(av[1][0], flags))
    return "".join(out)


def _pumps(seq: Iterable[tuple[Any, Any]], flags: int) -> list[str]:
    """What one pass of a repeated body may be: its single characters, or a sample of it."""
    items = list(seq)
    if len(items) == 1:
        op, av = items[0]
        chars = _chars(op, av, flags)
        if chars:
            return chars
        if op is C.BRANCH:
            return [p for branch in av[1] for p in _pumps(branch, flags)][: 2 * _MAX_SAMPLES]
        if op is C.SUBPATTERN:
            return _pumps(av[3], flags)
        if op is C.ATOMIC_GROUP:
            return _pumps(av, flags)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            return _pumps(av[2], flags)
    sample = _sample(items, flags)
    return [sample] if sample else []


def _walk(seq: list[tuple[Any, Any]], lead: str, flags: int) -> Iterator[tuple[str, str]]:
    """(lead, pump) for every repetition in `seq` and the sequences inside it."""
    for i, (op, av) in enumerate(seq):
        before = lead + _sample(seq[:i], flags)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            body = list(av[2])
            for pump in _pumps(body, flags):
                yield before, pump
            yield from _walk(body, before, flags)
        elif op is C.SUBPATTERN:
            yield from _walk(list(av[3]), before, flags)
        elif op is C.ATOMIC_GROUP:
            yield from _walk(list(av), before, flags)
        elif op is C.BRANCH:
            for branch in av[1]:
                yield from _walk(list(branch), before, flags)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            yield from _walk(list(av[1]), before, flags)


def attacks(pattern: re.Pattern[str], size: int = 100_000) -> list[str]:
    """Texts of about `size` characters built to make `pattern` backtrack: for every
    repetition, its lead, a run of what it takes (alone, or after the lead repeated, which
    starts a try at every position), then an end that fails the match."""
    tree = P.parse(pattern.pattern, pattern.flags)
    flags = pattern.flags | tree.state.flags
    found: dict[str, None] = {}
    for lead, pump in _walk(list(tree), "", flags):
        run = pump * max(1, (size - len(lead)) // len(pump))
        for end in _ENDS:
            found[lead + run + end] = None
        if lead:
            unit = lead + pump
            found[unit * max(1, size // len(unit))] = None
    return list(found)


def patterns_of(modules: Iterable[ModuleType]) -> dict[str, re.Pattern[str]]:
    """Every compiled `str` pattern held by a module, by `module.name` (a dict's or a tuple's
    patterns too, keyed by position)."""
    out: dict[str, re.Pattern[str]] = {}
    for module in modules:
        for name, value in vars(module).items():
            held: Iterable[tuple[str, Any]]
            if isinstance(value, dict):
                held = ((f"{name}[{k!r}]", v) for k, v in value.items())
            elif isinstance(value, tuple | list):
                held = ((f"{name}[{i}]", v) for i, v in enumerate(value))
            else:
                held = ((name, value),)
            for key, v in held:
                if isinstance(v, re.Pattern) and isinstance(v.pattern, str):
                    out[f"{module.__name__}.{key}"] = v
    return out


_ANCHORED = frozenset({"match", "fullmatch"})


def anchored_names(module: ModuleType) -> frozenset[str]:
    """The module's patterns that it only ever matches at a text's start (`.match`,
    `.fullmatch`): one try each, not one at every position. Any other use of the name (a
    search, or handed elsewhere) counts as a search."""
    import ast
    import inspect

    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return frozenset()
    # Every load of a name counts as a search but where it is the base of `NAME.match` (or
    # `.fullmatch`): a name with any other load is searched somewhere.
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.attr in _ANCHORED
    ]
    anchored = {node.value.id for node in calls}  # type: ignore[attr-defined]
    bases = {id(node.value) for node in calls}
    loose = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in bases
    }
    return frozenset(anchored - loose)


def worst_seconds(
    pattern: re.Pattern[str], texts: Iterable[str], anchored: bool
) -> tuple[float, str]:
    """The longest one text took the pattern, as it is used, and that text."""
    import time

    worst = (0.0, "")
    for text in texts:
        started = time.perf_counter()
        if anchored:
            pattern.match(text)
            pattern.fullmatch(text)
        else:
            for _ in pattern.finditer(text):
                pass
        took = time.perf_counter() - started
        if took > worst[0]:
            worst = (took, text)
    return worst


def request_patterns() -> dict[str, tuple[re.Pattern[str], bool]]:
    """Every pattern on the request path, by name, and whether it is only matched anchored."""
    out: dict[str, tuple[re.Pattern[str], bool]] = {}
    seen: set[int] = set()  # one pattern under two names (`_PLAIN` is one of `_PATTERNS`)
    for module in request_path_modules():
        anchored = anchored_names(module)
        for key, p in patterns_of([module]).items():
            if id(p) not in seen:
                seen.add(id(p))
                out[key] = (p, key.rsplit(".", 1)[1] in anchored)
    return {k: v for k, v in out.items() if not _led(v[0], [p for p, _ in out.values()])}


def _led(pattern: re.Pattern[str], others: Iterable[re.Pattern[str]]) -> bool:
    """Whether `pattern` is the leading branches of another's alternation (a pattern built
    as `BASE | MORE`): that one tries these branches first at every position, on its own
    texts and these alike, so trying this one too adds nothing."""
    return any(
        o is not pattern
        and o.flags == pattern.flags
        and o.pattern.startswith(pattern.pattern)
        and o.pattern[len(pattern.pattern) :].lstrip().startswith("|")
        for o in others
    )


def request_path_modules() -> list[ModuleType]:
    """The product's modules whose patterns see request text or model output."""
    import importlib
    import pkgutil

    names = ["text", "detect", "engine", "service", "api"]
    out = []
    for name in names:
        package_name = f"dragoman.{name}"
        package = importlib.import_module(package_name)
        out.append(package)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            if info.name.split(".")[-1] in _SKIP:
                continue
            out.append(importlib.import_module(info.name))
    return out


# Modules that start or need an engine or another process at import: none holds a pattern
# that sees request text.
_SKIP = frozenset({"vllm_engine", "llamacpp_embedded"})


if __name__ == "__main__":  # pragma: no cover - a quick look from the shell
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    for key, (p, anchored) in sorted(request_patterns().items()):
        if only in key:
            took, text = worst_seconds(p, attacks(p, size), anchored)
            print(f"{took * 1000:9.1f} ms  {key} {'match' if anchored else ''} {text[:30]!r}")
