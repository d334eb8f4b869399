"""Write the candidates eval table (eval-table.md, eval-table.json) beside the runs in FOLDER
(FOLDER/eval-k1, eval-k2, ...: `dragoman eval --candidates K --out FOLDER/eval-kK`)."""

from __future__ import annotations

import sys
from pathlib import Path

from dragoman.bench.candidates_eval import write

if __name__ == "__main__":
    print(write(Path(sys.argv[1])))
