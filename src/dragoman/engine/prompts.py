"""Prompt building, output budgets and the guard against degenerate repetition."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.languages import language_name

SYSTEM = "You are a professional translator. Reply with the translation only, no notes."


def chat_messages(text: str, source: str, target: str) -> list[dict[str, str]]:
    user = (
        f"Translate the following {language_name(source)} text into "
        f"{language_name(target)}.\n\n{text}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def output_budget(text_tokens: int, ratio: float, cap: int) -> int:
    """Tokens a translation may use: proportional to the input, never past the cap.
    Scripts differ in tokens per word (CJK often needs more), hence the generous ratio."""
    return max(1, min(cap, int(ratio * text_tokens) + 16))


def repetition_start(
    tokens: Sequence[int], min_span: int, min_copies: int = 3, max_unit: int = 16
) -> int | None:
    """If `tokens` ends with one unit of 1..max_unit tokens repeated back to back, at least
    `min_copies` times and over at least `min_span` tokens, return the index where the second
    copy of the run starts (what to keep); else None. Looping greedy output on this model repeats
    units from one token ("빠르게 빠르게 ...") to a dozen ("그의 봉이 봉을 높이고, ...")."""
    if min_span < 2:
        return None
    n = len(tokens)
    for unit in range(1, max_unit + 1):
        copies = max(min_copies, -(-min_span // unit))
        span = unit * copies
        if span > n:
            break
        first = tokens[n - unit :]
        if any(tokens[n - span + i] != first[i % unit] for i in range(span - unit)):
            continue
        # Walk back over earlier copies so only the first of the run is kept.
        start = n - span
        while start - unit >= 0 and list(tokens[start - unit : start]) == list(first):
            start -= unit
        return start + unit
    return None
