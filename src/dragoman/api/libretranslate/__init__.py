"""LibreTranslate's API (`/translate`, `/detect`, `/languages`, `/frontend/settings`), a thin
adapter over the one translation service, so Mastodon, Discourse, Weblate, TranslateYou and
libretranslatepy work unchanged."""
