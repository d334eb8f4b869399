from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.text import segment
from dragoman.text.placeholders import mask, spans
from dragoman.text.segment import join, split

DOC = (
    "Our new release is out. It brings faster start-up and a smaller memory footprint!\n\n"
    "  What changed?\n"
    "- the engine starts in half the time\n"
    "- Dr. Smith's patch for the cache\n\n"
    "Thanks to everyone who helped.  See you soon.\n"
)


def cores(text: str, **kw: object) -> list[str]:
    return [p.core for p in split(text, "en", **kw) if p.core]  # type: ignore[arg-type]


def test_layout_is_kept_exactly() -> None:
    pieces = split(DOC, "en")
    assert join(pieces, [p.core for p in pieces if p.core]) == DOC
    assert cores(DOC)[:3] == [
        "Our new release is out.",
        "It brings faster start-up and a smaller memory footprint!",
        "What changed?",
    ]
    assert "Dr. Smith's patch for the cache" in cores(DOC)  # no split after "Dr."
    # List markers are layout: kept out of what the model sees.
    assert "the engine starts in half the time" in cores(DOC)
    numbered = cores("1. First step\n2) Second step\n* Third")
    assert {"First step", "Second step", "Third"} <= set(numbered)
    assert numbered == ["First step", "Second step", "Third"]
    # sentencex ends "1." at a line start as a sentence: the marker still joins its item.
    steps = cores("Steps:\n1. Open the file.\n2. Click Save.\n10) Close it.", min_chars=0)
    assert steps == ["Steps:", "Open the file.", "Click Save.", "Close it."]
    assert cores("-5 degrees today\n- ") == ["-5 degrees today", "-"]
    upper = join(pieces, [p.core.upper() for p in pieces if p.core])
    assert upper.count("\n") == DOC.count("\n") and upper.startswith("OUR NEW")


def test_short_texts_stay_whole_and_modes() -> None:
    assert cores("Hello there. How are you?") == ["Hello there. How are you?"]
    assert cores("Line one\nLine two") == ["Line one", "Line two"]
    assert cores(DOC, mode="0") == [DOC.strip()]
    soft = "This sentence goes on\nacross a line break. And ends."
    long_soft = soft + " " + "More words here. " * 15
    assert cores(long_soft, mode="nonewlines")[0] == "This sentence goes on\nacross a line break."


def test_cjk() -> None:
    text = "他说：“好的。”我们走吧。你呢？" * 10
    pieces = split(text, "zh", min_chars=0)
    assert len([p for p in pieces if p.core]) == 30
    assert join(pieces, [p.core for p in pieces if p.core]) == text


def test_a_long_sentence_is_cut_never_refused() -> None:
    sentence = ", ".join(f"clause number {i} of a very long sentence" for i in range(40)) + "."
    parts = cores(sentence, max_chars=120)
    assert all(len(p) <= 120 for p in parts) and len(parts) > 5
    assert parts[0].endswith(",")  # cut after a clause mark
    pieces = split(sentence, "en", max_chars=120)
    assert join(pieces, [p.core for p in pieces if p.core]) == sentence
    assert all(len(p) <= 50 for p in cores("x" * 400, max_chars=50))  # no space at all


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from([*"ab .!?\n\t,;", "。", "é", " Dr. ", "\n\n", "word"]), max_size=200
    ).map("".join),
    mode=st.sampled_from(["0", "1", "nonewlines"]),
    max_chars=st.integers(20, 300),
)
def test_pieces_always_join_back(text: str, mode: str, max_chars: int) -> None:
    pieces = split(text, "en", mode, max_chars=max_chars)  # type: ignore[arg-type]
    assert join(pieces, [p.core for p in pieces if p.core]) == text
    assert all(len(p.core) <= max_chars for p in pieces)
    assert all(p.core == p.core.strip() for p in pieces)


@pytest.mark.parametrize("lang", ["de", "fr", "ja", "ko", "ru", "th", "ar"])
def test_every_served_language_is_lossless(lang: str) -> None:
    text = "Erster Satz. Zweiter Satz!\nDritter? " * 20
    pieces = split(text, lang)
    assert join(pieces, [p.core for p in pieces if p.core]) == text


@pytest.mark.parametrize("mode", ["1", "nonewlines", "0"])
def test_a_text_past_10_kb_keeps_its_paragraph_breaks(mode: str) -> None:
    # sentencex drops a paragraph break at about every 10 KB of its input: nonewlines gave
    # it the whole text, and 13,500 characters came back 4 short.
    text = "Hello there. How are you?\n\n" * 500
    pieces = split(text, "en", mode)  # type: ignore[arg-type]
    assert join(pieces, [p.core for p in pieces if p.core]) == text


