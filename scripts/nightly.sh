#!/usr/bin/env bash
# The nightly job: each candidate backend against gold in shards, merged into one report per candidate.
# Run locally it does every shard in sequence; the CI workflow (.github/workflows/nightly.yml) calls the same
# `shard` and `merge` steps from its matrix and final jobs, so both share this code.
#
#   scripts/nightly.sh [all]                      set up and build (scripts/build.sh), then for every candidate:
#                                                 each shard, the merge; a summary table; exit 1 if a candidate
#                                                 failed, 2 for a usage or infrastructure error
#   scripts/nightly.sh shard CANDIDATE I/N OUT    gold + CANDIDATE runs of shard I/N and their compare, in
#                                                 OUT/CANDIDATE/shard-I/{gold,candidate,report.json,exit-codes}
#   scripts/nightly.sh merge CANDIDATE OUT        OUT/CANDIDATE/shard-*/report.json merged into
#                                                 OUT/CANDIDATE/{report.json,junit.xml,report.html}; merge's exit code
#   scripts/nightly.sh summary OUT [CANDIDATE...] a Markdown table of the candidates' merged results
#   scripts/nightly.sh plan                       the candidates and shards of `all` as JSON (the CI matrix)
#
#   PARITY_NIGHTLY_CANDIDATES  candidates of `all` (default: fsproxy masked memmap joblib array_api_strict dask)
#   PARITY_NIGHTLY_SHARDS      shards per candidate in `all` (default: 3)
#   PARITY_NIGHTLY_OUT         OUT of `all` (default: <repo>/parity-out/nightly)
#   PARITY_NIGHTLY_SCENARIOS   scenario paths, space-separated (default: the bundled corpus, compared with
#                              --strict-differences as scripts/main.sh does)
#   PARITY_NIGHTLY_TIMES       scenario times for --shard-times (default: OUT/CANDIDATE/report.json, the previous
#                              night's merged report, when there is one)
#   PARITY_NIGHTLY_SKIP_BUILD  1: `all` uses the parity already built in PARITY_BUILD_DIR (set-up and build skipped)
#   PARITY_BUILD_DIR           build directory holding parity (default: <repo>/build)
# (Not PARITY_NIGHTLY: that is scripts/test.sh's soak mode.)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
self="$repo/scripts/nightly.sh"
build=${PARITY_BUILD_DIR:-$repo/build}
parity="$build/parity"
default_candidates="fsproxy masked memmap joblib array_api_strict dask"

die() {
  echo "nightly: $*" >&2
  exit 2
}

# The usage lines of the header above.
usage_text() {
  sed -n '/^#   scripts\/nightly.sh/,/^#$/p' "$self" | sed -e '$d' -e 's/^# \{0,1\}//'
}

usage() {
  usage_text >&2
  die "$1"
}

need_parity() {
  [ -x "$parity" ] || die "no parity binary at $parity: build it first (scripts/build.sh, PARITY_BUILD_DIR=$build)"
}

# --scenarios for each path of PARITY_NIGHTLY_SCENARIOS; the bundled corpus is the whole corpus, where a declared
# difference that explains nothing is stale (--strict-differences, as scripts/main.sh compares).
scenario_args=()
compare_args=(--strict-differences)
if [ -n "${PARITY_NIGHTLY_SCENARIOS:-}" ]; then
  compare_args=()
  for path in $PARITY_NIGHTLY_SCENARIOS; do scenario_args+=(--scenarios "$path"); done
fi

# The times every shard of a candidate balances by: all of them, gold and candidate, must get the same file.
times_args() {
  local file=${PARITY_NIGHTLY_TIMES:-$1/report.json}
  if [ -n "${PARITY_NIGHTLY_TIMES:-}" ] && [ ! -f "$file" ]; then die "PARITY_NIGHTLY_TIMES=$file: no such file"; fi
  if [ -f "$file" ]; then echo "--shard-times=$file"; fi
}

