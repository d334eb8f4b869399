"""CORS for browser clients: Starlette's middleware, open to any request header (the OpenAI
SDK in a browser sends its `X-Stainless-*` and `OpenAI-*` headers, which a fixed list refused at
the preflight), and a refused preflight (an origin not allowed, a method we do not serve)
answered in the error shape of the surface it was for, not as plain text."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from dragoman.api.errors import shaped

METHODS = ("GET", "POST", "DELETE")  # DELETE: DeepL's /v2/glossaries/{id}
EXPOSED = ("Retry-After", "X-Request-Id")


class Cors(CORSMiddleware):
    def __init__(self, app: ASGIApp, origins: str) -> None:
        super().__init__(
            app,
            allow_origins=[o.strip() for o in origins.split(",") if o.strip()],
            allow_methods=METHODS,
            allow_headers=["*"],
            expose_headers=EXPOSED,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            headers = Headers(scope=scope)
            if "origin" in headers and "access-control-request-method" in headers:
                response = self.preflight_response(request_headers=headers)
                if response.status_code == 400:  # Starlette's "Disallowed CORS origin, ..."
                    message = bytes(response.body).decode()
                    kept = {k: v for k, v in response.headers.items() if k.startswith("access-")}
                    response = shaped(scope["path"], 400, "cors_refused", message, kept)
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)
