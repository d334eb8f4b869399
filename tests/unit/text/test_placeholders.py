from __future__ import annotations

import base64
import hashlib
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.service.documents import Sizes, TextOptions, plan
from dragoman.text.placeholders import (
    _LONG_RUN,
    _MAYBE,
    _PLACEHOLDER,
    _PLAIN,
    code_spans,
    fences,
    mask,
)
from dragoman.text.segment import SplitMode

KINDS = [
    "%(name)s",
    "%1$s",
    "%s",
    "%d",
    "%-5.2f",
    "{count}",
    "{0}",
    "{{var}}",
    "${var}",
    ":smile:",
    "[X1X]",
    "<0>",
    "https://example.com/a?b=1&c=2",
    "someone@example.org",
    "`make test`",
]


@pytest.mark.parametrize("token", KINDS)
def test_each_kind_is_masked_and_restored(token: str) -> None:
    text = f"Open {token} now, please."
    m = mask(text)
    assert token not in m.text and m.originals == (token,)
    assert m.text == "Open {1} now, please."
    assert m.unmask("Ouvrez {1} maintenant, s'il vous plaît.") == (
        f"Ouvrez {token} maintenant, s'il vous plaît.",
        [],
    )


def test_not_placeholders() -> None:
    for text in ("50% off today", "100% sure", "a {b c} d", "time: 10:30"):
        assert mask(text).originals == (), text


def test_lost_repeated_and_invented_tokens_are_repaired() -> None:
    m = mask("Hello %(name)s, you have {count} new messages")
    out, repairs = m.unmask("Bonjour {1}, vous avez des messages")
    assert out.count("{count}") == 1 and out.startswith("Bonjour %(name)s,")
    assert repairs == ["lost placeholder '{count}' put back"]
    out, repairs = m.unmask("Bonjour {1} {1} {7}, vous avez {2} messages")
    assert out == "Bonjour %(name)s, vous avez {count} messages"
    assert len(repairs) == 2
    out, _ = m.unmask("")
    assert out.count("%(name)s") == 1 and out.count("{count}") == 1


def test_text_holding_nuls_and_digits_of_its_own_comes_back_unchanged() -> None:
    """Restored tokens are marked with a character the reply does not hold: a NUL-digits-NUL
    run in the text itself is neither taken for one (IndexError) nor replaced by one."""
    for text in ("{a} hi \x0099\x00", "{a} {b} hi \x001\x00", "%s \ue000" + "1\ue000"):
        m = mask(text)
        assert m.unmask(m.text) == (text, [])
    m = mask("{a} hi \x001\x00")
    out, repairs = m.unmask("salut \x001\x00")
    assert out.count("{a}") == 1 and "\x001\x00" in out
    assert repairs == ["lost placeholder '{a}' put back"]


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(st.sampled_from(KINDS), st.text(alphabet="ab.+-_@:/%{}[]<>`w1 X", max_size=8)),
        max_size=6,
    )
)
def test_the_quick_check_never_hides_a_placeholder(parts: list[str]) -> None:
    """`mask` skips the full pattern when the quick check finds nothing: it must find
    something in every text the full pattern would match."""
    text = "".join(parts)
    assert bool(_PLAIN.search(text) or code_spans(text)) <= bool(_MAYBE[True].search(text))
    quick = _MAYBE[False].search(text) or _LONG_RUN.search(text)
    assert bool(_PLACEHOLDER.search(text) or code_spans(text)) <= bool(quick)
    assert mask(text).originals == _unchecked(text, _PLAIN)
    assert mask(text, markup=True).originals == _unchecked(text, _PLACEHOLDER)


def _unchecked(text: str, pattern: re.Pattern[str]) -> tuple[str, ...]:
    """What mask finds with no quick check: fenced blocks, inline code between them, and the
    whole pattern between those."""
    out: list[str] = []
    at = 0
    for a, b in [*fences(text), (len(text), len(text))]:
        for c, d in [*code_spans(text, at, a), (a, a)]:
            out += [m.group() for m in pattern.finditer(text, at, c)]
            out += [text[c:d]] if c < d else []
            at = d
        out += [text[a:b]] if a < b else []
        at = b
    return tuple(out)


def test_inline_code_is_found_in_linear_time() -> None:
    """Each run of backticks with no closing run of its length scanned the rest of its line:
    a line of runs of 1, 2, 3... backticks (388 KB) took 3.9 s to mask, holding the GIL; 0.07
    now. As Markdown, none of those runs is closed: no inline code. At 1.5 MB: 0.33 s here,
    32 s before; the bound is a slow host's margin, not a figure."""
    text = "".join("`" * n + "a" for n in range(1, 1760))
    started = time.perf_counter()
    assert mask(text).originals == ()
    assert time.perf_counter() - started < 8
    assert code_spans("a `b` c ``d`e`` f ```g`` h") == [(2, 5), (8, 15)]
    assert code_spans("`a\nb` c") == []  # not across a line


