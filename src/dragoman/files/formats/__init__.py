"""One module per format, each defining its `FORMAT` (listed in `files.registry`)."""
