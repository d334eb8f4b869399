"""The ingress's translator over fake handles (no cluster): routing by pair, and a known pair
with no live replica answered 503 with Retry-After at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("ray.serve")

from dragoman.deploy.ray.gateway import GatewayTranslator, ReplicaView
from dragoman.deploy.ray.groups import ModelGroup
from dragoman.deploy.ray.retry import ModelUnavailable, RetryPolicy
from dragoman.engine.protocol import Translation
from dragoman.errors import UnsupportedLanguage

QWEN = ModelGroup("qwen", "qwen2.5-coder-0.5b-instruct", "chat", ("de", "en"), (("en", "de"),))
GEMMA = ModelGroup("gemma", "gemma-3-270m", "few-shot", ("en", "fr"), (("en", "fr"),))


class FakeMethod:
    def __init__(self, name: str, calls: list[str]) -> None:
        self.name, self.calls = name, calls

    async def _answer(self, text: str) -> Translation:
        return Translation(f"{self.name}:{text}", "stop", 1, 1, 0.0, 0.0)

    def remote(self, text: str, source: str, target: str, terms: Any) -> Any:
        self.calls.append(self.name)
        return self._answer(text)


class FakeHandle:
    def __init__(self, name: str, calls: list[str]) -> None:
        self.translate = FakeMethod(name, calls)


def gateway(view: ReplicaView | None = None) -> tuple[GatewayTranslator, list[str]]:
    calls: list[str] = []
    handles = {"qwen": FakeHandle("qwen", calls), "gemma": FakeHandle("gemma", calls)}
    roots = {"qwen": "/models/qwen"}
    return GatewayTranslator([QWEN, GEMMA], handles, roots, view, RetryPolicy()), calls


async def test_each_pair_goes_to_its_models_deployment() -> None:
    g, calls = gateway()
    assert (await g.translate("hi", "en", "fr")).text == "gemma:hi"
    assert (await g.translate("hi", "en", "de")).text == "qwen:hi"
    assert calls == ["gemma", "qwen"]
    assert g.languages == ("de", "en", "fr")
    assert g.model_for("en", "fr") == "gemma"
    assert g.pairs == {("en", "de"): "qwen", ("en", "fr"): "gemma"}
    assert g.chat_models() == {"qwen": "/models/qwen", "gemma": "gemma"}


async def test_a_pair_no_model_serves_is_unsupported() -> None:
    g, calls = gateway()
    with pytest.raises(UnsupportedLanguage):
        await g.translate("hi", "de", "fr")
    assert calls == []


async def test_a_known_pair_without_live_replicas_is_503_with_retry_after() -> None:
    # No reads come (the view is not running): the refusal waits for one, up to its bound.
    view = ReplicaView("dragoman", 0.01)
    view.running = {QWEN.deployment: 0, GEMMA.deployment: 2}
    g, calls = gateway(view)
    with pytest.raises(ModelUnavailable) as info:
        await g.translate("hi", "en", "de")
    assert info.value.status_code == 503
    assert "Retry-After" in info.value.headers()
    assert (await g.translate("hi", "en", "fr")).text == "gemma:hi"  # the other model answers
    assert calls == ["gemma"]
    await g.check_health()  # the ingress stays healthy meanwhile


def counted(view: ReplicaView, running: dict[str, int]) -> list[int]:
    """Replace the view's read of Serve's status with one that answers `running`; the list
    grows by one each read."""
    reads: list[int] = []

    def read() -> dict[str, int]:
        reads.append(1)
        return running

    view._status = read  # type: ignore[method-assign]
    return reads


async def _reads_within(view: ReplicaView, reads: list[int], want: int, seconds: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        if len(reads) >= want:
            return True
        await asyncio.sleep(0.01)
    return False


async def test_the_view_reads_at_the_idle_pace_until_a_replica_is_lost() -> None:
    view = ReplicaView("dragoman", interval=0.3)  # idle: every 3 s
    reads = counted(view, {QWEN.deployment: 1})
    task = asyncio.create_task(view.run())
    try:
        assert await _reads_within(view, reads, 1, 5)
        assert not await _reads_within(view, reads, 2, 1.0)  # all live: no read for 3 s
        view.poke()  # a transport failure: read again after one interval
        assert await _reads_within(view, reads, 2, 1.5)
    finally:
        task.cancel()


async def test_the_view_reads_every_interval_while_a_model_has_no_replica() -> None:
    view = ReplicaView("dragoman", interval=0.2)
    reads = counted(view, {QWEN.deployment: 0})
    task = asyncio.create_task(view.run())
    try:
        assert await _reads_within(view, reads, 4, 1.8)  # idle pace would be one in 2 s
        assert not view.live(QWEN.deployment)
    finally:
        task.cancel()


async def test_a_model_that_came_up_since_the_last_read_is_not_refused() -> None:
    view = ReplicaView("dragoman", 0.05)
    view.running = {QWEN.deployment: 0, GEMMA.deployment: 1}  # read while QWEN was loading
    counted(view, {QWEN.deployment: 1, GEMMA.deployment: 1})  # up by now
    task = asyncio.create_task(view.run())
    try:
        g, calls = gateway(view)
        assert (await g.translate("hi", "en", "de")).text == "qwen:hi"
        assert calls == ["qwen"]
    finally:
        task.cancel()
