"""The extractor of the per-host summaries (`summary.py`) for two `dragoman eval` runs of the
same texts: the pairs' mean chrF and the outputs in the wrong language, one run against the
other. A field it needs that is missing raises `FigureError`, as in `_summary_studies.py`."""

from __future__ import annotations

import statistics
from typing import Any

from dragoman.bench._summary_studies import FigureError, Row, Source, field, nonempty, number, times


def _pairs(doc: Any) -> dict[str, tuple[float, int, int]]:
    """Each pair's corpus chrF over all its texts, wrong-language outputs and outputs checked."""
    rows = nonempty(doc, "summary")
    if not isinstance(rows, list):
        raise FigureError("summary is no list")
    out = {}
    for i in range(len(rows)):
        if field(doc, "summary", i, "kind") == "all":
            out[str(field(doc, "summary", i, "pair"))] = (
                number(doc, "summary", i, "chrf"),
                int(number(doc, "summary", i, "wrong_language")),
                int(number(doc, "summary", i, "language_checked")),
            )
    if not out:
        raise FigureError("summary holds no pair's `all` row")
    return out


def evals(doc: Any, against: Any, source: Source) -> list[Row]:
    """Two `dragoman eval` runs of the same texts: the pairs' mean chrF and, where both were
    judged by the same rules, the outputs in the wrong language; the first against the second
    (`source.label` names both)."""
    label = source.label
    mine, theirs = _pairs(doc), _pairs(against)
    if set(mine) != set(theirs):
        raise FigureError(f"the runs' pairs differ: {sorted(mine)} against {sorted(theirs)}")
    pairs = sorted(mine)
    chrf = statistics.mean(mine[p][0] for p in pairs)
    other = statistics.mean(theirs[p][0] for p in pairs)
    wrong, checked = (sum(mine[p][k] for p in pairs) for k in (1, 2))
    wrong_o, checked_o = (sum(theirs[p][k] for p in pairs) for k in (1, 2))
    rows = [
        Row(
            f"chrF, mean of {len(pairs)} pairs ({', '.join(pairs)}), {label}",
            f"{chrf:.2f}",
            f"{chrf - other:+.2f} points, {times(chrf, other, 3)} ({other:.2f})",
        )
    ]
    if source.languages:
        rows.append(
            Row(
                f"outputs in the wrong language, {label}",
                f"{wrong}/{checked}",
                f"{times(wrong, wrong_o)} ({wrong_o}/{checked_o})"
                if wrong_o
                else f"against {wrong_o}/{checked_o}",
            )
        )
    return rows
