#!/usr/bin/env bash
# Fuzzes the result decoder (tests/fuzz/decoder_fuzz.cc) with libFuzzer under ASan and UBSan for SECONDS
# (default 60). Exits non-zero on any finding: a crash, a sanitizer report, an exception other than
# FormatError, a timeout or an out-of-memory; the input is saved under build-fuzz/fuzz-artifacts/.
# Needs clang and compiler-rt (scripts/setup.sh installs them); installs nothing itself.
#   PARITY_FUZZ_BUILD_DIR  build directory (default: <repo>/build-fuzz), kept apart from build/: every
#                          object in it, parity_core included, is instrumented
#   PARITY_FUZZ_STEP       `build`: configure and build only; `run`: fuzz the target already built; unset: both
#                          (scripts/test.sh builds first, then fuzzes while the sanitize preset builds beside it)
#   usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-60}
shift $(($# > 0 ? 1 : 0))
build=${PARITY_FUZZ_BUILD_DIR:-$repo/build-fuzz}
python=${PARITY_VENV:-$repo/.venv}/bin/python

# The whole library is compiled with the sanitizers (plus fuzzer-no-link: coverage feedback from the
# decoder itself), so a bug inside parity_core is caught where it happens. Debug adds only -g to these.
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
flags+=" -fno-omit-frame-pointer -g -O1"
step=${PARITY_FUZZ_STEP:-}
case $step in "" | build | run) ;; *) echo "fuzz: PARITY_FUZZ_STEP must be build or run, got '$step'" >&2; exit 2 ;; esac
fuzzer=$build/tests/fuzz/parity_decoder_fuzz
if [ "$step" != run ]; then
  # A unity build (sources batched per layer), as the sanitize preset: the build is on CI's critical path.
  CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_UNITY_BUILD=ON -DPARITY_FUZZ=ON -DPARITY_REGISTER_SCENARIOS=OFF -DPython_EXECUTABLE="$python" >/dev/null
  cmake --build "$build" --target parity_decoder_fuzz
  [ "$step" != build ] || exit 0
elif [ ! -x "$fuzzer" ]; then
  echo "fuzz: $fuzzer is not built (PARITY_FUZZ_STEP=build first)" >&2
  exit 2
fi

# Seeds are written fresh by the fuzz binary itself (write_result on every node kind), beside the hand-made
# hostile ones of tests/fuzz/seeds (deep nesting); the corpus of inputs that found new coverage is kept
# between local runs (libFuzzer adds to the first directory only).
seeds=$build/fuzz-seeds corpus=$build/fuzz-corpus artifacts=$build/fuzz-artifacts
rm -rf "$seeds"
mkdir -p "$corpus" "$artifacts"

# detect_leaks=0: CPython and NumPy are not instrumented and keep interned objects, caches and module
# state for the life of the process (the interpreter is never finalized), which LeakSanitizer would report
# as leaks at exit. Per-input growth is still caught, by -rss_limit_mb.
# Nothing else is needed for ASan inside CPython: the static ASan runtime linked into the fuzz binary
# intercepts malloc for libpython and NumPy's extension modules as well (they are just not checked), and
# ODR checking only sees parity's own instrumented globals, so neither -shared-libasan nor
# detect_odr_violation=0 is required.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:symbolize=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}
# In a temporary directory of its own, which must be empty afterwards: the memmap seed's file had been left in /tmp by
# every run (tests/codec_cases.py, remove_memmap_file).
seeds_tmp=$(mktemp -d)
trap 'rm -rf "$seeds_tmp"' EXIT
TMPDIR=$seeds_tmp "$fuzzer" --write-seeds "$seeds"
if [ -n "$(ls -A "$seeds_tmp")" ]; then
  echo "fuzz: FAILED: writing the seeds left files in its temporary directory:" $(ls -A "$seeds_tmp") >&2
  exit 1
fi
rmdir "$seeds_tmp"
trap - EXIT

echo "fuzz: running the decoder fuzzer for ${seconds}s"
if ! "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 -print_final_stats=1 \
  -dict="$repo/tests/fuzz/decoder.dict" -artifact_prefix="$artifacts/" "$@" "$corpus" "$seeds" "$repo/tests/fuzz/seeds"; then
  echo "fuzz: FAILED: the decoder fuzzer found a problem; the input is in $artifacts/" >&2
  echo "fuzz: reproduce with: $fuzzer $artifacts/<file>" >&2
  exit 1
fi
