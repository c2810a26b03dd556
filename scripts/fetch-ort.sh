#!/usr/bin/env bash
# Puts the ONNX Runtime shared library for a Rust target triple into a
# directory (default: packaging/ort/lib, which the release archives include
# as lib/ next to the binary; src/embed.rs looks there). The library comes
# from the onnxruntime wheel on PyPI, the same source scripts/setup.sh uses.
#
#   scripts/fetch-ort.sh x86_64-unknown-linux-gnu [DEST]
#
# Targets: x86_64/aarch64-unknown-linux-gnu, aarch64-apple-darwin,
# x86_64-pc-windows-msvc. Not x86_64-apple-darwin: PyPI's last Intel-macOS
# wheel is onnxruntime 1.23.2, and code-intel needs >= 1.24.
set -euo pipefail
TARGET=${1:?usage: fetch-ort.sh TARGET [DEST]}
DEST=${2:-$(cd "$(dirname "$0")/.." && pwd)/packaging/ort/lib}
VERSION=${ORT_VERSION:-1.31.1}
case "$TARGET" in
  x86_64-unknown-linux-gnu)  PLATFORM=manylinux_2_28_x86_64;  LIB="libonnxruntime.so.$VERSION" ;;
  aarch64-unknown-linux-gnu) PLATFORM=manylinux_2_28_aarch64; LIB="libonnxruntime.so.$VERSION" ;;
  aarch64-apple-darwin)      PLATFORM=macosx_14_0_arm64;      LIB="libonnxruntime.$VERSION.dylib" ;;
  x86_64-pc-windows-msvc)    PLATFORM=win_amd64;              LIB="onnxruntime.dll" ;;
  *) echo "fetch-ort: no ONNX Runtime >= 1.24 wheel for $TARGET" >&2; exit 1 ;;
esac
PY=$(command -v python3 || command -v python)  # Windows runners name it python
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
  --platform "$PLATFORM" -d "$tmp" "onnxruntime==$VERSION" >&2
rm -rf "$DEST"
mkdir -p "$DEST"
"$PY" - "$tmp"/onnxruntime-*.whl "onnxruntime/capi/$LIB" "$DEST" <<'PY'
import sys, zipfile, pathlib
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    data = z.read(member)
out = pathlib.Path(dest) / pathlib.Path(member).name
out.write_bytes(data)
out.chmod(0o755)
print(f"fetch-ort: {out} ({len(data)} bytes)", file=sys.stderr)
PY
