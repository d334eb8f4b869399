"""The one error mapping: a message that quotes what the client sent always renders."""

from __future__ import annotations

import json

from dragoman.api.errors import shaped, surface_of


def test_a_message_quoting_a_lone_surrogate_renders_in_each_shape() -> None:
    """A code sent in a query string or form can reach a message ("xx is not supported"); a
    lone surrogate in it made the error response itself fail (500)."""
    for path, key in (("/translate", "error"), ("/v2/translate", "message")):
        r = shaped(path, 400, "unsupported_language", "\ud800 is not supported")
        assert r.status_code == 400
        assert json.loads(r.body)[key] == "? is not supported"
    r = shaped("/v1/translate", 400, "unsupported_language", "é is fine")
    assert json.loads(r.body)["error"]["message"] == "é is fine"


def test_openai_paths_it_does_not_serve_answer_in_openai_shape() -> None:
    for path in ("/v1/chat", "/v1/chat/completions", "/v1/embeddings", "/v1/models/x"):
        assert surface_of(path) == "openai", path
    for path in ("/v1/translate", "/v1/languages", "/v1/info", "/health"):
        assert surface_of(path) == "native", path
