#!/usr/bin/env bash
# Runs every benchmark of bench/README.md in one go and ends with all their targets, each a ratio from this run.
#
#   bench/all.sh            # full sizes: 800 MB arrays, 500 and 5,000 scenarios (about 20 minutes on 2 cores)
#   bench/all.sh --quick    # every benchmark at its smoke-test size (what CTest's bench_all_quick runs)
#
# PARITY_BUILD_DIR (default build/) holds the built benchmarks; PARITY_VENV (default .venv/) the Python. The exit
# status is 1 when a benchmark fails (a wrong answer, a command that fails), never because a target is missed.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PARITY_BUILD_DIR:-$repo/build}"
python="${PARITY_PYTHON_BIN:-${PARITY_VENV:-$repo/.venv}/bin/python}"
quick=()
case "${1:-}" in
  --quick) quick=(--quick) ;;
  "") ;;
  *) echo "usage: bench/all.sh [--quick]" >&2; exit 2 ;;
esac
export PARITY_BIN="${PARITY_BIN:-$build/parity}"

for needed in "$build/bench/parity_compare_bench" "$build/bench/parity_codec_bench" "$PARITY_BIN" "$python"; do
  [[ -x "$needed" ]] || { echo "bench/all.sh: $needed is missing: build first (scripts/build.sh)" >&2; exit 2; }
done

log="$(mktemp -d "${TMPDIR:-/tmp}/parity-bench-all.XXXXXX")"
trap 'rm -rf "$log"' EXIT
failed=()

# One benchmark: its whole output goes to the terminal and to a log whose target lines are gathered at the end.
# Exit status 77 means "cannot run here" (no chromium for the HTML benchmark): reported, not a failure.
bench() {
  local name="$1"; shift
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$log/$name.out"
  local status="${PIPESTATUS[0]}"
  if [[ "$status" == 77 ]]; then
    echo "--- $name skipped (exit 77)"
  elif [[ "$status" != 0 ]]; then
    failed+=("$name (exit $status)")
  fi
  echo
}

# --variants in the quick run too, so the experimental loops of the compare benchmark keep working.
bench compare "$build/bench/parity_compare_bench" "${quick[@]}" ${quick[0]:+--variants}
bench codec "$build/bench/parity_codec_bench" "${quick[@]}" --dir "$log"
# The pipeline's files stay until the end (in the log directory): removing tens of thousands of them right before the
# floor's runs (thousands of small files) would time the file system's clean-up there (pipeline_bench.py's `fresh`).
bench pipeline "$python" "$repo/bench/pipeline_bench.py" "${quick[@]}" --keep "$log/pipeline"
bench probe "$python" "$repo/bench/probe_bench.py" "${quick[@]}"
bench floor "$python" "$repo/bench/floor_bench.py" "${quick[@]}"
bench discovery "$python" "$repo/bench/discovery_bench.py" "${quick[@]}"
if [[ ${#quick[@]} -gt 0 ]]; then
  bench html_report "$python" "$repo/bench/html_report_bench.py" --scenarios 200 --repeat 1
else
  bench html_report "$python" "$repo/bench/html_report_bench.py"
fi

echo "=== ALL TARGETS (informational; PASS/MISS lines of every benchmark above)"
for name in compare codec pipeline probe html_report; do
  [[ -f "$log/$name.out" ]] && grep -E '^ *(PASS|MISS) ' "$log/$name.out" | sed "s/^ */   [$name] /"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench/all.sh: failed: ${failed[*]}" >&2
  exit 1
fi
