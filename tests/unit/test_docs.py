"""The README and docs/ stay true to the tree: every relative link reaches a file (and a heading,
when it names one), and every `dragoman ...` command they show names a real command and flags
that command's own parser accepts. Nothing is started: the flags are read off each settings
class's command-line parser."""

from __future__ import annotations

import ast
import importlib
import itertools
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic_settings import CliSettingsSource

from dragoman import cli

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(`{3,}|~{3,})")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(ROOT)) for p in paths]


def split_fences(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines outside code blocks, and each code block as (its info string, its lines)."""
    prose: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        m = FENCE.match(stripped)
        if fence is None and m:
            fence = m.group(1)
            blocks.append((stripped[len(fence) :].strip(), []))
        elif fence is not None and stripped.startswith(fence) and not stripped.strip(fence[0]):
            fence = None
        elif fence is not None:
            blocks[-1][1].append(line)
        else:
            prose.append(line)
    return prose, blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup and punctuation dropped (hyphens kept), lower
    case, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    prose, _ = split_fences(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    # explicit anchors: <a id="x"> / <a name="x">
    out.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", path.read_text(encoding="utf-8")))
    return frozenset(out)


def links(page: Path) -> list[str]:
    prose, _ = split_fences(page.read_text(encoding="utf-8"))
    found = []
    for line in prose:
        line = INLINE_CODE.sub("", line)  # a link shown as code is no link
        found += LINK.findall(line)
    return found


def broken_links(page: Path) -> list[str]:
    problems = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:, ...
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            problems.append(f"{target}: no such file")
            continue
        if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_relative_links_resolve(page: Path) -> None:
    assert links(page) or page.name != "README.md", "the README links into docs/"
    assert broken_links(page) == []


def test_docs_has_a_page_per_topic() -> None:
    """The README's table of contents reaches every page of docs/."""
    readme_links = {t.partition("#")[0] for t in links(ROOT / "README.md")}
    for page in (ROOT / "docs").glob("*.md"):
        assert f"docs/{page.name}" in readme_links, f"README links no docs/{page.name}"


# --- commands -------------------------------------------------------------------------------


def _settings_class_of(func_name: str) -> type:
    """The settings class a `cmd_*` function of cli.py parses (`parse(Cls, args, ...)`), or the
    one its delegate builds with `_cli_parse_args=` (`dragoman translate`), found by reading the
    source, so nothing is run and no engine module is imported."""
    module = cli
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == func_name)
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "parse"
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            return _resolve(node.args[0].id, func, tree, module.__name__)
    # A delegate: `from MOD import run_x` then `run_x(args)`; find its `_cli_parse_args` call.
    for node in ast.walk(func):
        if isinstance(node, ast.ImportFrom) and node.module:
            mod = importlib.import_module(node.module)
            mtree = ast.parse(Path(str(mod.__file__)).read_text(encoding="utf-8"))
            for call in ast.walk(mtree):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and any(k.arg == "_cli_parse_args" for k in call.keywords)
                ):
                    return getattr(mod, call.func.id)
    raise AssertionError(f"cli.{func_name} parses no settings class this test can find")


def _resolve(name: str, func: ast.FunctionDef, tree: ast.Module, module_name: str) -> type:
    for scope in (func, tree):
        for node in ast.walk(scope):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return getattr(importlib.import_module(node.module), alias.name)
    return getattr(importlib.import_module(module_name), name)


@cache
def flags_of(words: tuple[str, ...]) -> frozenset[str]:
    """Every option string the command's own parser accepts (with `--no-x` forms), plus
    `--config`, which cli.py takes before the settings are parsed."""
    func = cli.COMMANDS[words]
    cls = _settings_class_of(func.__name__)
    parser: Any = CliSettingsSource(cls).root_parser
    return frozenset(parser._option_string_actions) | {"--config"}


FIRST_WORDS = {words[0] for words in cli.COMMANDS}
STOP = {"&&", "||", ";", "&", ">", ">>", "<", "2>", "2>&1", "#"}


def command_lines(page: Path) -> list[str]:
    """`dragoman ...` as shown: in shell code blocks (in a block with no language, only lines
    after a `$ ` prompt) and in inline code spans of the prose."""
    prose, blocks = split_fences(page.read_text(encoding="utf-8"))
    shown: list[str] = []
    for info, lines in blocks:
        if info not in ("", "bash", "sh", "shell", "console"):
            continue
        joined = "\n".join(lines).replace("\\\n", " ")
        for line in joined.splitlines():
            if info in ("", "console"):
                if not line.lstrip().startswith("$ "):
                    continue
                line = line.lstrip()[2:]
            line = re.sub(r"(^|\s)#.*$", "", line)  # a shell comment
            shown += _commands_in(line)
    for line in prose:
        for _, code in INLINE_CODE.findall(line):
            # A log line quoted in prose (`dragoman on Ray Serve: URL`) is no command: here
            # only spans naming a command count; code blocks are checked in full.
            if code.startswith("dragoman ") and code.split()[1] in FIRST_WORDS:
                shown += _commands_in(code)
    return shown


def _commands_in(line: str) -> list[str]:
    """Each `dragoman ...` of a shell line, up to the next operator; `[a | b]` and `a|b` are
    the docs' notation for alternatives, not pipes."""
    tokens = line.split()
    out = []
    for i, tok in enumerate(tokens):
        if tok != "dragoman" or (i and tokens[i - 1] in ("-m", "python")):
            continue
        words = []
        for j, t in enumerate(tokens[i + 1 :], start=i + 1):
            nxt = tokens[j + 1] if j + 1 < len(tokens) else ""
            if t in STOP or t.startswith(("#", ">", "<")):
                break
            if t == "|" and not (nxt.startswith("-") or nxt.startswith("[")):
                break
            words.append(t)
        out.append(" ".join(["dragoman", *words]))
    return out


def unknown_in(command: str) -> list[str]:
    tokens = command.split()[1:]
    words = [t for t in itertools.takewhile(lambda t: not t.startswith(("-", "[")), tokens)]
    choices = [w.split("|") for w in words[:2]]
    matched: list[tuple[str, ...]] = []
    if words[:1] == ["COMMAND"]:  # `dragoman COMMAND --help`: a flag every command has
        matched = list(cli.COMMANDS)
    for n in (2, 1) if not matched else ():
        for combo in itertools.product(*choices[:n]):
            if combo in cli.COMMANDS:
                matched.append(combo)
        if matched:
            break
    if not matched:
        return [f"{command}: no command {' '.join(words[:2]) or '(none)'}"]
    flags = {m.group(0).split("=")[0] for m in re.finditer(r"(?<![\w-])--?[a-zA-Z][\w-]*", command)}
    problems = []
    for words_ in matched:
        known = flags_of(words_)
        problems += [
            f"{command}: `dragoman {' '.join(words_)}` has no flag {flag}"
            for flag in sorted(flags - known)
        ]
    return problems


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_commands_shown_are_known(page: Path) -> None:
    problems = [p for command in command_lines(page) for p in unknown_in(command)]
    assert problems == []


def test_the_checks_catch_what_they_should(tmp_path: Path) -> None:
    """A broken link, a missing heading, an unknown command and an unknown flag are found."""
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# Here\n\n## A section: yes\n", encoding="utf-8")
    page.write_text(
        "[a](missing.md) [b](there.md#a-section-yes) [c](there.md#nope) [d](https://x.org/y)\n"
        "`[e](also-missing.md)`\n\n"
        "```bash\n"
        "dragoman serve --port 8000 --no-such-flag 1   # --in-a-comment\n"
        "dragoman model prepare [--verify | --force] | dragoman model list\n"
        "dragoman nosuch --x\n"
        "```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "there.md#nope: no heading with anchor #nope in there.md",
    ]
    commands = command_lines(page)
    assert commands == [
        "dragoman serve --port 8000 --no-such-flag 1",
        "dragoman model prepare [--verify | --force]",
        "dragoman model list",
        "dragoman nosuch --x",
    ]
    assert [p for c in commands for p in unknown_in(c)] == [
        "dragoman serve --port 8000 --no-such-flag 1: `dragoman serve` has no flag --no-such-flag",
        "dragoman nosuch --x: no command nosuch",
    ]
