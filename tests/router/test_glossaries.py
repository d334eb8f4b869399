"""DeepL's stored glossaries across a fleet: real echo servers sharing a `--glossary-dir`
behind the real `dragoman route`, driven by the real `deepl` client. A glossary made through
the proxy is found by every backend and outlives a restart; backends that keep theirs apart
are told so, not given glossaries that vanish at the next request."""

from __future__ import annotations

from pathlib import Path

import deepl
import httpx
import pytest

from dragoman.bench.servers import Launched, launch_echo
from tests.router.test_routing import start

KEY = {"Authorization": "DeepL-Auth-Key x"}


def echo(logs: Path, stop_all: list[Launched], glossaries: Path) -> Launched:
    server = launch_echo(logs, "en,de,fr", "--glossary-dir", str(glossaries))
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
    assert "--glossary-dir" in r.json()["message"]
    assert r.headers["x-dragoman-error"] == "glossaries_not_shared"
    client = deepl.Translator("x", server_url=router.url)
    with pytest.raises(deepl.DeepLException, match="glossary-dir"):
        client.create_glossary("ui", source_lang="EN", target_lang="DE", entries={"a": "b"})
    for b in backends:  # nothing was made on either
        assert httpx.get(f"{b.url}/v2/glossaries", headers=KEY).json() == {"glossaries": []}
