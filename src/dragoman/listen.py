"""The address a server will listen on, checked before it starts work: uvicorn finds a port in
use only once the app has started (on a real engine, after the model began loading) and then
exits 3 with a line of its own, outside the command line's exit statuses and one-line errors."""

from __future__ import annotations

import socket

from dragoman.errors import ConfigError


def check_listen(host: str, port: int) -> None:
    """ConfigError unless `host:port` can be bound now, as uvicorn binds it (SO_REUSEADDR, so
    a port left in TIME_WAIT passes). Binds and closes at once: nothing is kept."""
    try:
        infos = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        for family, kind, proto, _, address in infos:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:  # as asyncio binds it, beside the IPv4 address
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                probe.bind(address)
    except OSError as exc:
        raise ConfigError(
            f"--host {host} --port {port}: cannot listen there ({exc.strerror or exc})"
        ) from None
