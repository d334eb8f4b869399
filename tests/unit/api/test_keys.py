"""API keys on the native surface, per-key limits, and the metrics key."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import SecretStr

from dragoman.service import keys, textwork
from dragoman.service.keys import add_key

BODY = {"text": "hello", "source_lang": "en", "target_lang": "fr"}


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_keys_are_off_by_default(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve() as (_app, c):
        assert (await c.post("/v1/translate", json=BODY)).status_code == 200


async def test_missing_and_invalid_keys_are_401_with_exact_text(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keys"
    key = add_key(path, "alice")
    async with serve(api_keys_file=path) as (_app, c):
        r = await c.post("/v1/translate", json=BODY)
        assert r.status_code == 401
        assert r.json() == {
            "error": {
                "code": "missing_api_key",
                "message": "an API key is required: send Authorization: Bearer <key>",
            }
        }
        assert r.headers["www-authenticate"] == 'Bearer realm="dragoman"'
        r = await c.post("/v1/translate", json=BODY, headers={"Authorization": f"Basic {key}"})
        assert r.json()["error"]["code"] == "missing_api_key"
        r = await c.post("/v1/translate", json=BODY, headers=auth(key + "x"))
        assert r.status_code == 401
        assert r.json() == {
            "error": {"code": "invalid_api_key", "message": "the API key is not valid"}
        }
        assert 'error="invalid_token"' in r.headers["www-authenticate"]
        # Auth comes before validation: a stranger learns nothing about the request format.
        assert (await c.post("/v1/translate", json={})).status_code == 401
        assert (await c.post("/v1/translate", json=BODY, headers=auth(key))).status_code == 200
        # Probes and the language list stay open (the router learns pairs from it).
        for path_ in ("/health", "/ready", "/v1/languages"):
            assert (await c.get(path_)).status_code == 200
        metrics = (await c.get("/metrics", headers=auth(key))).text
    assert 'dragoman_rejected_total{reason="missing_api_key"} 3.0' in metrics
    assert 'dragoman_rejected_total{reason="invalid_api_key"} 1.0' in metrics
    assert key not in metrics


async def test_env_keys_work_and_a_revoked_key_stops_working(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(keys, "_RECHECK_SECONDS", 0.0)
    path = tmp_path / "keys"
    key = add_key(path, "alice")
    async with serve(api_keys_file=path, api_keys=SecretStr("env-key-1,env-key-2")) as (_app, c):
        assert (
            await c.post("/v1/translate", json=BODY, headers=auth("env-key-2"))
        ).status_code == 200
        assert (await c.post("/v1/translate", json=BODY, headers=auth(key))).status_code == 200
        path.write_text("")  # what `dragoman keys revoke alice` leaves
        r = await c.post("/v1/translate", json=BODY, headers=auth(key))
        assert r.json()["error"]["code"] == "invalid_api_key"


async def test_requests_per_minute_limit_is_exact_with_retry_after(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keys"
    alice, bob = add_key(path, "alice"), add_key(path, "bob")
    async with serve(api_keys_file=path, key_requests_per_minute=3) as (_app, c):
        for _ in range(3):
            assert (
                await c.post("/v1/translate", json=BODY, headers=auth(alice))
            ).status_code == 200
        r = await c.post("/v1/translate", json=BODY, headers=auth(alice))
        assert r.status_code == 429
        assert r.json() == {
            "error": {
                "code": "rate_limited",
                "message": "this key's limit of 3 requests a minute is used up",
            }
        }
        assert 55 <= int(r.headers["retry-after"]) <= 60
        assert (await c.post("/v1/translate", json=BODY, headers=auth(bob))).status_code == 200
        metrics = (await c.get("/metrics", headers=auth(alice))).text
    # Usage by key name (the operator's), never by key.
    assert 'dragoman_key_requests_total{key_name="alice"} 3.0' in metrics
    assert 'dragoman_key_characters_total{key_name="alice"} 15.0' in metrics
    assert 'dragoman_key_requests_total{key_name="bob"} 1.0' in metrics
    assert 'dragoman_rejected_total{reason="rate_limited"} 1.0' in metrics
    assert alice not in metrics and bob not in metrics


async def test_characters_per_minute_limit_is_exact(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "keys"
    key = add_key(path, "alice")
    async with serve(api_keys_file=path, key_chars_per_minute=12) as (_app, c):
        two = {**BODY, "text": ["hello", "world!!"]}  # 12 characters
        assert (await c.post("/v1/translate", json=two, headers=auth(key))).status_code == 200
        r = await c.post("/v1/translate", json={**BODY, "text": "x"}, headers=auth(key))
        assert r.status_code == 429
        assert r.json()["error"]["message"] == (
            "this key's limit of 12 characters a minute is used up (12 used, 1 asked)"
        )
        r = await c.post("/v1/translate", json={**BODY, "text": "x" * 13}, headers=auth(key))
        assert r.status_code == 413
        assert r.json()["error"] == {
            "code": "text_too_long",
            "message": "the request has 13 characters; this key may send 12 a minute",
        }


LONG = "".join(f"Line {i}.\n" for i in range(2_500))


@pytest.mark.parametrize(
    ("text", "source", "hits"),
    [
        # Detection is awaited between the limits' check and the charge: all concurrent
        # requests passed both.
        ("Good morning, my friend.", "auto", 1),
        # A long request is cut, and its units keyed, in a thread between the check and the
        # charge; only the cache lookup, the admission and the charge follow it, on the loop.
        (LONG, "en", 2_500),
    ],
    ids=["detected", "long"],
)
async def test_concurrent_requests_keep_the_limits(  # type: ignore[no-untyped-def]
    serve, tmp_path: Path, text: str, source: str, hits: int
) -> None:
    assert text != LONG or len(text) > textwork.CUT_IN_THREAD
    path = tmp_path / "keys"
    key = add_key(path, "alice")
    body = {"text": text, "source_lang": source, "target_lang": "fr"}
    for limits in ({"key_requests_per_minute": 2}, {"key_chars_per_day": 2 * len(text)}):
        async with serve(api_keys_file=path, max_text_chars=100_000, **limits) as (_app, c):
            first = await c.post("/v1/translate", json=body, headers=auth(key))
            assert first.status_code == 200
            sent = [c.post("/v1/translate", json=body, headers=auth(key)) for _ in range(9)]
            statuses = sorted(r.status_code for r in await asyncio.gather(*sent))
            assert statuses == [200] + [429] * 8, limits
            metrics = (await c.get("/metrics", headers=auth(key))).text
        # Only the one admitted repeat's units were looked up: the refused counted no hits.
        assert f'dragoman_cache_hits_total{{level="local"}} {float(hits)}' in metrics, limits


async def test_unnamed_keys_are_not_counted_per_key(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(api_keys=SecretStr("k1")) as (_app, c):
        assert (await c.post("/v1/translate", json=BODY, headers=auth("k1"))).status_code == 200
        metrics = (await c.get("/metrics", headers=auth("k1"))).text
    assert "dragoman_key_requests_total{" not in metrics


async def test_metrics_key_protects_metrics_and_info_only(serve) -> None:  # type: ignore[no-untyped-def]
    async with serve(metrics_key=SecretStr("m-secret")) as (_app, c):
        r = await c.get("/metrics")
        assert r.status_code == 401
        assert r.json()["error"] == {
            "code": "missing_api_key",
            "message": "this endpoint needs Authorization: Bearer <metrics key>",
        }
        r = await c.get("/metrics", headers=auth("wrong"))
        assert r.json()["error"] == {
            "code": "invalid_api_key",
            "message": "the metrics key is not valid",
        }
        assert (await c.get("/v1/info")).status_code == 401
        assert (await c.get("/metrics", headers=auth("m-secret"))).status_code == 200
        assert (await c.post("/v1/translate", json=BODY)).status_code == 200  # keys off
