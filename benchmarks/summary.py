"""Writes benchmarks/results/SUMMARY-<hostclass>.md, the headline figures of each host class,
computed from the committed result files (`src/dragoman/bench/summary.py` says which).

    python benchmarks/summary.py            # regenerate every summary
    python benchmarks/summary.py --check    # write nothing; exit 1 if one is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

from dragoman.bench.summary import main

RESULTS = Path(__file__).resolve().parent / "results"

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], RESULTS))
