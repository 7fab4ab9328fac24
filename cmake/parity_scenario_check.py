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
import marshal
import os
import sys
import zlib

# shutil and subprocess are imported by the one shared setup that needs them, json only where a document is read (the
# setup, or a check without an index): ~18 and ~8-15 ms of each of the ~3,000 checks' processes (the checks are most
# of these runs, and one that reads the index needs none of them; issue #20, target 6).

# Copies of src/parity/base/outcome.h's vocabulary (tests/vocabulary/test_vocabulary.py holds them to it).
FAILING_RUN_STATUSES = ("error", "xpass", "crash", "timeout")
FAILING_STATUSES = ("fail", "error", "xpass", "timeout")
EXIT_OK, EXIT_FAILED = 0, 1


def remove(path):
    import shutil

    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def shared(out, command):
    """Runs the whole-corpus command into a fresh OUT; passes when it ran to its verdict and wrote OUT. Then indexes
    OUT's entries by id (write_index)."""
    import subprocess

    for path in (out, index_dir(out)):
        remove(path)
    rc = subprocess.run(command).returncode
    if rc not in (EXIT_OK, EXIT_FAILED):
        print(f"parity_scenario_check: {' '.join(command)} exited {rc}", file=sys.stderr)
        return 1
    if not os.path.exists(out):
        print(f"parity_scenario_check: {' '.join(command)} wrote no {out}", file=sys.stderr)
        return 1
    try:
        write_index(out)
    except Unreadable as e:
        print(f"parity_scenario_check: {' '.join(command)}: {e}", file=sys.stderr)
        return 1
    return 0


def document_of(out):
    """The JSON file a shared OUT holds its entries in: a run's manifest, or compare's report (OUT itself)."""
    return os.path.join(out, "manifest.json") if os.path.isdir(out) else out


def index_dir(out):
    return out + ".by-id"


def bucket_name(scenario_id):
    return f"{zlib.crc32(scenario_id.encode('utf-8', 'surrogatepass')):08x}.marshal"


def stamp(path):
    """What changes whenever a document is written again (parity writes each one aside and renames it into place)."""
    info = os.stat(path)
    return [info.st_mtime_ns, info.st_size, info.st_ino]


def write_index(out):
    """Each entry of OUT's document in a small file of OUT.by-id/ named by a CRC of its id (ids sharing one share the
    file), with the document's stamp: a per-scenario test reads that instead of the whole document, whose parse (1-3
    MB for the bundled corpus) had been most of each of its ~3,000 tests' 60-100 ms (bench/README, target 6). Written
    aside and renamed into place, so that a test never reads half an index. In marshal's format, built into the
    interpreter: reading it imports nothing, where json brings re (~8-15 ms a process). The same interpreter writes
    and reads it (CMake's Python_EXECUTABLE), and the index only mirrors a document of the build's own runs: a file
    that does not read back as one is passed over (indexed)."""
    where = document_of(out)
    try:
        written = stamp(where)  # before the read: a document replaced meanwhile leaves an index no test trusts
    except OSError as e:
        raise Unreadable(f"cannot read {where}: {e}") from e
    role, entries = read_document(where)
    buckets = {}
    for entry in entries:  # the first entry of an id, as lookup's reading of the document finds it
        buckets.setdefault(bucket_name(entry["id"]), {}).setdefault(entry["id"], entry)
    partial = index_dir(out) + ".partial"
    remove(partial)
    os.makedirs(partial)
    for name, entries in buckets.items():
        with open(os.path.join(partial, name), "wb") as f:
            marshal.dump({"stamp": written, "role": role, "entries": entries}, f)
    os.rename(partial, index_dir(out))


def indexed(out, where, scenario_id):
    """(scenario_id's entry, the run's role) from OUT's index; (None, None) where it has no word on it: no index, no
    file for that id, one written for another version of the document (a run made by hand into OUT since), or one
    that is not an index file (damaged): the document, which the index only mirrors, then judges."""
    try:
        with open(os.path.join(index_dir(out), bucket_name(scenario_id)), "rb") as f:
            bucket = marshal.load(f)
        current = stamp(where)
    # No index, no document (lookup then says), or a damaged bucket, on which marshal raises EOFError, ValueError,
    # TypeError, MemoryError (a huge length), SystemError...: the index is only a shortcut to the document.
    except Exception:
        return None, None
    if not isinstance(bucket, dict) or bucket.get("stamp") != current:
        return None, None
    entry = bucket.get("entries", {}).get(scenario_id) if isinstance(bucket.get("entries"), dict) else None
    return (entry, bucket.get("role")) if isinstance(entry, dict) else (None, None)


def lookup(out, scenario_id):
    """(scenario_id's entry in OUT's document or None after saying it is missing, the run's role): from the index
    where it has the entry (OUT was written by `shared`), else from the document itself."""
    where = document_of(out)
    entry, role = indexed(out, where, scenario_id)
    if entry is None:
        try:
            role, entries = read_document(where)
        except Unreadable as e:
            print(f"{scenario_id}: {e}")
            return None, None
        entry = next((e for e in entries if e.get("id") == scenario_id), None)
    if entry is None:
        print(f"{scenario_id}: missing from {where}")
    return entry, role


class Unreadable(Exception):
    """A file that is missing, unreadable or not the JSON document it should be; the message names it."""


def load(path):
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:  # ValueError: json's decode errors and UnicodeDecodeError
        raise Unreadable(f"cannot read {path}: {e}") from e


def read_document(where):
    """(the run's role, its scenario entries) of a manifest or compare report; Unreadable when it is not one."""
    document = load(where)
    scenarios = document.get("scenarios") if isinstance(document, dict) else None
    if not isinstance(scenarios, list) or not all(isinstance(e, dict) and isinstance(e.get("id"), str)
                                                  for e in scenarios):
        raise Unreadable(f"cannot read {where}: not a parity manifest or report (no list of scenario objects with "
                         "string ids)")
    backend = document.get("backend")
    return (backend.get("role", "run") if isinstance(backend, dict) else "run"), scenarios


def check_run(results_dir, scenario_id):
    entry, role = lookup(results_dir, scenario_id)
    if entry is None:
        return 1
    status = entry.get("status")
    print(f"{role} {scenario_id}: {status} ({results_dir})")
    error = entry.get("error")
    if error:
        print(f"{error.get('type', '')}: {error.get('message', '')}\n{error.get('traceback', '')}".rstrip())
    return 1 if status in FAILING_RUN_STATUSES else 0


def check_compare(report_path, scenario_id):
    entry, _ = lookup(report_path, scenario_id)
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
