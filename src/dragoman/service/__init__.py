"""Below the API surfaces: the one translation service, with admission control, deadlines,
API keys and per-key limits. Every surface (native today; LibreTranslate, DeepL, OpenAI later)
maps its request onto `TranslationService.translate` and its errors onto its own shape."""
