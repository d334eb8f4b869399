"""DeepL's stored glossaries across a fleet: real echo servers sharing a `--glossary-dir`, or a
Redis-protocol store (`--glossary-url`), behind the real `dragoman route`, driven by the real
`deepl` client. A glossary made through the proxy is found by every backend and outlives a
restart; backends that keep theirs apart are told so, not given glossaries that vanish at the
next request; a store that is down is a 503 for glossary requests only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import deepl
import httpx
import pytest

from dragoman.bench.servers import Launched, launch_echo
from dragoman.bench.store import Store
from tests.router.test_routing import start
from tests.stores import running_store

KEY = {"Authorization": "DeepL-Auth-Key x"}


@pytest.fixture  # its own: a test stops it
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    yield from running_store(tmp_path_factory)


def echo(logs: Path, stop_all: list[Launched], glossaries: Path | str) -> Launched:
    where = "--glossary-url" if isinstance(glossaries, str) else "--glossary-dir"
    server = launch_echo(logs, "en,de,fr", where, str(glossaries))
    stop_all.append(server)
    return server


def translated_with(url: str, glossary_id: str) -> httpx.Response:
    body = {
        "text": ["Open the dashboard."],
        "source_lang": "EN",
        "target_lang": "DE",
        "glossary_id": glossary_id,
    }
    return httpx.post(f"{url}/v2/translate", json=body, headers=KEY, timeout=30)


def test_a_glossary_made_through_the_proxy_is_found_by_every_backend_and_a_restart(
    logs: Path, stop_all: list[Launched]
) -> None:
    shared = logs / "glossaries"
    backends = [echo(logs, stop_all, shared) for _ in range(2)]
    router = start(logs, stop_all, *backends)
    client = deepl.Translator("x", server_url=router.url)
    glossary = client.create_glossary(
        "ui", source_lang="EN", target_lang="DE", entries={"dashboard": "Armaturenbrett"}
    )
    for server in (*backends, router):  # each backend, straight and through the proxy
        assert translated_with(server.url, glossary.glossary_id).status_code == 200
    result = client.translate_text(
        "Open the dashboard.", source_lang="EN", target_lang="DE", glossary=glossary
    )
    assert result.text
    assert [g.glossary_id for g in client.list_glossaries()] == [glossary.glossary_id]
    assert client.get_glossary_entries(glossary) == {"dashboard": "Armaturenbrett"}

    backends[0].stop()  # a restart: a new process on the same directory
    again = echo(logs, stop_all, shared)
    assert translated_with(again.url, glossary.glossary_id).status_code == 200

    client.delete_glossary(glossary)
    for server in (backends[1], again):
        assert translated_with(server.url, glossary.glossary_id).status_code == 404
    with pytest.raises(deepl.GlossaryNotFoundException):
        client.get_glossary(glossary.glossary_id)


def test_backends_keeping_their_glossaries_apart_are_refused_in_deepl_shape(
    logs: Path, stop_all: list[Launched]
) -> None:
    backends = [echo(logs, stop_all, logs / f"glossaries-{i}") for i in range(2)]
    router = start(logs, stop_all, *backends)
    r = httpx.get(f"{router.url}/v2/glossaries", headers=KEY)
    assert r.status_code == 400  # no DeepL client retries it
    assert "--glossary-url" in r.json()["message"] and "--glossary-dir" in r.json()["message"]
    assert r.headers["x-dragoman-error"] == "glossaries_not_shared"
    client = deepl.Translator("x", server_url=router.url)
    with pytest.raises(deepl.DeepLException, match="glossary-dir"):
        client.create_glossary("ui", source_lang="EN", target_lang="DE", entries={"a": "b"})
    for b in backends:  # nothing was made on either
        assert httpx.get(f"{b.url}/v2/glossaries", headers=KEY).json() == {"glossaries": []}


def test_backends_sharing_a_store_share_glossaries_and_a_store_down_is_a_503(
    logs: Path, stop_all: list[Launched], store: Store
) -> None:
    backends = [echo(logs, stop_all, store.url) for _ in range(2)]
    router = start(logs, stop_all, *backends)
    stores = {httpx.get(f"{b.url}/ready").json()["glossary_store"] for b in backends}
    assert len(stores) == 1 and None not in stores
    client = deepl.Translator("x", server_url=router.url)
    glossary = client.create_glossary(
        "ui", source_lang="EN", target_lang="DE", entries={"dashboard": "Armaturenbrett"}
    )
    for server in (*backends, router):  # made through one backend, found on each
        assert translated_with(server.url, glossary.glossary_id).status_code == 200
    assert client.get_glossary_entries(glossary) == {"dashboard": "Armaturenbrett"}
    assert [g.glossary_id for g in client.list_glossaries()] == [glossary.glossary_id]

    backends[0].stop()  # a restart: a new process on the same store
    again = echo(logs, stop_all, store.url)
    assert httpx.get(f"{again.url}/ready").json()["glossary_store"] in stores
    assert translated_with(again.url, glossary.glossary_id).status_code == 200
    client.delete_glossary(glossary)  # through the proxy: gone on both, which had used it
    for server in (backends[1], again):
        assert translated_with(server.url, glossary.glossary_id).status_code == 404

    kept = client.create_glossary("ui", source_lang="EN", target_lang="DE", entries={"a": "b"})
    store.stop()  # the store goes down under a working fleet
    r = httpx.get(f"{router.url}/v2/glossaries", headers=KEY, timeout=30)
    assert r.status_code == 503 and "glossary store" in r.json()["message"]
    assert r.headers["x-dragoman-error"] == "glossary_store_error"
    assert translated_with(router.url, kept.glossary_id).status_code == 503
    body = {"text": ["Open the dashboard."], "source_lang": "EN", "target_lang": "DE"}
    r = httpx.post(f"{router.url}/v2/translate", json=body, headers=KEY, timeout=30)
    assert r.status_code == 200, r.text  # translations without a glossary: unaffected
