"""`python -m parity ARGS...`: the `parity` command itself (run, compare, report, ...), found beside this Python or on
PATH and executed with the same arguments; `python -m parity list PATH...` lists scenario ids without it."""
import contextlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

EXIT_USAGE = 2  # src/parity/base/outcome.h's kExitUsage


def list_ids(paths):
    """Scenario ids one per line, for CMake's configure-time test registration (which has no binary yet)."""
    if not paths:
        print("usage: python -m parity list PATH...", file=sys.stderr)
        return EXIT_USAGE
    from parity.discovery import SelectionError, discover, select  # imports NumPy: only `list` needs it

    try:  # a directory without scenarios would register no test at all, and an empty ctest passes
        # What a module prints while it is imported (a test module's print at import) must not become a scenario id.
        with contextlib.redirect_stdout(sys.stderr):
            found = select(discover(paths), paths=paths)
    except SelectionError as exc:
        print(f"parity: {exc}", file=sys.stderr)
        return exc.exit_code
    for sc in found.scenarios:
        print(sc.id)
    # A module that fails to import is listed under its own name so that its test exists and fails.
    for err in found.errors:
        print(err.id)
        print(f"parity: scenario module {err.module} ({err.source}): {err.error['type']}: {err.error['message']}",
              file=sys.stderr)
    return 0


def find_parity():
    """The `parity` executable: PARITY_BIN, else the one pip installed beside this Python, else the first on PATH."""
    if os.environ.get("PARITY_BIN"):
        return os.environ["PARITY_BIN"]
    beside = Path(sysconfig.get_path("scripts")) / "parity"
    if os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("parity")


def main(argv):
    if argv[:1] == ["list"]:
        return list_ids(argv[1:])
    program = find_parity()
    if program is None:
        print(f"parity: no `parity` executable in {sysconfig.get_path('scripts')} or on PATH: install it with "
              "`pip install .` from a parity checkout, or name a built one with PARITY_BIN", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(program, [program, *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
