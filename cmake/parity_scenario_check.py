# The per-scenario CTest tests of cmake/ParityScenarioTests.cmake: judge one scenario from the shared runs and compare.
"""Usage:
  parity_scenario_check.py shared OUT -- COMMAND...   run COMMAND (a whole-corpus `parity run` or `parity compare`)
                                                    into OUT, removed first so that nothing stale is ever judged
  parity_scenario_check.py run RESULTS_DIR ID         fail when ID's run status fails (as `parity run --only ID`
                                                    exits 1), or ID is not in the run
  parity_scenario_check.py compare REPORT_JSON ID     fail when ID's compare status fails (as `parity compare --only
                                                    ID` exits 1), or ID is not in the report

A shared command's exit 1 (some scenario failed) passes: the per-scenario tests name each failure. Anything else
(usage, no scenarios, a signal) fails it, and CTest then runs none of the tests that need its results.
Standard library only, started with `python -S -I`: one of these runs per scenario and per side.
"""
import json
import os
import shutil
import subprocess
import sys

# Copies of src/parity/base/outcome.h's vocabulary (tests/vocabulary/test_vocabulary.py holds them to it).
FAILING_RUN_STATUSES = ("error", "xpass", "crash", "timeout")
FAILING_STATUSES = ("fail", "error", "xpass", "timeout")
EXIT_OK, EXIT_FAILED = 0, 1


def shared(out, command):
    """Runs the whole-corpus command into a fresh OUT; passes when it ran to its verdict and wrote OUT."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    elif os.path.exists(out):
        os.remove(out)
    rc = subprocess.run(command).returncode
    if rc not in (EXIT_OK, EXIT_FAILED):
        print(f"parity_scenario_check: {' '.join(command)} exited {rc}", file=sys.stderr)
        return 1
    if not os.path.exists(out):
        print(f"parity_scenario_check: {' '.join(command)} wrote no {out}", file=sys.stderr)
        return 1
    return 0


def find(entries, scenario_id, where):
    """The entry of `entries` whose id is scenario_id, or None after saying so."""
    for entry in entries:
        if entry.get("id") == scenario_id:
            return entry
    print(f"{scenario_id}: missing from {where}")
    return None


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_run(results_dir, scenario_id):
    manifest_path = os.path.join(results_dir, "manifest.json")
    manifest = load(manifest_path)
    entry = find(manifest.get("scenarios", []), scenario_id, manifest_path)
    if entry is None:
        return 1
    status = entry.get("status")
    role = manifest.get("backend", {}).get("role", "run")
    print(f"{role} {scenario_id}: {status} ({results_dir})")
    error = entry.get("error")
    if error:
        print(f"{error.get('type', '')}: {error.get('message', '')}\n{error.get('traceback', '')}".rstrip())
    return 1 if status in FAILING_RUN_STATUSES else 0


def check_compare(report_path, scenario_id):
    report = load(report_path)
    entry = find(report.get("scenarios", []), scenario_id, report_path)
    if entry is None:
        return 1
    status = entry.get("status")
    print(f"compare {scenario_id}: {status} {entry.get('message', '')}".rstrip())
    for check in entry.get("checks", []):
        if not check.get("ok", True):
            print(f"  {check.get('check')} at {check.get('path')}: {check.get('message', '')}")
    for skipped in entry.get("skipped_checks", []):
        print(f"  skipped {skipped.get('check')} ({skipped.get('side')}): {skipped.get('reason', '')}")
    if status in FAILING_STATUSES and entry.get("repro"):
        print(f"  repro: {entry['repro']}")
    return 1 if status in FAILING_STATUSES else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "shared" and argv[2] == "--":
        return shared(argv[1], argv[3:])
    if len(argv) == 3 and argv[0] == "run":
        return check_run(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == "compare":
        return check_compare(argv[1], argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
