#!/usr/bin/env bash
# README command 2: set up, build, then the whole test suite (unit, end-to-end, and the scenario
# gold/candidate/compare tests, which share one run per side and one compare) through CTest; then a 60-second fuzz of
# the result decoder under ASan and UBSan (scripts/fuzz.sh; its build, of the decoder's layers only, about a minute on
# 2 cores), while the CMake preset `sanitize` builds beside it (build-sanitize/; about 5 minutes on 2 cores); then the
# unit tests and the fault-injection suite again, under ASan and UBSan (about 3 minutes).
# PARITY_SKIP_SANITIZE=1 skips the sanitized tests, PARITY_SKIP_FUZZ=1 the fuzzing.
# PARITY_NIGHTLY=1 is the nightly mode: it adds the soak run (CTest label soak, 20 rounds of the corpus, ~5 min).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PARITY_BUILD_DIR:-$repo/build}
"$repo/scripts/build.sh"
nightly=()
[ "${PARITY_NIGHTLY:-0}" = 1 ] || nightly=(-LE soak)
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${nightly[@]}" "$@"
echo "test: artifacts for CI to keep (the HTML report test's page and screenshot): $build/artifacts"
sanitize=$([ "${PARITY_SKIP_SANITIZE:-0}" = 1 ] || echo 1)
fuzz=$([ "${PARITY_SKIP_FUZZ:-0}" = 1 ] || echo 1)
if [ -n "$sanitize" ]; then
  # The presets (CMakePresets.json) name the virtualenv .venv/; a PARITY_VENV elsewhere is passed on.
  (cd "$repo" && cmake --preset sanitize -DPython_EXECUTABLE="${PARITY_VENV:-$repo/.venv}/bin/python" >/dev/null)
fi
# The fuzz target is built first, on every core; then the fuzzer, one process, runs its 60 s on one core while the
# sanitize preset builds beside it at the lowest priority, so that the second core is not idle for that minute
# (issue #20, target 6) and the fuzzer still has a core of its own.
[ -z "$fuzz" ] || PARITY_FUZZ_STEP=build "$repo/scripts/fuzz.sh"
sanitize_pid=
if [ -n "$sanitize" ]; then
  echo "test: building the sanitize preset (build-sanitize/)${fuzz:+, beside the fuzzer}"
  sanitize_log=$repo/build-sanitize/test-build.log
  (cd "$repo" && ${fuzz:+nice -n 19} cmake --build --preset sanitize) >"$sanitize_log" 2>&1 &
  sanitize_pid=$!
fi
fuzz_rc=0
[ -z "$fuzz" ] || PARITY_FUZZ_STEP=run "$repo/scripts/fuzz.sh" 60 || fuzz_rc=$?
if [ -n "$sanitize_pid" ]; then
  build_rc=0
  wait "$sanitize_pid" || build_rc=$?
  cat "$sanitize_log"
  if ((build_rc)); then
    echo "test: FAILED: the sanitize preset did not build (log above: $sanitize_log)" >&2
    exit "$build_rc"
  fi
fi
if [ -n "$sanitize" ]; then
  echo "test: the unit tests and the fault-injection suite under ASan and UBSan (build-sanitize/)"
  (cd "$repo" && ctest --preset sanitize -j "$(nproc)")
fi
exit "$fuzz_rc"