# A run exits 1 when a scenario errors, which the compare judges; anything else is an infrastructure error.
# A shard exits 0 once its compare wrote the report, whatever it says: the merge gives the verdict (a stale
# declared difference may be stale in one shard and explain something in another), 2 when there is no report.
shard_cmd() {
  [ $# -eq 3 ] || usage "shard takes CANDIDATE I/N OUT"
  local candidate=$1 spec=$2 out=$3
  [[ $spec =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && ((BASH_REMATCH[1] <= BASH_REMATCH[2])) ||
    die "shard: '$spec' is not I/N with 1 <= I <= N"
  need_parity
  local dir="$out/$candidate/shard-${BASH_REMATCH[1]}" times
  times=$(times_args "$out/$candidate")
  rm -rf "$dir"
  mkdir -p "$dir"
  local select=(--shard "$spec" "${scenario_args[@]}" ${times:+"$times"})
  local gold=0 cand=0 cmp=0
  echo "nightly: $candidate shard $spec${times:+ ($times)}"
  "$parity" run --backend gold --out "$dir/gold" -q "${select[@]}" || gold=$?
  "$parity" run --backend "$candidate" --out "$dir/candidate" -q "${select[@]}" || cand=$?
  # The candidate was named by whoever runs the nightly: compare may import it for its reducers.
  "$parity" compare "$dir/gold" "$dir/candidate" -q --shard "$spec" --trust-backend "$candidate" "${compare_args[@]}" \
    --json "$dir/report.json" || cmp=$?
  printf 'gold %s\ncandidate %s\ncompare %s\n' "$gold" "$cand" "$cmp" >"$dir/exit-codes"
  if ((gold > 1 || cand > 1)) || [ ! -f "$dir/report.json" ]; then
    die "$candidate shard $spec: no report (exit codes: run gold $gold, run $candidate $cand, compare $cmp)"
  fi
}

# Merges whatever shards OUT holds: a shard that never reported leaves its scenarios `missing` in the merge.
merge_cmd() {
  [ $# -ge 2 ] || usage "merge takes CANDIDATE OUT"
  [ $# -eq 2 ] || die "merge: unexpected '${*:3}'"
  local candidate=$1 dir="$2/$1" reports=() rc=0 baseline=()
  need_parity
  shopt -s nullglob
  reports=("$dir"/shard-*/report.json)
  shopt -u nullglob
  mkdir -p "$dir"
  # The previous night's merged report becomes the baseline of tonight's trends (new / still failing / fixed), and
  # can then not pass for tonight's if this merge fails.
  # A report newer than a shard report is tonight's own earlier merge (the merge run again): it is no baseline.
  local tonight=0 report
  for report in "${reports[@]}"; do [ "$dir/report.json" -nt "$report" ] && tonight=1; done
  [ -f "$dir/report.json" ] && [ "$tonight" = 0 ] && mv "$dir/report.json" "$dir/baseline.json"
  [ -f "$dir/baseline.json" ] && baseline=(--baseline "$dir/baseline.json")
  rm -f "$dir"/{junit.xml,report.html,merge-exit-code}
  ((${#reports[@]})) || { echo 2 >"$dir/merge-exit-code"; die "merge: no shard report in $dir/shard-*/"; }
  "$parity" merge --json "$dir/report.json" --junit "$dir/junit.xml" --html "$dir/report.html" "${baseline[@]}" \
    "${reports[@]}" || rc=$?
  echo "$rc" >"$dir/merge-exit-code"
  echo "nightly: $candidate merged ${#reports[@]} shard report(s) into $dir (exit $rc)"
  return "$rc"
}

summary_cmd() {
  [ $# -ge 1 ] || usage "summary takes OUT [CANDIDATE...]"
  python3 "$repo/scripts/nightly_summary.py" "$@"
}

# Validated PARITY_NIGHTLY_CANDIDATES and PARITY_NIGHTLY_SHARDS, shared by `all` and `plan`.
read_plan() {
  shards=${PARITY_NIGHTLY_SHARDS:-3}
  read -r -a candidates <<<"${PARITY_NIGHTLY_CANDIDATES:-$default_candidates}"
  [[ $shards =~ ^[1-9][0-9]*$ ]] || die "PARITY_NIGHTLY_SHARDS=$shards is not a positive integer"
  ((${#candidates[@]})) || die "PARITY_NIGHTLY_CANDIDATES is empty"
}

# The CI matrix: {"candidate": [...], "shard": [1..N], "total": N}, so the workflow names no candidate itself.
plan_cmd() {
  [ $# -eq 0 ] || usage "plan takes no arguments"
  read_plan
  python3 -c 'import json, sys; n = int(sys.argv[1]); print(json.dumps(
    {"candidate": sys.argv[2:], "shard": list(range(1, n + 1)), "total": n}))' "$shards" "${candidates[@]}"
}

# Every candidate gets every shard and its merge, whatever the ones before did; the worst exit code wins.
all_cmd() {
  [ $# -eq 0 ] || usage "all takes no arguments"
  local out=${PARITY_NIGHTLY_OUT:-$repo/parity-out/nightly} shards candidates worst=0
  read_plan
  [ "${PARITY_NIGHTLY_SKIP_BUILD:-0}" = 1 ] || "$repo/scripts/build.sh"
  need_parity
  for candidate in "${candidates[@]}"; do
    rm -rf "$out/$candidate"/shard-*  # another night's shards, maybe of another N; its report.json gives the times
    local status=0 rc
    for ((i = 1; i <= shards; i++)); do
      rc=0
      "$self" shard "$candidate" "$i/$shards" "$out" || rc=$?
      ((rc <= status)) || status=$rc
    done
    rc=0
    "$self" merge "$candidate" "$out" || rc=$?
    ((rc <= status)) || status=$rc
    ((status <= worst)) || worst=$status
  done
  # A summary that cannot be printed is an infrastructure error, never a verdict that hides the candidates' own.
  summary_cmd "$out" "${candidates[@]}" || { echo "nightly: cannot print the summary" >&2; ((worst >= 2)) || worst=2; }
  exit "$worst"
}

case ${1:-all} in
  all) [ $# -eq 0 ] || shift; all_cmd "$@" ;;
  shard) shift; shard_cmd "$@" ;;
  merge) shift; merge_cmd "$@" ;;
  summary) shift; summary_cmd "$@" ;;
  plan) shift; plan_cmd "$@" ;;
  -h | --help) usage_text ;;
  *) usage "unknown subcommand '$1'" ;;
esac
