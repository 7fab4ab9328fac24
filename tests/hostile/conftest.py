"""Shared helpers of the hostile-input suite (label `hostile`): run the built binary, make a gold/candidate pair."""
import atexit
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
HERE = Path(__file__).resolve().parent
# Ordinary scenarios the hostile tests start from (tests/hostile/scenarios), beside the ones each test writes.
SCENARIOS = HERE / "scenarios"

# Runs sign their pickles with a key of the suite's own, never the user's (CTest sets one; pytest alone gets this,
# removed at its end). setdefault's argument had made an empty directory in /tmp under CTest too, on every run.
if "PARITY_KEY_FILE" not in os.environ:
    _key_dir = tempfile.mkdtemp(prefix="parity-hostile-key-")
    atexit.register(shutil.rmtree, _key_dir, True)
    os.environ["PARITY_KEY_FILE"] = str(Path(_key_dir) / "key")

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)


def parity(*args, check=None, timeout=120, env=None, cwd=None):
    """Runs the parity binary with a hard time limit (a hang is a defect here); asserts the exit code if given."""
    full_env = dict(os.environ, **(env or {}))
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=full_env,
                          cwd=cwd)
    if check is not None:
        assert proc.returncode == check, (f"parity {' '.join(map(str, args))}: exit {proc.returncode}, expected "
                                          f"{check}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def read_json(path):
    return json.loads(Path(path).read_text())


def statuses(report):
    """Scenario id -> scenario entry of a compare JSON."""
    return {s["id"]: s for s in read_json(report)["scenarios"]}


@pytest.fixture(scope="session")
def pair(tmp_path_factory):
    """A gold and an fsproxy run of tests/hostile/scenarios, made once; tests copy it (`pair_copy`) to damage it."""
    tmp = tmp_path_factory.mktemp("pair")
    parity("run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", tmp / "gold", "-q", check=0)
    parity("run", "--backend", "fsproxy", "--scenarios", SCENARIOS, "--out", tmp / "cand", "-q", check=0)
    return tmp / "gold", tmp / "cand"


@pytest.fixture
def pair_copy(pair, tmp_path):
    """A private copy of `pair` that a test may tamper with."""
    gold, cand = pair
    shutil.copytree(gold, tmp_path / "gold")
    shutil.copytree(cand, tmp_path / "cand")
    return tmp_path / "gold", tmp_path / "cand"
