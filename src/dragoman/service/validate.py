"""Each engine reply checked before it is used, and asked again once when it fails. A reply
fails when the placeholders ({1}) or inline markers (<g1>, <x1/>) of its unit are not each there
exactly once, when it is read as another language than the target, when it repeats the
prompt's worked example instead of translating its unit, or when it runs far longer than its
source. The second request carries an instruction that names what was wrong (in the
target language, for a wrong language), and its reply also fails when it holds that
instruction (the model translated it as text); the better of the two replies by the same check
is kept (the first when both fail: the placeholders are then repaired as before). Measured:
benchmarks/README.md, "Reply validation"."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from dragoman.detect import LanguageDetector
from dragoman.engine.prompts import EXAMPLES, MARKERS, PLACEHOLDERS
from dragoman.eval.metrics import text_length, without_copied_names

Failure = Literal["placeholders", "language", "prompt", "length", "note"]
FAILURES: tuple[Failure, ...] = ("placeholders", "language", "prompt", "length", "note")

_TOKENS = re.compile(f"{PLACEHOLDERS.pattern}|{MARKERS.pattern}")

# A reply is called wrong-language only when the detector is sure and has enough to go on:
# measured on the eval's references, which are right by construction (false alarms), and its
# outputs (benchmarks/results/eval-avx512bf16-2core/validation/README.md).
MIN_LETTERS = 4
MIN_CONFIDENCE = 35.0
"""The other language's confidence (0-100) at least this..."""
MAX_TARGET = 15.0
"""...and the target's at most this."""
LONG_RATIO = 3.0
LONG_SLACK = 20
"""A reply longer than 3x its source plus 20 Latin-letter equivalents is suspect."""


def tokens(text: str) -> Counter[str]:
    return Counter(_TOKENS.findall(text))


def placeholders_broken(unit: str, reply: str) -> bool:
    """The reply lacks, repeats or invents a placeholder or marker of the unit."""
    return tokens(unit) != tokens(reply)


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def judged_text(unit: str, reply: str) -> str:
    """What the language check reads: the reply without its tokens and without the names and
    identifiers it copies from the unit ("UUID", `master_doc`), which belong to no language."""
    return without_copied_names(_TOKENS.sub(" ", reply), _TOKENS.sub(" ", unit))


def wrong_language(detector: LanguageDetector, unit: str, reply: str, target: str) -> bool:
    text = judged_text(unit, reply)
    if _letters(text) < MIN_LETTERS:
        return False
    found = detector.detect(text)
    if not found.candidates or found.language == target:
        return False
    best = found.candidates[0].confidence
    own = next((c.confidence for c in found.candidates if c.language == target), 0.0)
    return best >= MIN_CONFIDENCE and own <= MAX_TARGET


ECHOED = 0.6
"""Share of a worked example's character trigrams a reply holds to be called its echo..."""
ECHOED_RUN = 0.4
"""...with a run of at least this share of the example word for word. On the eval sets'
21,372 references (right by construction), the highest were 0.51 and 0.29 (a long paragraph
holds many trigrams; a short one a few words), and none passed both."""


def _flat(text: str) -> str:
    return " ".join(text.casefold().split())


def _trigrams(flat: str) -> set[str]:
    return {flat[i : i + 3] for i in range(len(flat) - 2)}


def _holds(text: str, sentence: str) -> bool:
    """`text` holds most of `sentence`, a little otherwise worded included."""
    text, sentence = _flat(text), _flat(sentence)
    wanted = _trigrams(sentence)
    if len(wanted & _trigrams(text)) < ECHOED * len(wanted):
        return False
    run = SequenceMatcher(None, sentence, text, autojunk=False).find_longest_match()
    return run.size >= ECHOED_RUN * len(sentence)


def echoes_prompt(unit: str, reply: str, source: str, target: str) -> bool:
    """The reply repeats the prompt's worked example sentence in the target language, which
    its unit does not hold in the source: the model wrote the example's turn again (seen on
    repetitive and instruction-like texts: "ha " x 150 came back as the example's French
    sentence). Pairs without examples have none in their prompt."""
    if source not in EXAMPLES or target not in EXAMPLES:
        return False
    return _holds(reply, EXAMPLES[target][-1]) and not _holds(unit, EXAMPLES[source][-1])


