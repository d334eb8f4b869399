"""The HTTP API: app factory, routes, error mapping."""
