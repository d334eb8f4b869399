"""Documents through the service at the HTTP layer (fake engine: it answers "[fr] <text>"):
sentences as concurrent engine requests, layout kept, placeholders masked, the cache."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import httpx
import pytest

from dragoman.service import textwork, translation
from tests.fakes import FakeTranslator
from tests.unit.api.conftest import wait_for

DOC = (
    "Our new release is out. It brings faster start-up and a smaller memory footprint!\n\n"
    "What changed?\n"
    "- the engine starts in half the time\n"
    "- a patch for the cache\n\n"
    "Thanks to everyone who helped. See you soon.\n"
)
SENTENCES = [
    "Our new release is out.",
    "It brings faster start-up and a smaller memory footprint!",
    "What changed?",
    "the engine starts in half the time",
    "a patch for the cache",
    "Thanks to everyone who helped.",
    "See you soon.",
]


def body(text: str, **kw: object) -> dict[str, object]:
    return {"text": text, "source_lang": "en", "target_lang": "fr", **kw}


def threads_calling(monkeypatch: pytest.MonkeyPatch, name: str) -> list[threading.Thread]:
    """The thread of each call of the service module's `name`, in order (it still runs)."""
    threads: list[threading.Thread] = []
    real = getattr(translation, name)

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(translation, name, recorded)
    return threads


