#!/usr/bin/env bash
# Runs bench/bench.py with the test venv and offline models (see README).
#   bench/run.sh REPO [bench.py options]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
eval "$(bash "$HERE/scripts/setup.sh")"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/code-intel/target}
VENV=${CODE_INTEL_TEST_VENV:-$HOME/.cache/code-intel/venv}
[ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV"; "$VENV/bin/pip" install -q mcp==2.3.0 pytest==9.2.0 anyio; }
exec "$VENV/bin/python" "$HERE/bench/bench.py" "$@"
