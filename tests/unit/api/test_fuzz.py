"""Property-based: whatever a client sends, the native surface answers below 500, and every
refusal has the one error shape. HTTP layer on the fake engine (the engine is not under test)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FIELDS = ["text", "source_lang", "target_lang", "timeout"]
CODES = ["en", "fr", "de", "zh", "xx", "", "EN", "en-US", "auto"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=60)
    | st.sampled_from(CODES)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)
bodies = (
    st.fixed_dictionaries(
        {},
        optional={
            "text": values | st.lists(st.text(max_size=40), max_size=8),
            "source_lang": st.sampled_from(CODES) | values,
            "target_lang": st.sampled_from(CODES) | values,
            "timeout": values,
        },
    )
    | values
)

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# The only 5xx a client can cause: a deadline it set itself too short to meet.
DEADLINE_5XX = {(504, "deadline_exceeded"), (503, "deadline_unmeetable")}


def assert_well_formed(r: httpx.Response) -> None:
    if r.status_code == 200:
        return
    error = r.json()["error"]
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    assert r.status_code < 500 or (r.status_code, error["code"]) in DEADLINE_5XX, r.text


@FUZZ
@given(body=bodies)
async def test_any_json_body_gets_an_answer_below_500(client: httpx.AsyncClient, body: Any) -> None:
    r = await client.post("/v1/translate", content=json.dumps(body), headers=_JSON)
    assert_well_formed(r)


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
async def test_any_bytes_get_an_answer_below_500(client: httpx.AsyncClient, raw: bytes) -> None:
    r = await client.post("/v1/translate", content=raw, headers=_JSON)
    assert_well_formed(r)


@FUZZ
@given(
    limit=st.text(max_size=12) | st.floats(allow_nan=True).map(str),
    path=st.sampled_from(["/v1/translate", "/v1/languages", "/v1/info", "/health", "/ready"]),
)
async def test_any_timeout_header_and_path_get_an_answer_below_500(
    client: httpx.AsyncClient, limit: str, path: str
) -> None:
    headers = {**_JSON, "x-request-timeout": limit.encode("ascii", "ignore").decode()}
    body = {"text": "Hello", "source_lang": "en", "target_lang": "fr"}
    if path == "/v1/translate":
        r = await client.post(path, json=body, headers=headers)
        assert_well_formed(r)
    else:
        r = await client.get(path, headers=headers)
        assert r.status_code == 200, (path, r.status_code, r.text)


_JSON = {"content-type": "application/json"}
