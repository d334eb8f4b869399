"""Language identification, once, below every API surface: `source=auto` detects each text of a
batch on its own, `/detect` reports up to three candidates. Texts without letters (numbers,
emoji, URLs, placeholders) are reported as such and never guessed at."""

from dragoman.detect._clean import has_language
from dragoman.detect.detector import Candidate, Detection, LanguageDetector, pooled

__all__ = ["Candidate", "Detection", "LanguageDetector", "has_language", "pooled"]
