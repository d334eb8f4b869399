"""`dragoman plan` settings: the target load, where the measured figures are, and the day to
simulate. Every flag has its DRAGOMAN_ twin (`--p99` / `DRAGOMAN_P99`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from dragoman.settings import _Base, comma_list


class PlanSettings(_Base):
    # inf and NaN pass gt/ge checks and then overflow the replica count or the simulation.
    model_config = SettingsConfigDict(allow_inf_nan=False)

    rps: float = Field(default=5.0, gt=0, le=1e6)
    """Peak requests per second to plan for (one text each)."""

    p99: float = Field(default=20.0, gt=0)
    """p99 latency target of a request, in seconds."""

    words: str = "6:0.35,15:0.25,40:0.25,120:0.15"
    """Text-length mix: words:weight, comma separated."""

    pairs: str = "en-fr:0.25,en-de:0.2,en-es:0.2,en-zh:0.2,en-ko:0.15"
    """Language-pair mix: pair:weight, comma separated (the bench's target mix by default)."""

    bench_results: Path = Path("benchmarks/results")
    """Folder of committed `dragoman bench` results, one sub-folder per run."""

    results: list[Path] = Field(default_factory=list)
    """Use exactly these results (folders or results.json) instead of every run found under
    --bench-results."""

    host_classes: list[str] = Field(default_factory=list)
    """Plan only for these host classes (avx512-bf16, avx2, ...); default: every one found."""

    max_num_seqs: int = Field(default=16, ge=1)
    """The engine batch width the replicas run with: only figures measured with it count."""

    max_admitted: int | None = Field(default=None, ge=1)
    """Admission bound per replica in the simulation; default 4 x max_num_seqs, as serve's."""

    headroom: float = Field(default=0.8, gt=0, le=1)
    """Share of a replica's capacity the plan fills at the peak: open-loop arrivals bunch up,
    and a replica run at its full capacity has no slack for them."""

    simulate: bool = False
    """Simulate a traffic day against the plan's replicas (or --replicas)."""

    replicas: int | None = Field(default=None, ge=1)
    """Replicas in the simulation; default: the plan's for the first host class."""

    trough: float = Field(default=0.25, ge=0, le=1)
    """Night rate as a share of the peak (the diurnal curve is a cosine between them)."""

    peak_hour: float = Field(default=14.0, ge=0, lt=24)
    """Hour of the day's peak."""

    bursts: int = Field(default=6, ge=0)
    """Bursts in the day, at random times."""

    burst_factor: float = Field(default=2.0, ge=1, le=1000)
    """Rate multiplier during a burst."""

    burst_seconds: float = Field(default=120.0, gt=0)
    """Length of a burst."""

    hours: int = Field(default=24, ge=1, le=24 * 7)
    """Hours to simulate."""

    seed: int = 0
    """Seed of the simulation (the same seed gives the same day)."""

    check: Path | None = None
    """A fresh bench run (folder) to check the prediction against: its texts' lengths and
    languages are the mix, its measured req/s at the p99 target the answer."""

    @field_validator("results", "host_classes", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return comma_list(value)

    @field_validator("words")
    @classmethod
    def _words(cls, value: str) -> str:
        from dragoman.plan.model import parse_words

        parse_words(value)
        return value

    @field_validator("pairs")
    @classmethod
    def _pairs(cls, value: str) -> str:
        from dragoman.plan.model import parse_pairs

        return ",".join(f"{pair}:{w:g}" for pair, w in parse_pairs(value))