# What a second request's note (engine/prompts.py, `insist_note`) names, as the model writes it
# when it translates the note instead of (or beside) its text: the target language, or the
# examples. A language's names in the languages the note is written in (ANSWER_IN's), so that a
# unit that names it in its own language ("Parlez-vous anglais ?") is not taken for a leak.
_NAMES: dict[str, str] = {
    "en": "english anglais englisch inglés ingles inglese inglês 영어 英语 英文 英語",
    "fr": "french français francais französisch francés francese francês 프랑스어 法语 "
    "法文 フランス語",
    "de": "german deutsch allemand alemán aleman tedesco alemão 독일어 德语 德文 ドイツ語",
    "es": "spanish español espanol espagnol spanisch spagnolo espanhol 스페인어 西班牙语 "
    "西班牙文 スペイン語",
    "it": "italian italien italiano italienisch 이탈리아어 意大利语 イタリア語",
    "pt": "portuguese português portugues portugais portugiesisch portugués portoghese "
    "포르투갈어 葡萄牙语 ポルトガル語",
    "ko": "korean 한국어 한국말 coréen koreanisch coreano 韩语 韩文 韓国語",
    "zh": "chinese 中文 汉语 chinois chinesisch chino cinese chinês 중국어 中国語",
    "ja": "japanese 日本語 japonais japanisch japonés giapponese japonês 일본어 日语 日文",
}


def _named(names: str) -> re.Pattern[str]:
    """Any of `names`: a Latin-script one as a whole word ("ingles" is in "singles"), a
    Hangul or CJK one anywhere (no spaces around words there)."""
    words = names.split()
    latin = [re.escape(w) for w in words if all(ch < "\u0250" for ch in w)]
    other = [re.escape(w) for w in words if not all(ch < "\u0250" for ch in w)]
    return re.compile("|".join([rf"\b(?:{'|'.join(latin)})\b", *other]))


LANGUAGE_NAMES: dict[str, re.Pattern[str]] = {code: _named(n) for code, n in _NAMES.items()}
# "The examples", plural: "par exemple", "zum Beispiel" are common in translations.
EXAMPLES_NAMED = re.compile(r"\b(?:examples|exemples|beispiele|ejemplos|esempi|exemplos)\b")


def _names(text: str, words: re.Pattern[str]) -> bool:
    return words.search(text.casefold()) is not None


def holds_note(unit: str, reply: str, target: str, failure: Failure, note: str) -> bool:
    """The reply to a second request, asked for `failure` with `note`, carries the note
    (translated or not) where its unit does not: the model took the note for text to translate
    (seen on instruction-like texts). Judged by what the note names (the target language, the
    examples) in any language the note is written in, else by a sentence of the note held
    word for word (a note about placeholders lists them: a reply holding it fails their check
    too)."""
    words: re.Pattern[str] | None = None
    if failure == "prompt":
        words = EXAMPLES_NAMED
    elif failure != "placeholders":  # the note names the target language
        words = LANGUAGE_NAMES.get(target)
    if words is not None:
        return _names(reply, words) and not _names(unit, words)
    sentences = [s for s in re.split(r"(?<=[.!?。])\s+", note.strip()) if s]
    return any(_holds(reply, s) and not _holds(unit, s) for s in sentences)


def too_long(unit: str, reply: str) -> bool:
    return text_length(reply) > LONG_RATIO * text_length(unit) + LONG_SLACK


@dataclass(frozen=True)
class Validator:
    detector: LanguageDetector

    def check(
        self,
        unit: str,
        reply: str,
        target: str,
        source: str | None = None,
        insisted: tuple[Failure, str] | None = None,
    ) -> Failure | None:
        """What is wrong with `reply` as the translation of `unit` from `source` (None: no
        echo check) into `target`, or None; `insisted`: the failure and note a second request
        was sent with. Blocking (the detector takes about a millisecond): call it off the
        event loop."""
        if insisted is not None and holds_note(unit, reply, target, *insisted):
            return "note"
        if placeholders_broken(unit, reply):
            return "placeholders"
        if wrong_language(self.detector, unit, reply, target):
            return "language"
        if source is not None and echoes_prompt(unit, reply, source, target):
            return "prompt"
        if too_long(unit, reply):
            return "length"
        return None

    def only_markers_broken(
        self, unit: str, reply: str, target: str, source: str | None = None
    ) -> bool:
        """Whether the reply's one fault is its inline markers (<g1>, <x1/>): its placeholders
        ({1}) each there once, and the text without markers passing every other check."""
        if Counter(PLACEHOLDERS.findall(unit)) != Counter(PLACEHOLDERS.findall(reply)):
            return False
        bare_unit, bare_reply = MARKERS.sub("", unit), MARKERS.sub("", reply)
        return (
            tokens(unit) != tokens(reply)
            and self.check(bare_unit, bare_reply, target, source) is None
        )


def rank(failure: Failure | None) -> int:
    """Lower is better: a valid reply; then broken placeholders (repaired afterwards, in the
    right language); then one too long; then the prompt's example, not the text; then a reply
    in the wrong language; worst, our own note to the model handed back as the text's
    translation."""
    order = {None: 0, "placeholders": 1, "length": 2, "prompt": 3, "language": 4, "note": 5}
    return order[failure]
