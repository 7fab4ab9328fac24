#!/usr/bin/env bash
# README command 1: set up, build, then gold + candidate + compare (parity check) over the bundled scenarios.
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
# parity check: the gold and candidate runs side by side into $out/results/{gold,candidate}, then their compare (it
# trusts the candidate it ran). A run's scenario error is a failure the compare reports, not the end of the job.
# The bundled corpus is the whole corpus: a difference the candidate declares that explains nothing is stale.
status=0
"$build/parity" check --backend "$candidate" --out "$out/results" --strict-differences \
  --json "$out/reports/report.json" --junit "$out/reports/junit.xml" --html "$out/reports/report.html" || status=$?
echo "main: reports in $out/reports (report.json, junit.xml, report.html)"
exit $status
