#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), configures with the virtualenv's Python, and builds parity.
#   PARITY_BUILD_DIR  build directory (default: <repo>/build)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PARITY_BUILD_DIR:-$repo/build}
"$repo/scripts/setup.sh"
python=${PARITY_VENV:-$repo/.venv}/bin/python
cmake -S "$repo" -B "$build" -G Ninja -DPython_EXECUTABLE="$python" >/dev/null
cmake --build "$build"
