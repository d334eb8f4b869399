"""The real lingua detector, no mocks. Loading its models takes seconds and hundreds of MB,
so one detector per restriction is built for the module."""

from __future__ import annotations

import threading
import time

import pytest

from dragoman.detect import Candidate, Detection, LanguageDetector, pooled
from dragoman.detect._clean import has_language, strip_non_language
from dragoman.errors import ConfigError
from dragoman.languages import NAMES
from dragoman.text.letters import has_letters


@pytest.fixture(scope="module")
def detector() -> LanguageDetector:
    d = LanguageDetector(tuple(NAMES))
    d.load()
    return d


@pytest.fixture(scope="module")
def latin_three() -> LanguageDetector:
    return LanguageDetector(("en", "de", "fr"))


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("The quick brown fox jumps over the lazy dog.", "en"),
        ("Le chat dort sur le canapé depuis ce matin.", "fr"),
        ("Der Zug nach Berlin fährt heute später ab.", "de"),
        ("今日はとても良い天気ですね。", "ja"),
        ("오늘 날씨가 정말 좋네요.", "ko"),
        ("Привет, как у тебя дела сегодня?", "ru"),
        ("สวัสดีครับ วันนี้อากาศดีมาก", "th"),
    ],
)
def test_sentences_are_detected_right(detector: LanguageDetector, text: str, language: str) -> None:
    assert detector.detect(text).language == language


def test_each_text_of_a_mixed_batch_is_detected_on_its_own(detector: LanguageDetector) -> None:
    texts = ["Hello, how are you today?", "Bonjour, comment allez-vous ?", "Wie geht es dir heute?"]
    assert [d.language for d in detector.detect_many(texts)] == ["en", "fr", "de"]
    assert detector.detect_many([]) == []


@pytest.mark.parametrize("text", ["12345", "🙂🙂", "https://example.com/a?b=1", "", "  ", "{0} %s"])
def test_texts_without_letters_get_no_candidates(detector: LanguageDetector, text: str) -> None:
    found = detector.detect(text)
    assert found == Detection(candidates=(), has_letters=False)
    assert found.language is None


def test_texts_without_letters_in_a_batch_keep_their_place(detector: LanguageDetector) -> None:
    found = detector.detect_many(["42", "Wie geht es dir heute?", "mail@example.com"])
    assert [d.has_letters for d in found] == [False, True, False]
    assert [d.language for d in found] == [None, "de", None]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Hallo {name}, du hast %d neue Nachrichten", "de"),
        ("Bonjour %(username)s, vous avez %1$s nouveaux messages", "fr"),
        ("<b>Guten Morgen</b> [X1X], schau auf https://example.com/en/home", "de"),
        ("Écrivez à support@example.com {{firstName}} ${lastName}", "fr"),
    ],
)
def test_placeholders_do_not_flip_the_language(
    detector: LanguageDetector, text: str, language: str
) -> None:
    assert detector.detect(text).language == language


def test_placeholders_urls_and_digits_are_stripped_before_detection() -> None:
    cleaned = strip_non_language(
        "Hi {name}, %1$s <b>x</b> &amp; see https://a.io/x?y=1 or a@b.co 42"
    )
    assert cleaned == "Hi , x see or"


@pytest.mark.parametrize(
    "text",
    [
        "Save changes",
        "42 items, 3.5 MB",
        "123 456",
        "🙂 👍",
        "https://example.org/a?b=1",
        "www.example.org",
        "Visit https://example.org today",
        "mail me@example.org",
        "me@example.org",
        "{name} {{count}} ${total}",
        "Hello {name}",
        "%(count)d %1$s %-5.2f",
        "%s files",
        "[X1X] <b></b> <0></0>",
        "<b>Save</b>",
        "&amp; &#160;",
        "Tom & Jerry",
        "ratio 3:4 and a/b",
        "50% off",
        "[draft]",
        "é",
        "",
    ],
)
def test_has_language_is_letters_left_after_stripping(text: str) -> None:
    """The plain-text shortcut answers as the full strip does."""
    assert has_language(text) == has_letters(strip_non_language(text))


@pytest.mark.parametrize(("end", "language"), [(":", True), ("@", True), ("://x", False)])
def test_a_long_word_is_stripped_in_one_scan(end: str, language: bool) -> None:
    """A URL's scheme or an address was tried from every letter of a word, each try scanning
    the rest of it: 8,000 letters took a second, 200,000 would take ten minutes, with the
    server's loop held. Linear, it takes milliseconds: the deadline is hundreds of times that."""
    word = "a" * 200_000 + end
    started = time.monotonic()
    assert has_language(word) is language  # a word, or one long URL
    assert strip_non_language("see " + word + " now").startswith("see ")
    assert time.monotonic() - started < 10.0


