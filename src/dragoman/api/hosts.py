"""Which `Host` a server answers (`--allowed-hosts`): a web page whose name an attacker made
resolve to this machine's address (DNS rebinding) sends its own name as the Host, and is
refused 400 `host_not_allowed` before anything else runs, whatever CORS allows. Unset, a
server bound to a loopback address answers only its local names (any port); one bound to
another address answers any host, as a server behind a balancer must.

Starlette's TrustedHostMiddleware, with the Host parsed here (older Starlette cut an IPv6
literal with its port, `[::1]:8000`, at its first colon) and the refusal in the shape of the
surface it was sent to."""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from dragoman.api.errors import shaped

log = logging.getLogger(__name__)

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")

# A Host header: a name (or an IPv4 address), or an IPv6 literal in brackets; then a port.
_HOST = re.compile(r"(?P<name>[a-z0-9._~%!$&'()*+,;=-]+|\[[0-9a-f:.]+\])(?::[0-9]*)?", re.I)


def _name(host: str) -> str:
    """A host as compared: lowercase, an IPv6 literal without its brackets."""
    host = host.strip().lower()
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def host_of(header: str | None) -> str | None:
    """The host a Host header names, without its port (`[::1]:8000` -> `::1`); None when
    there is none or it is malformed."""
    match = _HOST.fullmatch(header or "")
    return _name(match["name"]) if match else None


def is_loopback(bind: str) -> bool:
    if _name(bind) == "localhost":
        return True
    try:
        return ipaddress.ip_address(_name(bind)).is_loopback
    except ValueError:
        return False


def hosts_for(bind: str, allowed: Sequence[str]) -> list[str]:
    """What a server bound to `bind` answers: `allowed` (--allowed-hosts) when given; else,
    bound to a loopback address, its local names and the address itself; else any (`*`)."""
    if allowed:
        return list(allowed)
    if is_loopback(bind):
        return list(dict.fromkeys([*LOCAL_NAMES, _name(bind)]))
    return ["*"]


def check_pattern(host: str) -> str:
    """ValueError unless `host` is a name, an address (an IPv6 one bare or in brackets), a
    `*.example.com` pattern or `*`; no port."""
    name = _name(host)
    if name == "*" or (name.startswith("*.") and host_of(name[2:]) == name[2:]):
        return host
    if ":" in name:
        try:
            ipaddress.IPv6Address(name)
            return host
        except ValueError:
            pass
    elif "*" not in name and host_of(name) == name:
        return host
    raise ValueError(
        f"allowed host {host!r}: give a name or address without a port, "
        "`*.example.com` (its subdomains) or `*` (any host)"
    )


class AllowedHosts(TrustedHostMiddleware):
    def __init__(self, app: ASGIApp, hosts: Sequence[str]) -> None:
        super().__init__(app, allowed_hosts=[_name(h) for h in hosts], www_redirect=False)
        # Host headers already allowed, as sent: a client sends the same one every time, so
        # most requests cost one set lookup. Refused ones are not kept (a client picks them).
        self._allowed: set[bytes] = set()

    def allows(self, host: str | None) -> bool:
        return host is not None and any(
            host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:]))
            for pattern in self.allowed_hosts
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allow_any or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        raw = next((v for k, v in scope["headers"] if k == b"host"), None)
        if raw is not None and raw in self._allowed:
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("host")
        if self.allows(host_of(given)):
            if raw is not None and len(self._allowed) < 64:
                self._allowed.add(raw)
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # none is served; refused all the same
            await send({"type": "websocket.close", "code": 1008})
            return
        shown = "none" if given is None else repr(given[:100])
        log.warning("refused a request for host %s: not an allowed host (--allowed-hosts)", shown)
        path = scope.get("path", "/")
        message = f"this server does not answer for host {shown} (see --allowed-hosts)"
        await shaped(path, 400, "host_not_allowed", message)(scope, receive, send)