@pytest.mark.parametrize("mode", ["1", "nonewlines"])
def test_sentencex_is_given_a_window_at_a_time(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its time grows with the square of unclosed quotes: a line of 100,000 held the event
    # loop 10 s. Each window is cut after a sentence end where there is one.
    seen: list[str] = []
    real = segment.sentencex.segment

    def recorded(language: str, text: str) -> list[str]:
        seen.append(text)
        return list(real(language, text))

    monkeypatch.setattr(segment.sentencex, "segment", recorded)
    text = "“" * 5_000 + " word. " + "It goes on. " * 200
    pieces = split(text, "en", mode)  # type: ignore[arg-type]
    assert join(pieces, [p.core for p in pieces if p.core]) == text
    assert max(map(len, seen)) <= 1_000
    assert all(s.endswith(". ") for s in seen[5:-1])


def test_nonewlines_reads_each_piece_once_for_its_sentence_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Lines that end no sentence join the next; the joined piece was read whole again at
    # each line (100 KB of headings took 5-20 s).
    read = 0
    real = segment._SENTENCE_END

    class Counted:
        def search(self, text: str) -> re.Match[str] | None:
            nonlocal read
            read += len(text)
            return real.search(text)

    monkeypatch.setattr(segment, "_SENTENCE_END", Counted())
    text = "A heading\n\n" * 2_000
    pieces = split(text, "en", "nonewlines")
    assert join(pieces, [p.core for p in pieces if p.core]) == text
    assert read <= len(text)


URL = "https://docs.example.com/guide/settings?section=display,time,numbers"


def held_whole(text: str, max_chars: int, mode: str = "1") -> bool:
    """Whether each placeholder of `text` on one line lies inside one piece's core."""
    pieces = split(text, "en", mode, max_chars=max_chars)  # type: ignore[arg-type]
    assert join(pieces, [p.core for p in pieces if p.core]) == text
    cores, at = [], 0
    for p in pieces:
        cores.append((at + len(p.lead), at + len(p.lead) + len(p.core)))
        at += len(p.lead) + len(p.core) + len(p.trail)
    return all(
        any(a <= start and end <= b for a, b in cores)
        for start, end in spans(text)
        if "\n" not in text[start:end]
    )


@pytest.mark.parametrize(
    "text",
    [
        # A clause mark inside a URL in the second half: the cut fell after "display,", and
        # the model got "numbers before you start" to translate.
        "You can change the language of the interface, the time zone of the dates shown, "
        "the format of numbers and the colours of the editor, and read more about each of "
        f"them in the user guide at {URL} before you start with the first of the steps.",
        # A URL longer than a piece: it was cut into pieces of letters sent to the model.
        "Download it from https://example.com/" + "a" * 1_000 + " and install it.",
        # Inline code with spaces where the length falls.
        "Restart the server and check all the logs " * 4
        + "then run `dragoman serve --architecture echo --port 8000` to test.",
    ],
)
def test_a_placeholder_is_never_cut(text: str) -> None:
    assert held_whole(text, 200)


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            [*"ab .,;:\n", " Dr. ", "word", URL, "`a b, c`", "%(name)s", ":smile:", "a@b.co"]
        ),
        max_size=120,
    ).map("".join),
    mode=st.sampled_from(["0", "1", "nonewlines"]),
    max_chars=st.integers(20, 300),
)
def test_pieces_hold_whole_placeholders(text: str, mode: str, max_chars: int) -> None:
    assert held_whole(text, max_chars, mode)


KEY = "dGhpcyBpcyBhIGtleSBvZiBzb21lIGxlbmd0aCAxMjM0NTY3ODkwIGZvciB0ZXN0aW5nIGl0" * 8


def test_a_placeholder_counts_as_the_token_the_model_gets() -> None:
    """A sentence around a 576-character key was cut into three requests, the key's `{1}`
    alone in one: the model sees 100 characters. Counted as its token, the key is no reason
    to cut; text longer than a piece besides it still is cut, never inside it."""
    sentence = f"Please copy the access key {KEY} into the settings field and restart the app."
    assert cores(sentence, max_chars=120) == [sentence]
    long = ", ".join(f"clause number {i} of the sentence" for i in range(8)) + f" {KEY} end."
    parts = cores(long, max_chars=120)
    assert len(parts) > 1 and sum(KEY in p for p in parts) == 1
    assert all(len(mask(p).text) <= 120 for p in parts)
    assert held_whole(long, 120)