def test_confidences_are_percentages_best_first_at_most_three(detector: LanguageDetector) -> None:
    for text in ["OK", "Speichern", "Hello, how are you today?", "Bonjour, comment allez-vous ?"]:
        found = detector.detect(text)
        assert 1 <= len(found.candidates) <= 3
        confidences = [c.confidence for c in found.candidates]
        assert confidences == sorted(confidences, reverse=True)
        assert all(0 < c <= 100 and c == round(c, 1) for c in confidences)
        assert len({c.language for c in found.candidates}) == len(found.candidates)


def test_a_script_that_names_its_language_is_certain(detector: LanguageDetector) -> None:
    assert detector.detect("안녕하세요").candidates == (Candidate("ko", 100.0),)
    assert detector.detect("ありがとう").candidates == (Candidate("ja", 100.0),)


def test_a_restricted_detector_answers_only_its_languages(latin_three: LanguageDetector) -> None:
    texts = [
        "Hola, ¿cómo estás hoy?",
        "Ciao, come stai oggi?",
        "Hoe gaat het vandaag met je?",
        "今日はとても良い天気ですね。",
        "오늘 날씨가 정말 좋네요.",
        "Привет, как у тебя дела?",
    ]
    for found in latin_three.detect_many(texts):
        assert {c.language for c in found.candidates} <= {"en", "de", "fr"}
    # Letters of a script none of its languages is written in: letters, but no candidate.
    assert latin_three.detect("오늘 날씨가 정말 좋네요.") == Detection((), has_letters=True)
    assert latin_three.detect("Привет, как у тебя дела?").language is None


def test_a_detector_loads_lazily_and_once_from_several_threads() -> None:
    d = LanguageDetector(("en", "es"))
    assert not d.loaded
    threads = [threading.Thread(target=d.load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert d.loaded
    built = d._lingua
    d.load()
    assert d._lingua is built
    assert d.detect("¿Dónde está la biblioteca?").language == "es"


def test_one_language_needs_no_model() -> None:
    d = LanguageDetector(("fr",))
    assert d.detect("whatever this is").candidates == (Candidate("fr", 100.0),)
    assert d.detect("2024").has_letters is False


@pytest.mark.parametrize(
    ("codes", "message"),
    [
        (("en", "xx"), "language detection: no model for language code 'xx' (ISO 639-1)"),
        (("en", "klingon"), "language detection: no model for language code 'klingon' (ISO 639-1)"),
        ((), "language detection needs at least one language"),
    ],
)
def test_an_unknown_code_is_a_config_error(codes: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        LanguageDetector(codes)
    assert exc.value.message == message


def test_pooled_averages_each_language_and_ranks_by_characters() -> None:
    """LibreTranslate's ranking for a list: a language's confidence is its average over the
    texts that name it, ranked by that times their characters."""
    short_fr = Detection((Candidate("fr", 90.0), Candidate("en", 10.0)))
    long_de = Detection((Candidate("de", 60.0), Candidate("en", 30.0)))
    nothing = Detection(has_letters=False)
    got = pooled([short_fr, long_de, nothing], [10, 100, 5])
    # de 60 x 100 = 6000; en 20 x 110 = 2200; fr 90 x 10 = 900
    assert got == (Candidate("de", 60.0), Candidate("en", 20.0), Candidate("fr", 90.0))
    assert pooled([nothing], [3]) == ()


def test_a_long_text_is_cleaned_on_its_start(
    latin_three: LanguageDetector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lingua reads 400 characters of a text, and all 60 KB were stripped for them (7.7 ms a
    text, the GIL held: 0.86 s of a 64-text /detect's 0.92). A start with too little to go on
    (links, numbers) still has the whole text read."""
    from dragoman.detect import detector as module

    read: list[int] = []

    def recorded(text: str) -> str:
        read.append(len(text))
        return strip_non_language(text)

    monkeypatch.setattr(module, "strip_non_language", recorded)
    prose = "Le chat dort sur le canapé depuis ce matin, et il ne veut pas se lever. " * 900
    assert latin_three.detect(prose).language == "fr"
    assert max(read) < len(prose) // 10  # its start
    read.clear()
    links = "https://example.com/page " * 400 + prose[:2000]
    assert latin_three.detect(links).language == "fr"  # the start had no letters: all of it
    assert max(read) == len(links)
    numbers = "1234 " * 10_000 + "Bonjour"
    assert latin_three.detect(numbers).has_letters


def test_a_script_is_told_from_each_character_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each letter's script was looked up (a Unicode name each): 4.5 ms for 3,200 kana."""
    from dragoman.detect import _clean

    looked: list[str] = []
    real = _clean._script

    def counted(ch: str) -> str:
        looked.append(ch)
        return real(ch)

    monkeypatch.setattr(_clean, "_script", counted)
    text = "これは日本語のテキストです。" * 200
    assert _clean.script_language(text, frozenset({"ja", "en"})) == "ja"
    assert len(looked) == len({ch for ch in text if ch.isalpha()})
