"""The translation service: language detection of markup (fake engine, the real detector and
the real markup parser)."""

from __future__ import annotations

import pytest

from dragoman.metrics import Metrics
from dragoman.service.admission import Admission
from dragoman.service.deadline import Deadline
from dragoman.service.documents import TextOptions
from dragoman.service.keys import Caller
from dragoman.service.quota import KeyLimits
from dragoman.service.settings import ServeSettings
from dragoman.service.translated import Translated
from dragoman.service.translation import TranslationService
from tests.fakes import FakeTranslator

FRENCH = "<p>Bonjour tout le monde, comment allez-vous?</p>"
SCRIPT = (
    "<script>function showMessage(message) { if (window.console) { console.log('the message "
    "is ' + message); } return document.getElementById('main').value; }</script>"
)
STYLE = "<style>body { font-family: sans-serif; background-color: white; }</style>"


async def _translate(fake: FakeTranslator, texts: list[str], options: TextOptions) -> Translated:
    service = TranslationService(
        lambda: fake,
        ServeSettings(cache_mib=0),
        Metrics(),
        Admission(0, 16),
        KeyLimits(0, 0),
    )
    return await service.translate(texts, None, "en", Caller(None), Deadline.start(60), options)


ENGLISH = "The quick brown fox jumps over the lazy dog again and again, every single day."


@pytest.mark.parametrize(
    ("page", "options"),
    [
        (f"<html><head>{SCRIPT}{STYLE}</head><body>{FRENCH}</body></html>", "html"),
        (f"<div>{SCRIPT}{STYLE}{FRENCH}</div>", "html"),
        (f"<div>{FRENCH}<pre>{SCRIPT}</pre><p translate='no'>{ENGLISH}</p></div>", "html"),
        (f"<div>{FRENCH}<brand>{ENGLISH}</brand></div>", "html ignore"),
        (f"<div>{FRENCH}<brand>{ENGLISH}</brand></div>", "xml ignore"),
    ],
)
async def test_markup_is_detected_from_the_text_it_translates(page: str, options: str) -> None:
    """It was detected on the raw markup: a script and stylesheet (or code, or a part kept as
    it is) outweighed the French paragraph, read as English, and the page came back as it
    was, untranslated."""
    kind, _, ignore = options.partition(" ")
    fake = FakeTranslator()
    out = await _translate(
        fake,
        [page],
        TextOptions(markup=kind, ignore_tags=("brand",) if ignore else ()),  # type: ignore[arg-type]
    )
    assert out.sources == ["fr"]
    assert "[en] Bonjour tout le monde" in out.results[0].text
    assert out.results[0].text.count("[en]") == 1  # the rest kept as it is


async def test_markup_whose_letters_are_all_in_code_comes_back_as_it_is() -> None:
    fake = FakeTranslator()
    page = f"<div>{SCRIPT}<code>print('Hello there, how are you today?')</code></div>"
    out = await _translate(fake, [page, FRENCH], TextOptions(markup="html"))
    assert out.sources == [None, "fr"]
    assert out.results[0].text == page
    assert out.results[0].finish_reason == "unchanged"
    assert fake.started == 1


def _key(**settings: object) -> bytes:
    service = TranslationService(
        FakeTranslator,
        ServeSettings(**{"retry_invalid": True, **settings}),  # type: ignore[arg-type]
        Metrics(),
        Admission(0, 16),
        KeyLimits(0, 0),
    )
    return service.key_of(FakeTranslator(), "Good morning.", "en", "fr", ())


def test_the_cache_key_covers_every_setting_that_changes_the_reply() -> None:
    # A fleet shares its store: an echo server given its URL wrote echoes under the real
    # model's name, and a [[models]] entry given another model or prompt kept the old one's.
    spec = {"name": "qwen", "model": "qwen2.5-coder-0.5b-instruct", "languages": ["en", "fr"]}
    other = {**spec, "model": "gemma-3-270m"}
    changed = [
        {"architecture": "echo"},
        {"weights": "w4a16"},
        {"gguf_weights": "q8_0"},
        {"dtype": "float32"},  # a translator with no plan is keyed by the settings as given
        {"retry_invalid": False},
        {"repetition_penalty": 1.1},
        {"models": [spec]},
        {"models": [other]},
        {"models": [{**spec, "prompt": "few-shot"}]},
    ]
    keys = [_key(), *(_key(**c) for c in changed)]
    assert len(set(keys)) == len(keys)
    # Settings that change no reply share the cache.
    assert _key(port=9000, cache_mib=1, max_items=8) == _key()
    assert _key(models=[{**spec, "prompt": "chat"}]) == _key(models=[spec])  # its default
