"""DeepL's API v2 (`/v2/translate`, `/v2/languages`, `/v2/usage`), a thin adapter over the one
translation service, so code written for the `deepl` package works with `server_url=`."""