@pytest.mark.parametrize("split", ["1", "nonewlines", "0"])
def test_a_stray_fence_keeps_no_prose_from_the_model(split: SplitMode) -> None:
    """A ``` inside a line, or a fence never closed, opens no block: the prose after it was
    kept from the model up to the next ``` (in "0" and "nonewlines", the whole of it)."""
    text = (
        "Type ``` to open a block.\nThis prose must be translated.\n"
        "```js\ncode()\n```\nIntro.\n```\nNever closed: still prose to translate.\n"
    )
    units = plan(text, "en", TextOptions(split=split), Sizes(300, 200)).units
    words = " ".join(units)
    assert "This prose must be translated." in words
    assert "Never closed: still prose to translate." in words
    assert "{1}" in words and "code()" not in words  # the closed block, masked whole


def test_fences_follow_markdown() -> None:
    """A fence opens a line (after any indent) and is closed by a line of only a fence of the
    same character at least as long; a backtick fence's info string holds no backtick."""
    assert fences("````\n```\nnested\n```\n````\nafter") == [(0, 24)]
    assert fences("  ~~~ python\nx\n  ~~~~  \ny") == [(2, 21)]
    assert fences("```\nx\n~~~\n") == []  # another character closes nothing
    assert fences("```a`b\nx\n```\n") == []  # not an opening fence: the closing one opens
    assert fences("```\nx\n``` js\n") == []  # a line with an info string closes nothing


def test_unclosed_fences_take_linear_time() -> None:
    """Each fence line is looked at a bounded number of times: 50,000 openers never closed
    (a scan to the end from each would be quadratic) take well under a second."""
    text = "~~~x\n" * 50_000
    started = time.perf_counter()
    assert fences(text) == []
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize("marker", ["<g1>", "</g1>", "<x2/>", "< G3 >", "<x12>"])
def test_our_marker_lookalikes_in_plain_text_are_masked(marker: str) -> None:
    """A plain text's `<g1>` was sent as it is, with the prompt's note that it is an inline
    marker to keep around the words it wraps: a model moved, paired or dropped it, and a lost
    one was never put back. Masked, it comes back exactly once, as written."""
    text = f"Type {marker} to make the next word bold."
    m = mask(text)
    assert m.originals == (marker,) and "<" not in m.text
    out, repairs = m.unmask("Tapez pour mettre le mot suivant en gras.")
    assert out.count(marker) == 1 and repairs == [f"lost placeholder {marker!r} put back"]
    # A unit of markup taken apart holds real markers: they stay for the markup's repair.
    assert mask("Press <g1>OK</g1> <x2/>", markup=True).originals == ()


def test_marker_lookalikes_come_back_through_a_plan() -> None:
    text = "Use <g1>, </g1> and <x2/> in {name}'s template.\nA second line <g1>."
    p = plan(text, "en", TextOptions(), Sizes(300, 200))
    assert all("<" not in u for u in p.units)
    assert p.assemble(p.units) == (text, [])
    assert p.assemble([u.replace("{2}", "") for u in p.units])[0].count("</g1>") == 1


def test_long_base64_and_hex_runs_are_masked() -> None:
    """A data URI or a key of thousands of characters went to the model (175 s on the real
    engine, garbled back); masked, it passes through as it is."""
    blob = base64.b64encode(bytes(range(256)) * 15).decode()  # 5,120 characters
    for run in (blob, "data:image/png;base64," + blob, hashlib.sha256(b"x").hexdigest()):
        text = f"The image {run} is attached."
        m = mask(text)
        assert m.text == "The image {1} is attached." and m.originals == (run,)
        assert m.unmask("L'image {1} est jointe.")[0] == f"L'image {run} est jointe."
    # Words, however long, and runs without a digit or without a letter stay text.
    for text in (
        "Donaudampfschifffahrtsgesellschaftskapitaenswitwe",
        "Rechtsschutzversicherungsgesellschaften-Vertreterinnen",
        "1234567890123456789012345678901234567890123",
        "a short base64 dGhpcyBpcyBzaG9ydA== is fine",
    ):
        assert mask(text).originals == (), text


