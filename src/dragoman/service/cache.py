"""The translation cache: finished translations of single units (a sentence, masked), keyed by
everything that decides the output (model, prompt and decoding settings, pair, text and the
neighbours it was shown), bounded by memory (an LRU over the bytes held). A repeated sentence,
in one document or across requests, costs no engine request. Outputs cut short (length) or
by the loop guard are not kept, nor replies kept despite failing the service's check: a retry
may do better. An entry keeps the tokens its translation cost with its text, and a hit reports
them: an answer's usage is the same from the cache as from the engine, so it does not tell one
caller what another translated. With a shared store (--cache-url, cache_store.py) this is the
first level: the store is read on its miss and written with it."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable

from cachetools import LRUCache

from dragoman.engine.prompts import InContext
from dragoman.engine.protocol import Terms, Translation
from dragoman.metrics import Metrics
from dragoman.service.cache_store import SharedStore
from dragoman.service.settings import ServeSettings

# Bump when prompts change what a model answers, or what an entry holds: cached translations
# of the old prompt go. 3: an entry holds its tokens (`pack`).
PROMPT_VERSION = "3"
# Bytes an entry costs besides its text: the key, the LRU's two dicts and its order's node
# (350-490 measured with tracemalloc, by where the dicts are in their doubling). At 200 the
# cache held 2.5x its --cache-mib (a Translation kept whole was another ~300 bytes).
_ENTRY_OVERHEAD = 480


def _size(text: str) -> int:
    return sys.getsizeof(text) + _ENTRY_OVERHEAD


class TranslationCache:
    def __init__(
        self, max_bytes: int, salt: str, metrics: Metrics, store: SharedStore | None = None
    ) -> None:
        self.enabled = max_bytes > 0
        self.store = store
        # Only the text and its tokens are kept (`pack`): a cached translation is a "stop" one,
        # and a hit did no engine work (no time).
        self._lru: LRUCache[bytes, str] = LRUCache(max(1, max_bytes), getsizeof=_size)
        self._salt = f"{PROMPT_VERSION}|{salt}"
        self._metrics = metrics

    def key(
        self, model: str, source: str, target: str, text: str, terms: Terms = (), form: str = ""
    ) -> bytes:
        """`form`: what the model runs as on this server (its engine plan's `form`)."""
        glossary = "\x1e".join(f"{s}\x1d{t}" for s, t in terms)
        fields = [self._salt, model, form, source, target, text, glossary]
        if isinstance(text, InContext):
            # Shown its neighbours, a sentence may be answered otherwise (that is their
            # point; and a small model sometimes translates one of them): such a reply is
            # no answer for the sentence alone, or beside other neighbours.
            fields += (text.before, text.after)
        raw = "\x1f".join(fields).encode()
        return hashlib.blake2b(raw, digest_size=16).digest()

    def get(self, key: bytes, need: int = 1) -> Translation | None:
        """The entry of `key`, when it was made from at least `need` candidates."""
        if not self.enabled:
            return None
        hit = self._lru.get(key)
        if hit is None or (need > 1 and made_of(hit) < need):
            self._metrics.local_misses.inc()
            return None
        return self._hit(hit)

    def get_all(self, keys: Iterable[bytes], need: int = 1) -> list[str] | None:
        """Every key's entry (`pack`) when the local cache holds them all, each counted as a
        hit (`as_hit` makes it a Translation); None, with nothing counted, at the first key it
        lacks (the rest are not looked at). Called on the event loop for up to a request's
        every unit: 50,000 hits took 114 ms as Translations counted one by one, 16 ms so."""
        if not self.enabled:
            return None
        held = list(keys)
        if not all(key in self._lru for key in held):
            return None
        texts = [self._lru[key] for key in held]
        if need > 1 and any(made_of(t) < need for t in texts):
            return None
        self._metrics.local_hits.inc(len(texts))
        return texts

    def _hit(self, text: str) -> Translation:
        self._metrics.local_hits.inc()
        return as_hit(text)

    async def fetch(self, key: bytes, need: int = 1) -> Translation | None:
        """On a local miss: the shared store's translation (None without a store, or when it
        has none or fails), kept locally too."""
        if self.store is None:
            return None
        entry = await self.store.get(key)
        if entry is None:
            return None
        try:
            hit = as_hit(entry)
        except ValueError:  # not an entry of this version: a miss
            return None
        if hit.candidates < need:
            return None
        self._keep(key, entry)
        return hit

    def put(self, key: bytes, value: Translation) -> None:
        """Keep `value` (a "stop" one) with the tokens it reports: those of every engine
        request it took (a reply asked again is charged both)."""
        if value.finish_reason != "stop":
            return
        entry = pack(value)
        self._keep(key, entry)
        if self.store is not None:
            self.store.put(key, entry)

    async def aclose(self) -> None:
        if self.store is not None:
            await self.store.aclose()

    def _keep(self, key: bytes, entry: str) -> None:
        if not self.enabled:
            return
        try:
            self._lru[key] = entry
        except ValueError:  # larger than the whole cache
            return
        self._metrics.cache_bytes.set(self._lru.currsize)


def pack(value: Translation) -> str:
    """A translation as an entry: its tokens, the candidates it was picked from and the
    lengths of its alternatives, then its text and its alternatives (one string: in the local
    cache and the shared store alike, a few bytes more than the text)."""
    alternatives = value.alternatives
    lengths = "".join(f" {len(a)}" for a in alternatives)
    head = f"{value.input_tokens} {value.output_tokens} {value.candidates}{lengths}"
    return f"{head}\x1f{value.text}{''.join(alternatives)}"


def made_of(entry: str) -> int:
    """The candidates an entry's translation was picked from."""
    fields = entry[: entry.find("\x1f")].split(" ")
    return int(fields[2]) if len(fields) > 2 else 1


def as_hit(entry: str) -> Translation:
    """An entry as its translation: a stop, with the tokens it cost and no engine work.
    ValueError if `entry` is not one `pack` made."""
    usage, sep, body = entry.partition("\x1f")
    if not sep:
        raise ValueError("not a cache entry")
    given, made, *rest = usage.split(" ")
    candidates = int(rest[0]) if rest else 1
    lengths = [int(n) for n in rest[1:]]
    end = len(body) - sum(lengths)
    if end < 0:
        raise ValueError("not a cache entry")
    alternatives = []
    at = end
    for n in lengths:
        alternatives.append(body[at : at + n])
        at += n
    return Translation(
        body[:end],
        "stop",
        int(given),
        int(made),
        0.0,
        0.0,
        cached=True,
        candidates=candidates,
        alternatives=tuple(alternatives),
    )


def settings_salt(settings: ServeSettings) -> str:
    """The settings that change what is answered for the same prompt: decoding, the replies'
    check, the architecture (an echo server given a fleet's store wrote its echoes under the
    real model's name), and what each served name of `[[models]]` is (an entry given another
    model or prompt kept its old translations). The weights and dtype are each model's
    resolved form (`TranslationService.key_of`), not these settings: `host` means another form
    on another host."""
    models = ";".join(f"{m.name}={m.model}/{m.prompt_format()}" for m in settings.models)
    return (
        f"{settings.repetition_penalty}|{settings.repeat_window}|{settings.max_output_tokens}|"
        f"{settings.output_ratio}|{settings.max_model_len}|{settings.retry_invalid}|"
        f"{settings.architecture}|{models}"
    )
