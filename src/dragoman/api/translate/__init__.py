"""POST /v1/translate and GET /v1/languages."""