@settings(max_examples=200, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            [*"ab.,;:\n。", "word", "密钥", "Dr.", URL, "`a b, c`", "%(name)s", ":smile:", KEY]
        ),
        max_size=120,
    ).map(" ".join),  # apart: a key glued to another placeholder is no key in the whole text
    mode=st.sampled_from(["0", "1", "nonewlines"]),
    max_chars=st.integers(20, 300),
)
def test_each_piece_fits_as_the_model_sees_it(text: str, mode: str, max_chars: int) -> None:
    """Every piece fits in `max_chars` with its placeholders counted as their tokens (as its
    own mask finds them), and its placeholders are whole."""
    pieces = split(text, "en", mode, max_chars=max_chars)  # type: ignore[arg-type]
    assert join(pieces, [p.core for p in pieces if p.core]) == text
    assert all(len(mask(p.core).text) <= max_chars for p in pieces)
    assert held_whole(text, max_chars, mode)


@pytest.mark.parametrize("brk", ["\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c"])
def test_every_line_break_ends_a_line(brk: str) -> None:
    # A lone CR, U+2028 or Word's \v went to the model inside one sentence, at its mercy.
    text = brk.join(["First line of the list", "Second line here", "Third line"]) + brk
    assert cores(text) == ["First line of the list", "Second line here", "Third line"]
    pieces = split(text, "en")
    assert join(pieces, [p.core for p in pieces if p.core]) == text


def test_a_byte_order_mark_and_zero_width_spaces_at_the_edges_are_layout() -> None:
    # A file read with its BOM sent it to the model, which drops it: the text lost it.
    text = "\ufeffHello world.\u200b\n\u2060Second line.\n"
    assert cores(text) == ["Hello world.", "Second line."]
    pieces = split(text, "en")
    assert join(pieces, [p.core for p in pieces if p.core]) == text


@pytest.mark.parametrize(
    "character",
    [
        "e\u0301",
        "👨\u200d👩\u200d👧",
        "🇫🇷",
        "👍🏽",
        "क्षि",
        "❤️",
        "ม่",
        "\u1100\u1161\u11a8",  # 각 as conjoining jamo (L V T), as macOS writes file names
        "\u1112\u1161",  # 하 (L V)
        "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # a tag flag
    ],
)
def test_a_hard_cut_keeps_each_character_whole(character: str) -> None:
    # Text without a space or clause mark is cut where the length falls: it gave the model
    # a letter without its accent, half an emoji or a flag's one letter.
    text = character * 100
    for max_chars in (20, 21, 22, 23):
        pieces = split(text, "en", "0", max_chars=max_chars)
        assert join(pieces, [p.core for p in pieces if p.core]) == text
        assert all(len(p.core) % len(character) == 0 for p in pieces), max_chars


@pytest.mark.parametrize(
    ("placeholder", "mark"),
    [("<0>", "\u0301"), ("`ab`", "\u200d"), ("%s", "\u0301"), ("{name}", "\u0308")],
)
def test_a_hard_cut_is_never_moved_into_a_placeholder(placeholder: str, mark: str) -> None:
    """A placeholder's last character and a mark on it are one user-perceived character: a
    hard cut right after the placeholder moved back to that character's start, inside it
    (`<0` and `>\u0301` went to the model apart). Counted as its `{1}`, a placeholder is
    often where a cut falls."""
    text = "x" * 25 + placeholder + mark + " tail"
    for max_chars in range(20, 36):
        assert held_whole(text, max_chars, "0"), max_chars
    text = "Gl0%s;中GtlAxMjM0NTY3ODkwIGZvciB0ZXN0aW5nIGl0www.example.org/p%s" + placeholder + mark
    assert held_whole(text, 31, "nonewlines")


def test_a_fenced_code_block_stays_one_piece() -> None:
    # Its lines went to the model one by one: `print("hello")  # greet` was translated.
    code = '```python\nimport dragoman\nprint("hello")  # greet\n```'
    text = f"Install it first.\n\n{code}\n\nThen run it.\n"
    assert cores(text, min_chars=0) == ["Install it first.", code, "Then run it."]
    # A ``` that opens no line is no fence: the block after it is still one piece (it paired
    # with the block's opening fence, and `code()` went to the model on its own).
    stray = "Type ``` to open a block.\n```js\ncode()\n```\n"
    assert cores(stray, min_chars=0) == ["Type ``` to open a block.", "```js\ncode()\n```"]
