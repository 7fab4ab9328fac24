"""`python -m parity list PATH...`: scenario ids one per line, for CMake's configure-time test registration."""
import contextlib
import sys

from parity.discovery import SelectionError, discover, select


def main(argv):
    if len(argv) < 2 or argv[0] != "list":
        print("usage: python -m parity list PATH...", file=sys.stderr)
        return 2
    try:  # a directory without scenarios would register no test at all, and an empty ctest passes
        # What a module prints while it is imported (a test module's print at import) must not become a scenario id.
        with contextlib.redirect_stdout(sys.stderr):
            found = select(discover(argv[1:]), paths=argv[1:])
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
