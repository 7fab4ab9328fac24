"""The soak (nightly mode: scripts/test.sh runs every test through ctest -j) runs alone, since it counts the machine's."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("PARITY_BIN", REPO / "build" / "parity")).parent


def test_the_soak_runs_alone_under_ctest_j():
    """The soak's check of leftovers counts every process of this binary and parity's and joblib's new /dev/shm
    entries: beside another test (ctest -j in nightly mode) it counted that test's parity process as its own leftover
    and failed. RUN_SERIAL keeps every other test off while it runs."""
    ctest = shutil.which("ctest")
    if ctest is None or not (BUILD / "CTestTestfile.cmake").is_file():
        pytest.skip(f"needs ctest and the CTest build directory of the parity under test ({BUILD})")
    listing = subprocess.run([ctest, "--test-dir", str(BUILD), "--show-only=json-v1", "-R", "^soak$"],
                             capture_output=True, text=True, check=True, timeout=120)
    tests = json.loads(listing.stdout)["tests"]
    assert [t["name"] for t in tests] == ["soak"], listing.stdout[:2000]
    properties = {p["name"]: p["value"] for p in tests[0].get("properties", [])}
    assert properties.get("RUN_SERIAL") is True, properties
