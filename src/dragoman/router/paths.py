"""The paths the proxy takes and the paths it forwards. It routes on the decoded path, and a
path holding a dot segment (`..` or `.`, sent as is or percent-encoded: `%2e%2e`, or an encoded
slash making one) matched a route that forwards (`/v1/models/{id:path}`) only to be collapsed on
its way out (httpx resolves dot segments, as RFC 3986 asks): `/v1/models/../../metrics` reached
the backend's `/metrics`, `/v1/stats` or `/v2/glossaries` past the proxy's own routes and
guards. Such a path is refused before routing, and what is forwarded is the decoded path as
routed, percent-encoded again (never decoded a second time)."""

from __future__ import annotations

from urllib.parse import quote

from starlette.types import ASGIApp, Receive, Scope, Send

from dragoman.api.edge import Renderer
from dragoman.errors import DragomanError


class DotSegment(DragomanError):
    status_code = 400
    code = "invalid_path"


def has_dot_segment(path: str) -> bool:
    """Whether the decoded path has a `.` or `..` segment (a percent-encoded one decodes to
    it, an encoded slash splits its segments as a slash does)."""
    return any(segment in (".", "..") for segment in path.split("/"))


def forwarded_path(path: str) -> str:
    """The decoded path as the backend is sent it: every byte but the slashes and unreserved
    characters percent-encoded, so the backend decodes the same path (a `%` the client encoded
    stays a `%`) and nothing on the way has a dot segment to resolve."""
    return quote(path, safe="/")


class RefuseDotSegments:
    """400 `invalid_path` for a path with a dot segment, in the surface's shape, before any
    route sees it."""

    def __init__(self, app: ASGIApp, render: Renderer) -> None:
        self.app = app
        self.render = render

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and has_dot_segment(scope["path"]):
            refusal = DotSegment("the path holds a dot segment ('.' or '..'); it is not routed")
            await self.render(scope, refusal)(scope, receive, send)
            return
        await self.app(scope, receive, send)
