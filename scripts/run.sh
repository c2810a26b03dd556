#!/usr/bin/env bash
# The main job on a fresh machine (README "The two commands"): install what is
# needed, build, index REPO, then serve it over MCP on stdio.
#   scripts/run.sh REPO
# Build profile: dev with optimised dependencies (about 25 minutes cold on 2
# cores; --release takes about 45 minutes). Set CODE_INTEL_PROFILE=release to use it.
set -euo pipefail
REPO=${1:?usage: scripts/run.sh REPO}
cd "$(dirname "$0")/.."
eval "$(bash scripts/setup.sh)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/code-intel/target}
PROFILE=${CODE_INTEL_PROFILE:-dev}
cargo build --locked --profile "$PROFILE" >&2
DIR=$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")
BIN="$CARGO_TARGET_DIR/$DIR/code-intel"
if [ -z "${CODE_INTEL_MODEL_DIR:-}" ] && [ -n "${CODE_INTEL_ASSETS:-}" ]; then
  # Offline machines: the model built by ../shared/tools/test-models.
  export CODE_INTEL_MODEL_DIR="$CODE_INTEL_ASSETS/models/multilingual-e5-small"
fi
"$BIN" index "$REPO" >&2
exec "$BIN" serve --repo "$REPO"
