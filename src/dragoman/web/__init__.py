"""The web page to translate on (`/`) and the live dashboard (`/dashboard`), both static files
shipped in `static/`, and the small JSON endpoint the dashboard polls (`/v1/stats`)."""
