"""parity's own pytest suites: makes the repo's Python package (python/), the shared e2e helpers (tests/e2e_test.py)
and the report demo (tests/e2e/report/demo_run.py) importable, and points a source checkout's `parity` at the built
extension module parity._core. Every suite under tests/ gets it: CTest runs each with --rootdir tests/ (run one by
hand the same way: `python -m pytest --rootdir tests tests/shard`). Subprocesses get their own PYTHONPATH."""
import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = Path(os.environ.get("PARITY_REPO", TESTS.parent))

for path in (TESTS / "e2e" / "report", TESTS, REPO / "python"):  # the last one inserted comes first
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# CTest sets it to the build's; by hand, the one beside the binary the suites run (PARITY_BIN, default build/).
os.environ.setdefault("PARITY_CORE_DIR",
                      str(Path(os.environ.get("PARITY_BIN", REPO / "build" / "parity")).parent / "python"))


@pytest.fixture(scope="session")
def corpus_gold(tmp_path_factory):
    """One gold run of the bundled corpus for the whole session, which the modules that ask for it only read (the e2e
    suite's e2e_test.py and candidates_test.py): each run imports every corpus module and runs its ~290 scenarios."""
    from e2e_test import run

    out = tmp_path_factory.mktemp("corpus-gold") / "gold"
    run("gold", out)
    return out
