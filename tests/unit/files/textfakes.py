"""What the text formats' tests share: a fake translation that goes through the service's own
planning (placeholders masked, markup taken apart, layout kept) and upper-cases what the model
would see, and a fuzz check that a reader only ever reads a file or raises BadFile."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dragoman.errors import BadFile
from dragoman.files.base import Limits, Parsed
from dragoman.service.documents import Sizes, TextOptions, plan

_OUTSIDE_TAGS = re.compile(r"(<[^<>]*>)")


def shout(text: str) -> str:
    """A model's fake answer: letters upper-cased, markers (`<g1>`) and masks (`{1}`) left."""
    return "".join(
        part if part.startswith("<") else part.upper() for part in _OUTSIDE_TAGS.split(text)
    )


def translate(parsed: Parsed, model: Callable[[str], str] = shout) -> list[str]:
    """Each segment's translation as the service would hand it back with `model` as the engine."""
    out = []
    for seg in parsed.segments:
        p = plan(seg.text, "en", TextOptions(markup=seg.markup), Sizes(300, 200), None)
        text, _ = p.assemble([model(u) for u in p.units])
        out.append(text)
    return out


def mutated(sample: bytes) -> st.SearchStrategy[bytes]:
    """Random bytes, and the sample with bytes changed, inserted and cut."""

    @st.composite
    def edit(draw: st.DrawFn) -> bytes:
        data = bytearray(sample)
        for _ in range(draw(st.integers(1, 6))):
            at = draw(st.integers(0, len(data)))
            chunk = draw(st.binary(max_size=8))
            cut = draw(st.integers(0, 8))
            data[at : at + cut] = chunk
        return bytes(data)

    return st.one_of(st.binary(max_size=300), edit())


def fuzz(read: Callable[[bytes, Limits], Parsed], sample: bytes, examples: int = 80) -> None:
    """A reader given hostile bytes either reads them, and the result renders (as it is and
    translated), or raises BadFile; never anything else."""

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(mutated(sample))
    def check(data: bytes) -> None:
        try:
            parsed = read(data, Limits())
        except BadFile:
            return
        assert isinstance(parsed.render([s.text for s in parsed.segments]), bytes)
        assert isinstance(parsed.render(translate(parsed)), bytes)

    check()
