"""Prompt building and output budgets."""

from __future__ import annotations

import re
from typing import Any, Literal

from dragoman.engine.protocol import Terms
from dragoman.errors import TextTooLong
from dragoman.languages import language_name
from dragoman.text.markup import MARKER_HINT

SYSTEM = "You are a professional translator. Reply with the translation only, no notes."


_MARKERS = re.compile(r"</?g\d+>|<x\d+/>")
_TOKENS = re.compile(r"\{\d+\}")
TOKEN_HINT = "Keep every placeholder like {1} exactly as it is."


def hints(text: str) -> str:
    """What the model is told about the markers and placeholders the text holds (the service
    puts them there: markup taken apart, placeholders masked)."""
    out = []
    if _MARKERS.search(text):
        out.append(MARKER_HINT)
    if _TOKENS.search(text):
        out.append(TOKEN_HINT)
    return "".join(" " + h for h in out)


def glossary_hint(terms: Terms) -> str:
    if not terms:
        return ""
    pairs = "; ".join(f'"{s}" as "{t}"' for s, t in terms)
    return f" Translate these terms exactly so: {pairs}."


def chat_messages(text: str, source: str, target: str, terms: Terms = ()) -> list[dict[str, str]]:
    user = (
        f"Translate the following {language_name(source)} text into "
        f"{language_name(target)}.{hints(text)}{glossary_hint(terms)}\n\n{text}"
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def output_budget(text_tokens: int, ratio: float, cap: int) -> int:
    """Tokens a translation may use: proportional to the input, never past the cap.
    Scripts differ in tokens per word (CJK often needs more), hence the generous ratio."""
    return max(1, min(cap, int(ratio * text_tokens) + 16))


# Few-shot examples for base models (no chat template): the same two sentences in each language.
FEW_SHOT: dict[str, tuple[str, str]] = {
    "en": ("Good morning.", "Where is the station?"),
    "fr": ("Bonjour.", "Où est la gare ?"),
    "de": ("Guten Morgen.", "Wo ist der Bahnhof?"),
    "es": ("Buenos días.", "¿Dónde está la estación?"),
    "it": ("Buongiorno.", "Dov'è la stazione?"),
    "pt": ("Bom dia.", "Onde fica a estação?"),
    "nl": ("Goedemorgen.", "Waar is het station?"),
}


def few_shot_prompt(text: str, source: str, target: str) -> str:
    """A completion prompt for base models; generation stops at the end of the line."""
    src_name, tgt_name = language_name(source), language_name(target)
    lines = [f"Translate {src_name} to {tgt_name}."]
    for src_ex, tgt_ex in zip(FEW_SHOT[source], FEW_SHOT[target], strict=True):
        lines += [f"{src_name}: {src_ex}", f"{tgt_name}: {tgt_ex}"]
    lines += [f"{src_name}: {' '.join(text.split())}", f"{tgt_name}:"]
    return "\n".join(lines)


PromptFormat = Literal["chat", "few-shot"]


class PromptBuilder:
    """Prompts as token ids (the model's chat template, or few-shot for base models), and each
    text's output budget. Shared by every architecture (and the benchmark's offline and peer
    modes) so all see identical work."""

    def __init__(
        self,
        tokenizer: Any,
        max_model_len: int,
        ratio: float,
        cap: int,
        fmt: PromptFormat = "chat",
    ) -> None:
        self.tokenizer = tokenizer
        self.max_model_len = max_model_len
        self.ratio = ratio
        self.cap = cap
        self.format = fmt
        self.stop = ["\n"] if fmt == "few-shot" else None
        self._prefix_len = len(self.prompt_ids("", "en", "fr"))

    def prompt_ids(self, text: str, source: str, target: str, terms: Terms = ()) -> list[int]:
        if self.format == "few-shot":
            prompt = few_shot_prompt(text, source, target)
            return list(self.tokenizer.encode(prompt, add_special_tokens=True))
        prompt = self.tokenizer.apply_chat_template(
            chat_messages(text, source, target, terms), tokenize=False, add_generation_prompt=True
        )
        return list(self.tokenizer.encode(prompt, add_special_tokens=False))

    def build(
        self, text: str, source: str, target: str, terms: Terms = ()
    ) -> tuple[list[int], int]:
        """(prompt token ids, max output tokens); TextTooLong when the model has no room."""
        ids = self.prompt_ids(text, source, target, terms)
        text_tokens = max(1, len(ids) - self._prefix_len)
        budget = output_budget(text_tokens, self.ratio, self.cap)
        room = self.max_model_len - len(ids)
        if room < min(budget, 16):
            raise TextTooLong(
                f"text is {text_tokens} tokens; this model accepts about "
                f"{self.max_model_len - self._prefix_len - 16} tokens per text"
            )
        return ids, min(budget, room)
