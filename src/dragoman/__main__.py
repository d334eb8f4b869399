import sys

from dragoman.cli import main

if __name__ == "__main__":  # vLLM spawns processes: keep the guard
    sys.exit(main())
