"""Prompt variants for the chat format, measured with `dragoman eval` (issue 12, item 2).

    python benchmarks/prompts/variants.py VARIANT serve --port 8431 --cache-mib 0

runs `dragoman serve` with VARIANT's chat messages in place of the default's; every other part
(budget, guard, hygiene, segmentation) is the default's. `default` is the tree's own prompt;
`base` is the default before this comparison (the instruction alone); `fewshot3` won.
Results and the table of what won and lost: benchmarks/README.md, "Prompt design".
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from dragoman.engine import prompts
from dragoman.engine.protocol import Terms
from dragoman.languages import language_name

Messages = Callable[[str, str, str, Terms], list[dict[str, str]]]

# The target's own name and "Translate the following text into X." in X.
NATIVE: dict[str, tuple[str, str]] = {
    "en": ("English", "Translate the following text into English."),
    "fr": ("français", "Traduisez le texte suivant en français."),
    "de": ("Deutsch", "Übersetze den folgenden Text ins Deutsche."),
    "es": ("español", "Traduce el siguiente texto al español."),
    "ko": ("한국어", "다음 텍스트를 한국어로 번역하세요."),
    "zh": ("中文", "请将以下文本翻译成中文。"),
    "ja": ("日本語", "次のテキストを日本語に翻訳してください。"),
}

# Two examples (a UI string, a sentence) written for this test: neither is in the eval set.
EXAMPLES: dict[str, tuple[str, str]] = {
    "en": (
        "Print the report",
        "The meeting was moved to Thursday because the room was not available.",
    ),
    "fr": (
        "Imprimer le rapport",
        "La réunion a été déplacée à jeudi parce que la salle n'était pas disponible.",
    ),
    "de": (
        "Bericht drucken",
        "Die Besprechung wurde auf Donnerstag verschoben, weil der Raum nicht verfügbar war.",
    ),
    "es": (
        "Imprimir el informe",
        "La reunión se trasladó al jueves porque la sala no estaba disponible.",
    ),
    "ko": ("보고서 인쇄", "회의실을 사용할 수 없어서 회의가 목요일로 옮겨졌습니다."),
    "zh": ("打印报告", "由于会议室不可用，会议改到了星期四。"),
    "ja": ("レポートを印刷", "部屋が使えなかったので、会議は木曜日に変更されました。"),
}


# A third example, a two-noun term (German makes it one word): the UI strings that fail are such
# terms ("work factor", "action time", "previous chapter").
TERM: dict[str, str] = {
    "en": "Delivery date",
    "fr": "Date de livraison",
    "de": "Lieferdatum",
    "es": "Fecha de entrega",
    "ko": "배송 날짜",
    "zh": "交货日期",
    "ja": "配達日",
}


# A fourth example, a message around an identifier: with three examples the model handed back
# Sphinx's 'conf value "epub_uid" should be ...' messages in English for Korean.
SETTING: dict[str, str] = {
    "en": 'The "max_size" setting must be a number.',
    "fr": 'Le paramètre "max_size" doit être un nombre.',
    "de": 'Die Einstellung "max_size" muss eine Zahl sein.',
    "es": 'El ajuste "max_size" debe ser un número.',
    "ko": '"max_size" 설정은 숫자여야 합니다.',
    "zh": '"max_size" 设置必须是数字。',
    "ja": '"max_size" の設定は数値でなければなりません。',
}


def _user(text: str, source: str, target: str, terms: Terms, style: str) -> str:
    src, tgt = language_name(source), language_name(target)
    extra = f"{prompts.hints(text)}{prompts.glossary_hint(terms)}"
    if style == "both" and target in NATIVE:
        own, line = NATIVE[target]
        return f"Translate the following {src} text into {tgt} ({own}). {line}{extra}\n\n{text}"
    if style == "native" and target in NATIVE:
        return f"{NATIVE[target][1]}{extra}\n\n{text}"
    return f"Translate the following {src} text into {tgt}.{extra}\n\n{text}"


def _system(source: str, target: str, named: bool) -> str:
    if not named:
        return prompts.SYSTEM
    src, tgt = language_name(source), language_name(target)
    return (
        f"You are a professional {src}-to-{tgt} translator. "
        f"Reply with the {tgt} translation only, no notes."
    )


def make(
    style: str = "plain",
    named: bool = False,
    shots: bool = False,
    term: bool = False,
    setting: bool = False,
) -> Messages:
    def messages(text: str, source: str, target: str, terms: Terms = ()) -> list[dict[str, str]]:
        out = [{"role": "system", "content": _system(source, target, named)}]
        if shots and source in EXAMPLES and target in EXAMPLES:
            pairs = list(zip(EXAMPLES[source], EXAMPLES[target], strict=True))
            if term:
                pairs.insert(0, (TERM[source], TERM[target]))
            if setting:
                pairs.append((SETTING[source], SETTING[target]))
            for src_ex, tgt_ex in pairs:
                out.append({"role": "user", "content": _user(src_ex, source, target, (), style)})
                out.append({"role": "assistant", "content": tgt_ex})
        out.append({"role": "user", "content": _user(text, source, target, terms, style)})
        return out

    return messages


VARIANTS: dict[str, Messages | None] = {
    "default": None,
    "base": make(),
    "named": make(named=True),
    "both": make(style="both"),
    "native": make(style="native"),
    "fewshot": make(shots=True),
    "fewshot-named": make(named=True, shots=True),
    "fewshot-both": make(style="both", shots=True),
    "fewshot3": make(shots=True, term=True),
    "fewshot3-named": make(named=True, shots=True, term=True),
    "fewshot4": make(shots=True, term=True, setting=True),
}


def install(name: str) -> None:
    messages = VARIANTS[name]
    if messages is not None:
        prompts.chat_messages = messages  # type: ignore[assignment]


if __name__ == "__main__":
    install(sys.argv[1])
    from dragoman.cli import main

    sys.argv = ["dragoman", *sys.argv[2:]]
    sys.exit(main())
