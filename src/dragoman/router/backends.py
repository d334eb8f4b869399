"""Backend pool: which backend serves which language pairs, its health, its load, and the
choice of backend for a request (healthy, serves the pair, fewest outstanding requests)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dragoman.errors import DragomanError, Rejected, UnsupportedLanguage
from dragoman.languages import Pair


class NoHealthyBackend(Rejected):
    status_code = 503
    code = "no_healthy_backend"


class BackendsBusy(Rejected):
    status_code = 503
    code = "backends_busy"


class GlossariesNotShared(DragomanError):
    """The backends keep their stored glossaries apart: one made on one would be missing on
    the next."""

    # 4xx, not 5xx: DeepL's clients re-send a 5xx five times, and no retry can help this
    status_code = 400
    code = "glossaries_not_shared"


Want = tuple[str | None, str | None]
"""The pair a request needs; None for a side it leaves open (a detected source; a request that
is not a translation)."""
ANY: Want = (None, None)


def describe(want: Want) -> str:
    return f"{want[0] or 'any'}->{want[1] or 'any'}"


@dataclass
class Backend:
    name: str
    url: str
    pairs: set[Pair] = field(default_factory=set)
    learn_pairs: bool = True  # ask the backend's /v1/languages
    max_in_flight: int = 64
    healthy: bool = False  # admitted only after its first passing health check
    fails: int = 0  # consecutive failed checks or requests
    passes: int = 0  # consecutive passed checks
    outstanding: int = 0
    glossary_store: str | None = None  # the glossary store its /ready names

    @property
    def sources(self) -> int:
        """How many source languages it serves: where a detected source is best detected."""
        return len({s for s, _ in self.pairs})

    def serves(self, want: Want) -> bool:
        if want == ANY:
            return True
        source, target = want
        if source is not None and target is not None:
            return (source, target) in self.pairs
        return any(target in (None, t) and source in (None, s) for s, t in self.pairs)


class Pool:
    def __init__(
        self,
        backends: list[Backend],
        fail_threshold: int,
        recover_threshold: int,
        readmit_seconds: int = 2,
    ):
        names = [b.name for b in backends]
        if len(set(names)) != len(names):
            raise ValueError("backend names must be unique")
        self.backends = backends
        self.fail_threshold = fail_threshold
        self.recover_threshold = recover_threshold
        self.readmit_seconds = readmit_seconds
        """About how long an ejected backend takes to be admitted again: the Retry-After of
        a refusal for want of a healthy one."""

    def pick(
        self,
        want: Want,
        exclude: set[str] = frozenset(),  # type: ignore[assignment]
        widest: bool = False,
    ) -> Backend:
        """The healthy backend serving `want` with the fewest outstanding requests (`widest`:
        among those serving the most source languages first). Ties go to the first
        configured (stable, predictable)."""
        serving = [b for b in self.backends if b.serves(want)]
        if not serving:
            if any(b.learn_pairs and not b.pairs for b in self.backends):
                # a backend not reached yet may serve it: not the client's error
                raise NoHealthyBackend(
                    f"no backend reached yet serves {describe(want)}; retry later",
                    retry_after=self.readmit_seconds,
                )
            raise UnsupportedLanguage(f"no backend serves {describe(want)}")
        healthy = [b for b in serving if b.healthy and b.name not in exclude]
        if not healthy:
            raise NoHealthyBackend(
                f"no healthy backend serves {describe(want)}; retry later",
                retry_after=self.readmit_seconds,
            )
        if widest:  # the widest, even when they are full: a narrower one would misdetect
            most = max(b.sources for b in healthy)
            healthy = [b for b in healthy if b.sources == most]
        free = [b for b in healthy if b.outstanding < b.max_in_flight]
        if not free:
            raise BackendsBusy(
                f"every backend serving {describe(want)} is at its limit", retry_after=1
            )
        return min(free, key=lambda b: b.outstanding)

    def glossary_store(self) -> str:
        """The glossary store every backend shares (so a glossary made through one is
        found through any), or raise: 503 while one has not said which it uses, 400 when
        they differ."""
        unknown = [b.name for b in self.backends if b.glossary_store is None]
        if unknown:
            raise NoHealthyBackend(
                f"stored glossaries need every backend to share them; {', '.join(unknown)} "
                "has not said where it keeps them (not reached yet, or an older server)",
                retry_after=self.readmit_seconds,
            )
        if len({b.glossary_store for b in self.backends}) > 1:
            raise GlossariesNotShared(
                "stored glossaries are kept per server and these backends keep theirs apart: "
                "give every backend the same --glossary-url (a Redis-protocol store) or "
                "--glossary-dir (one machine's directory, or a shared volume), or send "
                "glossary terms with native requests"
            )
        return str(self.backends[0].glossary_store)

    def record_failure(self, backend: Backend) -> bool:
        """A failed check or request; returns True when this ejects the backend."""
        backend.passes = 0
        backend.fails += 1
        if backend.healthy and backend.fails >= self.fail_threshold:
            backend.healthy = False
            return True
        return False

    def record_success(self, backend: Backend, from_check: bool) -> bool:
        """A passed check or request; returns True when this (re)admits the backend."""
        backend.fails = 0
        if not from_check or backend.healthy:
            return False
        backend.passes += 1
        if backend.passes >= self.recover_threshold:
            backend.healthy = True
            backend.passes = 0
            return True
        return False

    def eject(self, backend: Backend) -> None:
        """Passive ejection: the backend could not be reached; out until checks pass again."""
        backend.healthy = False
        backend.passes = 0
        backend.fails = max(backend.fails, self.fail_threshold)

    def served_pairs(self) -> dict[Pair, list[str]]:
        """The pairs the healthy backends serve, and which serve each."""
        out: dict[Pair, list[str]] = {}
        for b in self.backends:
            if not b.healthy:
                continue
            for pair in sorted(b.pairs):
                out.setdefault(pair, []).append(b.name)
        return out
