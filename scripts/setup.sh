#!/usr/bin/env bash
# Installs what building and running code-intel needs on a fresh Debian/Ubuntu
# machine, then prints the environment to export (source it: `. <(scripts/setup.sh)`
# or `eval "$(scripts/setup.sh)"`).
#
#   protoc          LanceDB's build needs it (apt package protobuf-compiler)
#   ONNX Runtime    libonnxruntime.so >= 1.24, loaded at run time (ORT_DYLIB_PATH)
#   test models     ../shared/tools/test-models/build.sh when it exists (offline
#                   multilingual-e5-small); elsewhere code-intel downloads the
#                   model on first use and only ONNX Runtime is fetched here.
#   dictionary      JMdict (EDRDG, CC BY-SA 3.0) from PyPI's jamdict-data,
#                   built once into the user cache by scripts/dictionary.py
#                   (Japanese requests; src/rank/dictionary.rs)
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "setup: $*" >&2; }

if ! command -v protoc >/dev/null 2>&1; then
  log "installing protobuf-compiler"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq protobuf-compiler >&2
fi

BUILD="$HERE/../shared/tools/test-models/build.sh"
if [ -f "$BUILD" ]; then
  log "building offline test models and ONNX Runtime (../shared/tools/test-models)"
  bash "$BUILD" | grep '^export '
  # The unit tests that need these assets fail instead of ending early.
  echo "export CODE_INTEL_REQUIRE_ASSETS=1"
else
  ORT_DIR=${CODE_INTEL_ORT_DIR:-$HOME/.cache/code-intel/onnxruntime}
  if [ ! -f "$ORT_DIR/libonnxruntime.so.1.31.1" ]; then
    log "fetching ONNX Runtime 1.31.1 from PyPI"
    mkdir -p "$ORT_DIR"
    tmp=$(mktemp -d)
    python3 -m pip download -q --no-deps -d "$tmp" onnxruntime==1.31.1 >&2
    unzip -q -o -j "$tmp"/onnxruntime-1.31.1-*.whl 'onnxruntime/capi/libonnxruntime.so.1.31.1' -d "$ORT_DIR"
    rm -rf "$tmp"
  fi
  echo "export ORT_DYLIB_PATH=$ORT_DIR/libonnxruntime.so.1.31.1"
fi

DICT=${CODE_INTEL_DICTIONARY:-${XDG_CACHE_HOME:-$HOME/.cache}/code-intel/dictionary/jmdict-ja-en.tsv}
# `none`: no dictionary (bench/report.py's figures without it).
if [ "$DICT" != none ] && [ ! -s "$DICT" ]; then
  log "building the Japanese dictionary (JMdict from PyPI's jamdict-data, 54 MB)"
  python3 "$HERE/scripts/dictionary.py" "$DICT" >&2
fi
echo "export CODE_INTEL_DICTIONARY=$DICT"
