#!/usr/bin/env bash
# README command 2: set up, build, then the whole test suite (unit, end-to-end, and the scenario
# gold/candidate/compare tests) through CTest.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PARITY_BUILD_DIR:-$repo/build}
"$repo/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