async def test_sentences_run_concurrently_and_the_layout_is_kept(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    async with serve(max_text_chars=10_000) as (_app, client):
        r = await client.post("/v1/translate", json=body(DOC))
    assert r.status_code == 200, r.text
    out = r.json()["translations"][0]["text"]
    expected = DOC
    for s in SENTENCES:
        expected = expected.replace(s, f"[fr] {s}", 1)
    assert out == expected
    assert fake.started == len(SENTENCES)  # more than max_items (4): they took turns


@pytest.mark.parametrize("zero", ["0", 0])  # as DeepL's clients send it, a number too
async def test_split_sentences_zero_sends_the_text_whole(
    client: httpx.AsyncClient, fake: FakeTranslator, zero: object
) -> None:
    text = DOC[:150]  # short enough to be one unit
    r = await client.post("/v1/translate", json=body(text, split_sentences=zero))
    assert (
        r.json()["translations"][0]["text"] == f"[fr] {text.strip()}" + text[len(text.rstrip()) :]
    )
    assert fake.started == 1


async def test_placeholders_are_masked_for_the_model_and_restored(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    seen: list[str] = []
    real = fake.translate

    async def spy(text: str, source: str, target: str, terms=()):  # type: ignore[no-untyped-def]
        seen.append(text)
        return await real(text, source, target, terms)

    fake.translate = spy  # type: ignore[method-assign]
    r = await client.post(
        "/v1/translate", json=body("Hello %(name)s, see {count} at https://x.org/a")
    )
    assert seen == ["Hello {1}, see {2} at {3}"]
    assert (
        r.json()["translations"][0]["text"] == "[fr] Hello %(name)s, see {count} at https://x.org/a"
    )


async def test_numbers_only_come_back_without_engine_work(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    r = await client.post("/v1/translate", json=body(["12:30", "%s", "Hello"]))
    items = r.json()["translations"]
    assert [i["text"] for i in items] == ["12:30", "%s", "[fr] Hello"]
    assert [i["finish_reason"] for i in items] == ["unchanged", "unchanged", "stop"]
    assert fake.started == 1


async def test_a_repeat_comes_from_the_cache(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    first = await client.post("/v1/translate", json=body("Good morning"))
    assert first.status_code == 200
    r = await client.post("/v1/translate", json=body(["Good morning", "Good evening"]))
    assert [i["text"] for i in r.json()["translations"]] == [
        "[fr] Good morning",
        "[fr] Good evening",
    ]
    assert fake.started == 2
    hit = r.json()["translations"][0]
    assert hit["inference_seconds"] == 0
    metrics = (await client.get("/metrics")).text
    assert 'dragoman_cache_hits_total{level="local"} 1.0' in metrics
    # The engine's tokens: two translations of two words, not the hit's (12 in, 2 out each).
    assert 'dragoman_translation_tokens_total{direction="input"} 24.0' in metrics
    assert 'dragoman_translation_tokens_total{direction="output"} 4.0' in metrics


async def test_a_hit_reports_the_usage_a_miss_does(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    """Usage that said 0 tokens for a cache hit told any caller that another had translated
    the same text (with the same glossary and context): a hit reports the miss's tokens."""
    miss = await client.post("/v1/translate", json=body("Good morning"))
    hit = await client.post("/v1/translate", json=body("Good morning"))
    assert fake.started == 1
    fields = ("input_tokens", "output_tokens")
    assert [hit.json()["translations"][0][f] for f in fields] == [
        miss.json()["translations"][0][f] for f in fields
    ]
    assert hit.json()["usage"] == miss.json()["usage"] == {"input_tokens": 12, "output_tokens": 2}


async def test_repeated_sentences_in_one_document_cost_one_request(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    text = "Click save to keep your work. " * 12
    async with serve(max_text_chars=10_000) as (_app, client):
        r = await client.post("/v1/translate", json=body(text.strip()))
    assert r.json()["translations"][0]["text"].count("[fr] Click save") == 12
    assert fake.started == 1


async def test_a_long_text_far_beyond_the_context(serve, fake: FakeTranslator) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(f"This is sentence number {i} of a long document." for i in range(700))
    assert len(text) > 30_000
    async with serve(max_text_chars=100_000) as (_app, c):
        r = await c.post("/v1/translate", json=body(text))
        assert r.status_code == 200
        out = r.json()["translations"][0]["text"]
        assert out.count("[fr] ") == 700
        r = await c.post("/v1/translate", json=body("x " * 60_000))
        assert r.status_code == 413


async def test_a_document_of_many_sentences_runs_in_as_many_tasks_as_places(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    # A task a sentence made 100,000 for a list of short lines, each run a step before the
    # loop answered anything else (/ready waited 3 s) and +156 MB held.
    text = "".join(f"Line {i}.\n" for i in range(400))
    fake.gate = asyncio.Event()
    async with serve(max_text_chars=10_000) as (_app, c):
        before = len(asyncio.all_tasks())
        sent = asyncio.create_task(c.post("/v1/translate", json=body(text)))
        await wait_for(lambda: fake.running == 4)  # max_items places
        assert len(asyncio.all_tasks()) - before < 20
        fake.gate.set()
        r = await sent
    assert r.json()["translations"][0]["text"] == text.replace("Line", "[fr] Line")
    assert fake.started == 400


async def test_a_long_request_is_cut_into_sentences_off_the_event_loop(
    serve, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # 3 MB of short lines held the loop 5 s while they were cut (/ready unanswered).
    threads = threads_calling(monkeypatch, "plan")
    long = "".join(f"Line {i}.\n" for i in range(3_000))
    assert len(long) > textwork.CUT_IN_THREAD
    async with serve(max_text_chars=100_000) as (_app, c):
        assert (await c.post("/v1/translate", json=body("A short one."))).status_code == 200
        assert (await c.post("/v1/translate", json=body(long))).status_code == 200
    assert threads[0] is threading.main_thread()  # a short request: no thread hop
    assert threads[1] is not threading.main_thread()


async def test_a_long_page_to_detect_is_parsed_off_the_event_loop(
    serve, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # With the source to detect, pages were parsed on the loop before detection: 64 pages of
    # 60 KB held /ready 3.4 s (a given source parses them in the plan, off the loop).
    threads = threads_calling(monkeypatch, "parse")
    page = "".join(f"<p>Ceci est la phrase {i} d'une longue page.</p>" for i in range(600))
    assert len(page) > textwork.CUT_IN_THREAD
    async with serve(max_text_chars=100_000) as (_app, c):
        for text in ("<p>Une phrase courte.</p>", page):
            r = await c.post(
                "/v1/translate",
                json={"text": text, "source_lang": "auto", "target_lang": "en", "format": "html"},
            )
            assert r.status_code == 200, r.text
            assert r.json()["translations"][0]["detected_source_lang"] == "fr"
    assert threads[0] is threading.main_thread()  # a short request: no thread hop
    assert threads[1] is not threading.main_thread()


async def test_a_long_request_is_checked_and_put_back_together_off_the_event_loop(
    serve, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # Each whole text's letters check (a given source) and the rebuild of every text from its
    # units' translations ran on the loop: 64 pages of 60 KB held /ready 0.3 s and 1.8 s.
    checked: dict[str, threading.Thread] = {}
    real_check = translation.needs_translation

    def check(text: str) -> bool:
        checked[text] = threading.current_thread()
        return real_check(text)

    monkeypatch.setattr(translation, "needs_translation", check)
    combined = threads_calling(monkeypatch, "combine")
    long = "".join(f"<p>Line {i}.</p>" for i in range(2_000))
    assert len(long) > textwork.CUT_IN_THREAD
    async with serve(max_text_chars=100_000) as (_app, c):
        for text in ("<p>A short one.</p>", long):
            r = await c.post("/v1/translate", json=body(text, format="html"))
            assert r.status_code == 200, r.text
    assert checked["<p>A short one.</p>"] is threading.main_thread()  # short: no thread hop
    assert combined[0] is threading.main_thread()
    assert checked[long] is not threading.main_thread()
    assert combined[1] is not threading.main_thread()


async def test_a_long_requests_jobs_and_cache_keys_are_made_off_the_event_loop(
    serve, fake: FakeTranslator, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # Each unit's request (its neighbours, its glossary terms) and its cache key were made on
    # the loop, between the limits' check and the charge: 64 pages of 60 KB held /ready
    # 0.4 s, repeated (all cached) as much. Made with the cut, each key once per unit.
    terms = threads_calling(monkeypatch, "terms_in")
    keyed: list[threading.Thread] = []
    real_key_of = translation.TranslationService.key_of

    def key_of(self, *args):  # type: ignore[no-untyped-def]
        keyed.append(threading.current_thread())
        return real_key_of(self, *args)

    monkeypatch.setattr(translation.TranslationService, "key_of", key_of)
    long = "".join(f"<p>Line {i}.</p>" for i in range(2_000))
    assert len(long) > textwork.CUT_IN_THREAD
    glossary = {"Line": "Ligne"}
    async with serve(max_text_chars=100_000, sentence_context="both") as (_app, c):
        r = await c.post("/v1/translate", json=body("<p>A short one.</p>", format="html"))
        assert r.status_code == 200, r.text
        assert terms == [threading.main_thread()]  # a short request: no thread hop
        assert keyed == [threading.main_thread()]  # its one unit keyed once
        for run in ("cold", "cached"):
            keyed.clear()
            terms.clear()
            r = await c.post("/v1/translate", json=body(long, format="html", glossary=glossary))
            assert r.status_code == 200, r.text
            assert threading.main_thread() not in keyed + terms, run
            assert len(keyed) == len(terms) == 2_000, run  # once per unit
        metrics = (await c.get("/metrics")).text
    assert fake.started == 1 + 2_000  # the repeat came from the cache
    assert 'dragoman_cache_hits_total{level="local"} 2000.0' in metrics


async def test_a_long_text_keeps_its_paragraphs_with_nonewlines(serve) -> None:  # type: ignore[no-untyped-def]
    # sentencex, given the whole text, dropped a blank line at about every 10 KB.
    text = "".join(f"Paragraph {i} is here. It has two sentences.\n\n" for i in range(300))
    assert len(text) > 13_000
    async with serve(max_text_chars=100_000) as (_app, c):
        native = await c.post("/v1/translate", json=body(text, split_sentences="nonewlines"))
        deepl = await c.post(
            "/v2/translate",
            json={
                "text": [text],
                "source_lang": "EN",
                "target_lang": "FR",
                "split_sentences": "nonewlines",
            },
            headers={"authorization": "DeepL-Auth-Key any"},
        )
    expected = text.replace("Paragraph", "[fr] Paragraph").replace(" It", " [fr] It")
    assert native.json()["translations"][0]["text"] == expected
    assert deepl.json()["translations"][0]["text"] == expected


async def test_a_long_html_block_with_inline_tags_is_cut_between_its_tag_pairs(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    """A block with inline tags went to the engine whole whatever its length: past the model's
    context it was refused (413). It is now cut at sentences where no tag pair is open."""
    fake.max_words = 200
    long = " ".join(f"This is sentence number {i} of a long paragraph." for i in range(60))
    page = f'<p>Start <b>{long[:400]}</b> {long[400:]} See <a href="/x">the docs</a>.</p>'
    async with serve(max_text_chars=10_000) as (_app, c):
        r = await c.post("/v1/translate", json=body(page, format="html"))
    assert r.status_code == 200, r.text
    out = r.json()["translations"][0]["text"]
    assert out.count("<b>") == out.count("</b>") == 1 and '<a href="/x">' in out
    assert out.count("[fr] ") > 40  # sentence by sentence
    assert '[fr] See <a href="/x">the docs</a>.</p>' in out


async def test_native_html(client: httpx.AsyncClient) -> None:
    page = '<ul><li>First item</li><li>Second <i>item</i></li></ul><img alt="A cat" src="c.png">'
    r = await client.post("/v1/translate", json=body(page, format="html"))
    assert r.status_code == 200, r.text
    out = r.json()["translations"][0]["text"]
    assert "<li>[fr] First item</li>" in out and 'alt="[fr] A cat"' in out
    assert out.count("<i>") == 1 and 'src="c.png"' in out
    r = await client.post("/v1/translate", json=body("<a><b>broken</a>", format="xml"))
    assert r.status_code == 422 and "Tag handling parsing failed" in r.json()["error"]["message"]


async def test_html_nested_past_the_parsers_limit_is_refused(serve) -> None:  # type: ignore[no-untyped-def]
    deep = "<p>" + "<b>" * 300 + "hello" + "</b>" * 300 + "</p>"
    async with serve(max_text_chars=10_000) as (_app, c):
        r = await c.post("/v1/translate", json=body(deep, format="html"))
        assert r.status_code == 422
        assert r.json()["error"]["message"] == "HTML nested deeper than 255 elements"
        r = await c.post(
            "/v2/translate", data={"text": deep, "target_lang": "FR", "tag_handling": "html"}
        )
        assert r.status_code == 400
        assert r.json() == {"message": "HTML nested deeper than 255 elements"}


async def test_html_ending_inside_an_open_attribute_quote_is_refused_on_each_surface(
    client: httpx.AsyncClient,
) -> None:
    """The parser read the rest of the text as the value and dropped it: the answer was an
    empty text with a 200, the user's text gone."""
    page = '<p title="x>Hello world.</p><p>More text.</p>'
    where = 'quote (") opened at line 1, column 10 is never closed'
    r = await client.post("/v1/translate", json=body(page, format="html"))
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "invalid_request"
    assert where in r.json()["error"]["message"]
    r = await client.post(
        "/v2/translate", data={"text": page, "target_lang": "FR", "tag_handling": "html"}
    )
    assert r.status_code == 400 and where in r.json()["message"], r.text
    r = await client.post(
        "/translate", json={"q": page, "source": "en", "target": "fr", "format": "html"}
    )
    assert r.status_code == 400 and where in r.json()["error"], r.text
    # a page cut inside a tag hides no text after it: repaired as a browser does
    r = await client.post("/v1/translate", json=body('<p>Hello <a href="x', format="html"))
    assert r.status_code == 200 and r.json()["translations"][0]["text"] == "<p>[fr] Hello </p>"


async def test_a_glossary_reaches_the_model_and_misses_are_reported(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    seen: list[tuple[str, object]] = []
    real = fake.translate

    async def spy(text: str, source: str, target: str, terms=()):  # type: ignore[no-untyped-def]
        seen.append((text, terms))
        result = await real(text, source, target, terms)
        return result if "cloud" not in text else dataclasses.replace(result, text="[fr] nuage")

    fake.translate = spy  # type: ignore[method-assign]
    glossary = {"Save": "Enregistrer", "cloud": "nuagique", "absent": "absente"}
    r = await client.post(
        "/v1/translate", json=body(["Press Save now", "The cloud is up"], glossary=glossary)
    )
    items = r.json()["translations"]
    assert items[0]["text"] == "[fr] Press Enregistrer now"  # the fake honours it
    assert items[0]["glossary_missed"] == []
    assert items[1]["glossary_missed"] == ["cloud"]  # the "model" ignored it: reported
    assert dict(seen)["Press Save now"] == (("Save", "Enregistrer"),)  # only its own terms
    r = await client.post("/v1/translate", json=body("Hello", glossary={"": "x"}))
    assert r.status_code == 422


async def test_glossary_terms_are_looked_for_in_the_text_not_in_its_markup(
    client: httpx.AsyncClient, fake: FakeTranslator
) -> None:
    sent: list[object] = []
    real = fake.translate

    async def spy(text: str, source: str, target: str, terms=()):  # type: ignore[no-untyped-def]
        sent.append(terms)
        return await real(text, source, target, terms)

    fake.translate = spy  # type: ignore[method-assign]
    glossary = {"b": "bé", "href": "lien", "Acme Cloud": "Nuage Acme"}
    page = '<p><b>Hello</b> <a href="/x">there</a></p><p>Acme<br>Cloud</p>'
    r = await client.post("/v1/translate", json=body([page], glossary=glossary, format="html"))
    (item,) = r.json()["translations"]
    assert item["text"].count("<b>") == 1
    # No tag or attribute name is a term. A term across a <br> is one: it is sent with its
    # unit, and reported since the fake (replacing the exact string) cannot honour it there.
    assert sorted(map(tuple, sent)) == [(), (("Acme Cloud", "Nuage Acme"),)]
    assert item["glossary_missed"] == ["Acme Cloud"]


async def test_native_source_auto_detects_each_text(client: httpx.AsyncClient) -> None:
    texts = ["Good morning, how are you today?", "Guten Morgen, wie geht es dir heute?", "42"]
    r = await client.post(
        "/v1/translate", json={"text": texts, "source_lang": "auto", "target_lang": "fr"}
    )
    assert r.status_code == 200, r.text
    items = r.json()["translations"]
    assert [i.get("detected_source_lang") for i in items] == ["en", "de", None]
    assert [i["finish_reason"] for i in items] == ["stop", "stop", "unchanged"]


async def test_a_text_in_a_language_not_served_is_refused_on_every_surface(
    client: httpx.AsyncClient,
) -> None:
    """It came back unchanged, 200, and DeepL called it the target language (LibreTranslate:
    English, confidence 0): a client took it as already translated."""
    russian = "Привет мир, как дела?"
    deepl = {"authorization": "DeepL-Auth-Key any"}
    for path, body, headers, message in (
        (
            "/v1/translate",
            {"text": russian, "source_lang": "auto", "target_lang": "fr"},
            {},
            lambda r: r["error"]["message"],
        ),
        ("/translate", {"q": russian, "source": "auto", "target": "fr"}, {}, lambda r: r["error"]),
        (
            "/v2/translate",
            {"text": [russian, "42"], "target_lang": "FR"},
            deepl,
            lambda r: r["message"],
        ),
    ):
        r = await client.post(path, json=body, headers=headers)
        assert r.status_code == 400, (path, r.text)
        assert message(r.json()).startswith("text 0: its language is none this server"), r.text
    # given the source, it is translated as that language; digits alone stay unchanged
    r = await client.post(
        "/v1/translate", json={"text": [russian, "42"], "source_lang": "en", "target_lang": "fr"}
    )
    assert r.status_code == 200
    # in a list with texts it can place, one such item (a poll option "π") does not fail the
    # list: it comes back as it is
    texts = ["Good morning, how are you today?", russian, "π"]
    r = await client.post(
        "/v1/translate", json={"text": texts, "source_lang": "auto", "target_lang": "fr"}
    )
    assert r.status_code == 200, r.text
    items = r.json()["translations"]
    assert [i["finish_reason"] for i in items] == ["stop", "unchanged", "unchanged"]
    assert [i["text"] for i in items[1:]] == texts[1:]


async def test_split_sentences_null_is_the_default_and_true_is_refused(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/v1/translate", json=body("Hello. Bye.", split_sentences=None))
    assert r.status_code == 200, r.text
    r = await client.post("/v1/translate", json=body("Hello. Bye.", split_sentences=True))
    assert r.status_code == 422 and "split_sentences" in r.text


async def test_a_unit_that_fails_aborts_the_others_and_frees_every_place(
    serve, fake: FakeTranslator
) -> None:  # type: ignore[no-untyped-def]
    # The workers that take a long text's units in turn: one failing stops the others (each
    # cancelled in the engine), the units never started count as aborted, no place stays held.
    fake.max_words = 5
    fake.gate = asyncio.Event()  # the other units wait in the engine until the test says
    lines = [f"Line {i}." for i in range(10)]
    lines[2] = "one two three four five six seven."  # the fake's engine refuses it: 413
    async with serve(max_text_chars=10_000) as (app, c):
        r = await c.post("/v1/translate", json=body("\n".join(lines)))
        assert r.status_code == 413
        assert fake.running == 0 and fake.cancelled == 3  # the three others taken
        assert app.state.admission.in_flight == 0
        metrics = (await c.get("/metrics")).text
        assert "dragoman_aborted_total 9.0" in metrics  # all but the failed unit
        fake.gate.set()
        assert (await c.post("/v1/translate", json=body("Hello.\nAgain."))).status_code == 200
