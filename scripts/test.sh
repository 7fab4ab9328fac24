#!/usr/bin/env bash
# README command 2: set up, build, then the whole test suite (unit, end-to-end, and the scenario
# gold/candidate/compare tests, which share one run per side and one compare) through CTest; then the unit tests and the fault-injection suite again, built
# under ASan and UBSan by the CMake preset `sanitize` (build-sanitize/; about 5 minutes to build and 3 to test
# on 2 cores); then a 60-second fuzz of the result decoder under ASan and UBSan (scripts/fuzz.sh; about
# 2 more minutes with its build). PARITY_SKIP_SANITIZE=1 skips the sanitized tests, PARITY_SKIP_FUZZ=1 the fuzzing.
# PARITY_NIGHTLY=1 is the nightly mode: it adds the soak run (CTest label soak, 20 rounds of the corpus, ~5 min).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PARITY_BUILD_DIR:-$repo/build}
"$repo/scripts/build.sh"
nightly=()
[ "${PARITY_NIGHTLY:-0}" = 1 ] || nightly=(-LE soak)
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${nightly[@]}" "$@"
echo "test: artifacts for CI to keep (the HTML report test's page and screenshot): $build/artifacts"
if [ "${PARITY_SKIP_SANITIZE:-0}" != 1 ]; then
  # The presets (CMakePresets.json) name the virtualenv .venv/; a PARITY_VENV elsewhere is passed on.
  echo "test: the unit tests and the fault-injection suite under ASan and UBSan (build-sanitize/)"
  (cd "$repo" && cmake --preset sanitize -DPython_EXECUTABLE="${PARITY_VENV:-$repo/.venv}/bin/python" >/dev/null &&
    cmake --build --preset sanitize && ctest --preset sanitize -j "$(nproc)")
fi
if [ "${PARITY_SKIP_FUZZ:-0}" != 1 ]; then
  "$repo/scripts/fuzz.sh" 60
fi
