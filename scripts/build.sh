#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), configures with the virtualenv's Python, and builds parity.
#   PARITY_BUILD_DIR    build directory (default: <repo>/build)
#   PARITY_UNITY_BUILD  CMAKE_UNITY_BUILD (default: ON, sources batched by 8 per target as the sanitize preset, the fuzz
#                       build and `pip install` do: about 60% of a clean build's CPU, the longest step of CI's run,
#                       issue #20 target 6; OFF compiles each file alone, so that a missing include fails, and
#                       rebuilds only the files an edit touches)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PARITY_BUILD_DIR:-$repo/build}
unity=${PARITY_UNITY_BUILD:-ON}
case $unity in ON | OFF) ;; *) echo "build: PARITY_UNITY_BUILD must be ON or OFF, got '$unity'" >&2; exit 2 ;; esac
"$repo/scripts/setup.sh"
python=${PARITY_VENV:-$repo/.venv}/bin/python
cmake -S "$repo" -B "$build" -G Ninja -DPython_EXECUTABLE="$python" -DCMAKE_UNITY_BUILD="$unity" >/dev/null
cmake --build "$build"