def test_hyphenated_words_with_a_digit_are_no_long_run() -> None:
    """A hyphenated compound of 40+ ASCII characters with a number in it read as a key and was
    kept from the model: German writes `40-Tonnen-Lkw-...`, English `state-of-the-art-...-v2`."""
    for words in (
        "40-Tonnen-Lkw-Fahrverbot-an-Sonntagen-und-Feiertagen-ab-2025",
        "state-of-the-art-text-to-speech-model-v2-for-production",
        "the-1990s-style-MP3-player-with-H2O-proof-casing-and-more",
    ):
        assert mask(f"Ein {words} gilt.").originals == (), words
    # A key in base64url, hyphens and all, still is one: its parts mix letters and digits.
    key = "dGhpcyBpcyBh-Z2VuZXJhdGVka2V5IGZvciB0ZXN0aW5nIHB1cnBvc2Vz"
    assert mask(f"The key {key} is here.").originals == (key,)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("密钥是", "请保存"),
        ("キーは", "です"),
        ("키는", "입니다"),
        ("รหัสคือ", "ครับ"),
        ("鍵：", "。"),
    ],
)
def test_a_long_run_right_beside_unspaced_script_is_masked(before: str, after: str) -> None:
    """Chinese, Japanese and Thai put no space around a key (nor Korean before its particle):
    their letters are word characters, so the run's edge failed and the key went to the model."""
    key = "abc123DEF456ghi789JKL012mno345PQR678stu901VWX234yz"
    m = mask(f"{before}{key}{after}")
    assert (m.text, m.originals) == (f"{before}{{1}}{after}", (key,))
    assert mask(f"<g1>{before}</g1>{key}{after}", markup=True).originals == (key,)


@pytest.mark.parametrize(
    "text",
    [
        "xéabc123DEF456ghi789JKL012mno345PQR678stu901VWX234yz",  # inside Latin words
        "abc123DEF456ghi789JKL012mno345PQR678stu901VWX234yzé",
        "Ключabc123DEF456ghi789JKL012mno345PQR678stu901VWX234yz",
        "40-Tonnen-Lkw-Fahrverbot-an-Sonntagen-und-Feiertagen-ab-2025では",  # still a compound
    ],
)
def test_a_run_inside_a_word_of_a_spaced_script_stays_text(text: str) -> None:
    assert mask(text).originals == ()


def test_a_long_run_is_one_unit_whatever_its_length() -> None:
    blob = base64.b64encode(bytes(range(256)) * 15).decode()
    text = f"See {blob} here. And then another sentence follows."
    p = plan(text, "en", TextOptions(), Sizes(300, 200))
    # the run is one token of its sentence, which is not cut for it (counted as its {1})
    assert p.units == ["See {1} here.", "And then another sentence follows."]
    assert p.assemble(p.units) == (text, [])


@pytest.mark.parametrize(
    ("text", "originals"),
    [
        ("请访问https://example.com了解更多信息。", ("https://example.com",)),
        (
            "详见https://zh.wikipedia.org/wiki/北京大学。",
            ("https://zh.wikipedia.org/wiki/北京大学",),
        ),
        ("https://example.com/search?q=北京&x=1，然后", ("https://example.com/search?q=北京&x=1",)),
        ("www.example.com请看", ("www.example.com",)),
        ("邮箱是admin@example.com请联系", ("admin@example.com",)),
        ("メールはbob@example.jpまで", ("bob@example.jp",)),
        ("图片data:image/png;base64,iVBORw0KGgo=请保存", ("data:image/png;base64,iVBORw0KGgo=",)),
        ("你好%s欢迎", ("%s",)),
        ("こんにちは%dさん", ("%d",)),
        # `%@`'s edge was a word boundary after `@`: masked before a letter only
        ("Hello %@ there", ("%@",)),
        ("Hello %@.", ("%@",)),
        # a spaced script's letters are still part of the word
        ("%success", ()),
        ("café@example.com", ("café@example.com",)),
        ("Mail bob.smith+x@mail.example.org now", ("bob.smith+x@mail.example.org",)),
    ],
)
def test_a_placeholder_right_beside_unspaced_script_ends_there(
    text: str, originals: tuple[str, ...]
) -> None:
    """Their letters are word characters: an address took the sentence around it
    (`邮箱是admin@example.com请联系` went to the model whole, untranslated), a URL the words
    after it, and `%s` before one was no placeholder."""
    assert mask(text).originals == originals


def test_addresses_beside_unspaced_script_are_found_in_linear_time() -> None:
    """Each letter after a Chinese one may start an address now: each must stop at the next."""
    for text in ("中a" * 50_000 + "@", "http://" + "中a" * 50_000, "a" * 100_000 + "@"):
        start = time.perf_counter()
        mask(text)
        assert time.perf_counter() - start < 1.0
