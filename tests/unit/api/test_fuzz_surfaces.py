"""Property-based, for the compatible surfaces: whatever a client sends to LibreTranslate's or
DeepL's endpoints, as JSON, a form or raw bytes, the answer is below 500 and every refusal has
that surface's own error shape. HTTP layer on the fake engine (the detector is real)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import httpx
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.api.test_fuzz import DEADLINE_5XX, FUZZ, values

LT_FIELDS = ["q", "source", "target", "format", "alternatives", "api_key"]
DEEPL_FIELDS = ["text", "source_lang", "target_lang", "formality", "glossary_id", "tag_handling"]
CODES = ["en", "fr", "de", "zh-Hans", "zh", "pb", "auto", "EN-US", "PT-BR", "xx", ""]

lt_bodies = (
    st.fixed_dictionaries(
        {},
        optional={
            "q": st.text(max_size=40) | st.lists(st.text(max_size=30), max_size=6) | values,
            "source": st.sampled_from(CODES) | values,
            "target": st.sampled_from(CODES) | values,
            "format": st.sampled_from(["text", "html", ""]) | values,
            "alternatives": st.integers(-3, 5) | values,
            "api_key": st.none() | st.text(max_size=10),
        },
    )
    | values
)
deepl_bodies = (
    st.fixed_dictionaries(
        {},
        optional={
            "text": st.lists(st.text(max_size=30), max_size=6) | values,
            "source_lang": st.sampled_from(CODES) | values,
            "target_lang": st.sampled_from(CODES) | values,
            "formality": st.sampled_from(["default", "more", "prefer_less"]) | values,
            "glossary_id": st.none() | st.text(max_size=5),
        },
    )
    | values
)
forms = st.lists(
    st.tuples(
        st.sampled_from(LT_FIELDS + DEEPL_FIELDS) | st.text(max_size=6), st.text(max_size=30)
    ),
    max_size=8,
)

PATHS = {
    "libretranslate": ["/translate", "/detect"],
    "deepl": ["/v2/translate", "/v2/languages", "/v2/usage"],
}


def assert_shaped(r: httpx.Response, surface: str) -> None:
    if r.status_code == 200:
        return
    body = r.json()
    message = body["error"] if surface == "libretranslate" else body["message"]
    assert isinstance(message, str) and message, r.text
    assert set(body) == ({"error"} if surface == "libretranslate" else {"message"}), r.text
    if r.status_code >= 500:
        # Only a deadline the client set itself can make a 5xx; none is set here.
        assert (r.status_code, "") in DEADLINE_5XX, r.text


@FUZZ
@given(body=lt_bodies, path=st.sampled_from(PATHS["libretranslate"]))
async def test_libretranslate_any_json(client: httpx.AsyncClient, body: Any, path: str) -> None:
    r = await client.post(path, content=json.dumps(body), headers=_JSON)
    assert_shaped(r, "libretranslate")


@FUZZ
@given(body=deepl_bodies, path=st.sampled_from(PATHS["deepl"]))
async def test_deepl_any_json(client: httpx.AsyncClient, body: Any, path: str) -> None:
    r = await client.post(path, content=json.dumps(body), headers=_JSON)
    assert_shaped(r, "deepl")


@FUZZ
@given(
    form=forms,
    surface_path=st.sampled_from([(s, p) for s, ps in PATHS.items() for p in ps]),
    multipart=st.booleans(),
)
async def test_any_form_or_query(
    client: httpx.AsyncClient,
    form: list[tuple[str, str]],
    surface_path: tuple[str, str],
    multipart: bool,
) -> None:
    surface, path = surface_path
    if multipart:
        r = await client.post(path, files=[(k, (None, v)) for k, v in form])
    else:
        r = await client.post(path, params=form)
        assert_shaped(r, surface)
        r = await client.post(path, content=urlencode(form), headers=_FORM)
    assert_shaped(r, surface)


@FUZZ
@given(
    raw=st.binary(max_size=200),
    kind=st.sampled_from(
        [
            "application/json",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
            "text/plain",
        ]
    ),
    surface_path=st.sampled_from([(s, p) for s, ps in PATHS.items() for p in ps]),
)
async def test_any_bytes(
    client: httpx.AsyncClient, raw: bytes, kind: str, surface_path: tuple[str, str]
) -> None:
    surface, path = surface_path
    r = await client.post(path, content=raw, headers={"content-type": kind})
    assert_shaped(r, surface)


_JSON = {"content-type": "application/json"}
_FORM = {"content-type": "application/x-www-form-urlencoded"}
