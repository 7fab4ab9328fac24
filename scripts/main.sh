#!/usr/bin/env bash
# README command 1: set up, build, then gold + candidate + compare over the bundled scenarios.
#   PARITY_CANDIDATE  candidate backend (default: fsproxy)
#   PARITY_OUT        where results and reports go (default: <repo>/parity-out)
# Exit code: compare's (0 all passed, 1 something failed, 2 usage or infrastructure error).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PARITY_BUILD_DIR:-$repo/build}
out=${PARITY_OUT:-$repo/parity-out}
candidate=${PARITY_CANDIDATE:-fsproxy}
"$repo/scripts/build.sh"
rm -rf "$out/results"
mkdir -p "$out/reports"
# A run exits 1 when a scenario errors; the compare below reports it, so the job goes on.
"$build/parity" run --backend gold --out "$out/results/gold" -q || [ $? -eq 1 ]
"$build/parity" run --backend "$candidate" --out "$out/results/candidate" -q || [ $? -eq 1 ]
status=0
# The bundled corpus is the whole corpus: a difference the candidate declares that explains nothing is stale.
# --trust-backend: the candidate is the one named here (a path or module may not be a built-in backend).
"$build/parity" compare "$out/results/gold" "$out/results/candidate" --strict-differences --trust-backend "$candidate" \
  --json "$out/reports/report.json" --junit "$out/reports/junit.xml" --html "$out/reports/report.html" || status=$?
echo "main: reports in $out/reports (report.json, junit.xml, report.html)"
exit $status
