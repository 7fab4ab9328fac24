"""parity's own pytest suites: makes the repo's Python package (python/), the shared e2e helpers (tests/e2e_test.py)
and the report demo (tests/e2e/report/demo_run.py) importable, and points a source checkout's `parity` at the built
extension module parity._core. Every suite under tests/ gets it: CTest runs each with --rootdir tests/ (run one by
hand the same way: `python -m pytest --rootdir tests tests/shard`). Subprocesses get their own PYTHONPATH."""
import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = Path(os.environ.get("PARITY_REPO", TESTS.parent))

for path in (TESTS / "e2e" / "report", TESTS, REPO / "python"):  # the last one inserted comes first
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# CTest sets it to the build's; by hand, the one beside the binary the suites run (PARITY_BIN, default build/).
os.environ.setdefault("PARITY_CORE_DIR",
                      str(Path(os.environ.get("PARITY_BIN", REPO / "build" / "parity")).parent / "python"))
