"""YAML resource files: string values translated, comments, order, quoting, block styles,
anchors and aliases kept, YAML 1.1 booleans left alone, alias bombs and malformed files
refused or bounded."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from dragoman.errors import BadFile, FileTooLarge
from dragoman.files import registry
from dragoman.files.base import Limits, Segment
from dragoman.files.formats import yamlres
from tests.unit.files.textfakes import fuzz, translate

SAMPLE = (Path(__file__).parent / "samples" / "rails.yml").read_text()


def load(text: str | bytes) -> object:
    return YAML(typ="rt").load(io.StringIO(text if isinstance(text, str) else text.decode()))


def test_yaml_segments_are_the_string_values_in_order_each_once() -> None:
    parsed = yamlres.FORMAT.read(SAMPLE.encode(), Limits())
    assert [s.text for s in parsed.segments] == [
        "Hello, %{name}!",
        "See you soon",
        "Your account",
        "Change your password here.\nIt takes a minute.\n",
        "By signing up you accept the terms of service.",
        "Save",
        "Cancel",
        "Save profile",
        "Open the menu",
        "Choose a plan",
        "Dragoman",
        "red",
        "green",
    ]
    assert all(s.markup is None for s in parsed.segments)


def test_yaml_translates_values_and_keeps_the_file_around_them() -> None:
    parsed = yamlres.FORMAT.read(SAMPLE.encode(), Limits())
    out = parsed.render(translate(parsed)).decode()
    lines = out.splitlines()
    assert lines[0] == "# Strings for the account pages."
    assert '    greeting: "HELLO, %{name}!"   # shown after sign-in' in lines
    assert "    farewell: 'SEE YOU SOON'" in lines
    assert "    enabled: yes" in lines
    assert "    help: |" in lines and "      IT TAKES A MINUTE." in lines
    assert "    terms: >-" in lines
    assert "  defaults: &defaults" in lines and "  settings: *defaults" in lines
    assert "    <<: *defaults" in lines
    assert "    - OPEN THE MENU" in lines  # the file's sequence indentation
    assert "  brand: &brand DRAGOMAN" in lines and "  footer: *brand" in lines
    assert "  internal: !secret Do not translate" in lines
    doc = load(out)["en"]  # type: ignore[index]
    before = load(SAMPLE)["en"]  # type: ignore[index]
    assert list(doc) == list(before)
    assert list(doc["account"]) == list(before["account"])
    assert (doc["account"]["visits"], doc["account"]["since"]) == (3, before["account"]["since"])
    assert doc["profile"]["save"] == "SAVE PROFILE"
    assert doc["profile"]["cancel"] == "CANCEL"  # merged from the translated anchor
    assert doc["account"]["help"] == "CHANGE YOUR PASSWORD HERE.\nIT TAKES A MINUTE.\n"


def test_yaml_untranslated_render_is_the_file_itself() -> None:
    parsed = yamlres.FORMAT.read(SAMPLE.encode(), Limits())
    assert parsed.render([s.text for s in parsed.segments]).decode() == SAMPLE


def test_yaml_literal_block_keeps_its_final_line_break() -> None:
    parsed = yamlres.FORMAT.read(b"a: |\n  One.\n  Two.\n", Limits())
    assert parsed.render(["Un.\nDeux."]).decode() == "a: |\n  Un.\n  Deux.\n"


def test_yaml_documents_and_a_lone_scalar() -> None:
    parsed = yamlres.FORMAT.read(b"---\ntitle: First\n---\nSecond document\n", Limits())
    assert parsed.segments == [Segment("First"), Segment("Second document")]
    out = parsed.render(["Premier", "Second"]).decode()
    assert [d for d in YAML(typ="safe").load_all(out)] == [{"title": "Premier"}, "Second"]


BOMB = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_yaml_alias_bomb_is_read_once_and_written_with_its_aliases() -> None:
    started = time.perf_counter()
    parsed = yamlres.FORMAT.read(BOMB.encode(), Limits())
    assert [s.text for s in parsed.segments] == ["lol"] * 9  # a's items; never 9**9
    out = parsed.render(["mdr"] * 9)
    assert time.perf_counter() - started < 1
    assert len(out) < 2 * len(BOMB)
    assert out.decode().count("mdr") == 9
    assert "i: [*h, *h" in out.decode()  # an anchor nothing names is dropped


def test_yaml_is_registered() -> None:
    assert registry.find("en.yml") is yamlres.FORMAT
    assert registry.find("config/locales/fr.YAML") is yamlres.FORMAT


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a: b: c\n", r"mapping values are not allowed here \(line 1, column 5\)"),
        (b"a: 1\na: 2\n", "duplicate key"),
        (b'x: "unterminated\n', "line 2"),
        (b"k: !!int xyz\n", "a value cannot be read"),
        (b"[" * 50_000, "brackets nested deeper than 64"),
        (b"a: " + b"{b: " * 65 + b"c" + b"}" * 65, "brackets nested deeper than 64"),
        (b"".join(b" " * i + b"- \n" for i in range(0, 3000, 2)), "nested too deep"),
        (b"title: caf\xe9\n", "not UTF-8"),
    ],
)
def test_yaml_malformed_is_bad_file(data: bytes, message: str) -> None:
    with pytest.raises(BadFile, match=message):
        yamlres.FORMAT.read(data, Limits())


def test_yaml_past_its_size_bound_is_too_large() -> None:
    with pytest.raises(FileTooLarge, match="may be up to"):
        yamlres.FORMAT.read(b"# " + b"x" * yamlres.MAX_BYTES, Limits())


def test_yaml_python_tags_are_data_and_not_translated() -> None:
    data = b'run: !!python/object/apply:os.system ["echo hacked"]\nok: Fine\n'
    parsed = yamlres.FORMAT.read(data, Limits())
    assert parsed.segments == [Segment("Fine")]
    assert b"!!python/object/apply:os.system" in parsed.render(["Bien"])


def test_yaml_more_strings_than_the_limit_is_bad_file() -> None:
    data = "".join(f"k{i}: text {i}\n" for i in range(11)).encode()
    with pytest.raises(BadFile, match="more than 10 strings"):
        yamlres.FORMAT.read(data, Limits(max_segments=10))


def test_yaml_reader_only_reads_or_refuses() -> None:
    fuzz(yamlres.FORMAT.read, SAMPLE.encode(), examples=60)
