"""A pytest suite's fixtures keep what they change in the worker process for their scope (README, "Scenario
isolation"): a session fixture's environment variable, umask, signal handler and NumPy error state, a module fixture's
environment variable, are there for every test in their scope, and their teardowns find them there. Scenario
isolation had put them back after the first test, whose setup set them, and a teardown deleting the variable failed.

The suite is suites/fixture_state/ (data: conftest.py keeps this suite from collecting it), run from a copy."""
import json
import shutil
from pathlib import Path

from e2e_test import manifest_entries, parity  # the shared e2e helpers

SUITE = Path(__file__).resolve().parent / "suites" / "fixture_state"

SESSION = {"mode": "fast", "umask": 0o027, "usr2": "on_usr2", "divide": "raise"}
WORKER = {"mode": None, "offline": None, "umask": 0o022, "usr2": 0, "divide": "warn"}


def test_fixtures_keep_their_effects_for_their_scope_in_one_worker(tmp_path):
    suite = tmp_path / "fixture_state"
    shutil.copytree(SUITE, suite)
    seen = tmp_path / "seen"
    seen.mkdir()
    proc = parity("run", "--backend", "gold", "--out", tmp_path / "out", "-q", "--jobs", "1", "--scenarios", suite,
                  env={"FIXTURE_SEEN": str(seen)}, check=None)
    statuses = {id_: entry["status"] for id_, entry in manifest_entries(tmp_path / "out").items()}
    assert statuses == {"native.meddles": "ok", "test_a_module.py::test_first": "ok",
                        "test_a_module.py::test_second": "ok", "test_c_later.py::test_later": "ok"}, proc.stderr
    assert "tearing down pytest fixtures failed" not in proc.stderr  # the session fixture's own teardown
    saw = {path.stem: json.loads(path.read_text()) for path in seen.iterdir()}
    assert saw["native"] == WORKER
    assert saw["first"] == saw["second"] == {**SESSION, "offline": "1"}
    assert saw["later"] == {**SESSION, "offline": None}  # the module fixture's teardown ran, and only it
