"""Documents on the real engine: layout, HTML, long texts, placeholders and the cache."""

from __future__ import annotations

import collections
import re

import httpx
import pytest
from lxml import html as lxml_html

pytestmark = pytest.mark.integration

WORDS = (
    "engine cache router proxy detector segmenter parser guard admission deadline queue model "
    "tokenizer prompt budget metric key quota drain probe batch stream server client limit "
    "header body timeout label plan"
)
LAYOUT = (
    "Welcome to the new help center. Here you will find answers to common questions.\n\n"
    "Before you start:\n"
    "- create an account\n"
    "- check your e-mail\n\n"
    "If something goes wrong, contact our support team. We answer within a day.\n"
)
PAGE = (
    '<div class="article"><h1 title="Getting started">Getting started</h1>'
    '<p>Click <a href="/settings" class="btn">the <b>Save</b> button</a> to keep your '
    "changes &amp; settings.</p>"
    "<pre><code>make install</code></pre>"
    '<p translate="no">dragoman</p>'
    "<p>Read the <i>full</i> guide.<br>It is short.</p>"
    '<img src="cat.png" alt="A sleeping cat"></div>'
)


async def translate(c: httpx.AsyncClient, text: str, **kw: object) -> dict[str, object]:
    body = {"text": text, "source_lang": "en", "target_lang": "fr", **kw}
    r = await c.post("/v1/translate", json=body)
    assert r.status_code == 200, r.text
    item: dict[str, object] = r.json()["translations"][0]
    return item


def engine_requests(metrics: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("vllm:request_success_total")
    )


def tags(markup: str) -> collections.Counter[tuple[str, tuple[tuple[str, str], ...]]]:
    """Every element with its attributes, translatable attributes left out."""
    tree = lxml_html.fragment_fromstring(markup, create_parent="div")
    return collections.Counter(
        (el.tag, tuple(sorted((k, v) for k, v in el.attrib.items() if k not in ("title", "alt"))))
        for el in tree.iter()
    )


async def test_layout_is_kept(client: httpx.AsyncClient) -> None:
    out = str((await translate(client, LAYOUT))["text"])
    assert [len(p) > 0 for p in out.split("\n")] == [len(p) > 0 for p in LAYOUT.split("\n")]
    assert [line.startswith("- ") for line in out.split("\n")] == [
        line.startswith("- ") for line in LAYOUT.split("\n")
    ]
    assert out.endswith("\n") and out != LAYOUT


async def test_html_page_keeps_every_tag_and_attribute(client: httpx.AsyncClient) -> None:
    out = str((await translate(client, PAGE, format="html"))["text"])
    assert tags(out) == tags(PAGE)
    assert "<pre><code>make install</code></pre>" in out
    assert '<p translate="no">dragoman</p>' in out
    assert "Getting started</h1>" not in out or "title=" in out  # the heading was translated
    r = await client.post(
        "/v1/translate",
        json={
            "text": "<p>unclosed <b>bold",
            "source_lang": "en",
            "target_lang": "fr",
            "format": "html",
        },
    )
    assert r.status_code == 200  # malformed HTML is repaired by the parser, not refused


async def test_placeholders_survive(client: httpx.AsyncClient) -> None:
    tokens = ["%(name)s", "{count}", "%1$s", "{{var}}", ":smile:", "https://example.com/a?b=1"]
    text = (
        f"Hello {tokens[0]}, you have {tokens[1]} new messages from {tokens[2]} {tokens[3]} "
        f"{tokens[4]}; see {tokens[5]} for details."
    )
    out = str((await translate(client, text))["text"])
    for token in tokens:
        assert out.count(token) == 1, (token, out)


async def test_a_long_text_and_the_cache(client: httpx.AsyncClient) -> None:
    """30,000 characters: 30 different sentences in paragraphs, repeated. The repeats join the
    first in flight or come from the cache: the engine sees each sentence once."""
    sentences = [
        f"Section {i} explains how the {word} works and why it matters to every user."
        for i, word in enumerate(WORDS.split())
    ]
    paragraph = " ".join(sentences)
    text = "\n\n".join([paragraph] * (30_000 // len(paragraph) + 1))
    assert len(text) >= 30_000
    before = engine_requests((await client.get("/metrics")).text)
    item = await translate(client, text)
    out = str(item["text"])
    assert out.count("\n\n") == text.count("\n\n")
    used = engine_requests((await client.get("/metrics")).text) - before
    assert used <= len(sentences)
    # The same document again: every sentence from the cache, no engine request.
    before = engine_requests((await client.get("/metrics")).text)
    again = await translate(client, text)
    assert engine_requests((await client.get("/metrics")).text) == before
    assert again["text"] == out
    assert again["output_tokens"] == item["output_tokens"]  # a hit reports the miss's usage
    assert re.search(r"\d", out)
