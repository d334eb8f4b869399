"""The servers tests start run the engine each test is about. `dragoman serve` picks its engine
by host (`--architecture host`: llama.cpp on CPUs without native bf16, vLLM elsewhere), so
every suite is pinned to vLLM here, on every host; the llama.cpp tests and the test of the
host's choice ask for theirs explicitly (a flag beats this environment variable)."""

from __future__ import annotations

import os

os.environ.setdefault("DRAGOMAN_ARCHITECTURE", "continuous")
