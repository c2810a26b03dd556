#!/usr/bin/env bash
# The test command (README "Run the tests"; CI runs exactly this):
# installs what it needs, then format, lints, unit tests, and end-to-end tests
# that drive the real binary over stdio with the `mcp` Python SDK and the real
# multilingual-e5-small model.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/setup.sh)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/code-intel/target}

cargo fmt --check
# Clippy's lints (`-D warnings` and Cargo.toml's [lints]) run inside the
# build: clippy-driver compiles this crate's targets as rustc would, with the
# lints on (clippy's wrapper mode, what `cargo clippy` sets up over `cargo
# check`). `cargo clippy` itself would check every dependency once more in
# check mode, a pass the build cannot reuse: 19 minutes of a fresh 2-core
# machine's 68 before the tests (README "Run the tests"). `cargo build` covers
# the binaries, `cargo test` the library, tests and examples: what
# `cargo clippy --all-targets` covers (no benches here).
CLIPPY_DRIVER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver) \
  || { echo "clippy-driver not found: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER=$CLIPPY_DRIVER
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
cargo build --locked
cargo test --locked
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS

VENV=${CODE_INTEL_TEST_VENV:-$HOME/.cache/code-intel/venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# tokenizers: replies and tools/list are measured in real tokens (XLM-R of e5).
# onnxruntime + numpy: the OpenAI-compatible embeddings server of the
# endpoint tests; moto[server]: the S3 server of the shared-store tests.
"$VENV/bin/python" -c 'import mcp, pytest, anyio, tokenizers, onnxruntime, numpy, moto.server, boto3' 2>/dev/null \
  || "$VENV/bin/pip" install -q mcp==2.3.0 pytest==9.2.0 anyio tokenizers==0.23.3 \
       onnxruntime==1.31.1 numpy==2.4.6 'moto[server]==5.2.5'
# The MCP Inspector CLI (npm) drives the binary in one of the e2e tests.
INSPECTOR_DIR=${CODE_INTEL_INSPECTOR_DIR:-$HOME/.cache/code-intel/inspector}
if [ ! -x "$INSPECTOR_DIR/node_modules/.bin/mcp-inspector" ]; then
  mkdir -p "$INSPECTOR_DIR"
  [ -f "$INSPECTOR_DIR/package.json" ] || echo '{"private": true}' > "$INSPECTOR_DIR/package.json"
  (cd "$INSPECTOR_DIR" && npm install --silent --no-audit --no-fund @modelcontextprotocol/inspector@2.12.0)
fi
export CODE_INTEL_INSPECTOR="$INSPECTOR_DIR/node_modules/.bin/mcp-inspector"
# The Claude Code CLI (npm; no account needed for `claude mcp list`).
CLAUDE_DIR=${CODE_INTEL_CLAUDE_DIR:-$HOME/.cache/code-intel/claude}
if [ ! -x "$CLAUDE_DIR/node_modules/.bin/claude" ]; then
  mkdir -p "$CLAUDE_DIR"
  [ -f "$CLAUDE_DIR/package.json" ] || echo '{"private": true}' > "$CLAUDE_DIR/package.json"
  (cd "$CLAUDE_DIR" && npm install --silent --no-audit --no-fund @anthropic-ai/claude-code@2.1.197)
fi
export CODE_INTEL_CLAUDE="$CLAUDE_DIR/node_modules/.bin/claude"
CODE_INTEL_BIN="$CARGO_TARGET_DIR/debug/code-intel" "$VENV/bin/pytest" -q -p no:cacheprovider tests/e2e
