"""A pytest test's result is written before its teardown runs (issue #18, item 2): a fixture whose teardown changes
the object the test returned (zeroes a buffer, drops a column) must change neither what is recorded nor what compare
sees, and a teardown that fails is still that test's error.

The suites are under suites/teardown/ (data: conftest.py keeps this suite from collecting them); each test runs a
copy in its own tmp_path, but for the values suite's gold run, which two tests read: one copy and run for the module.
"""
import shutil
from pathlib import Path

import pytest
from parity import probe

from e2e_test import compare, failing, manifest_entries, parity, run  # the shared e2e helpers

SUITES = Path(__file__).resolve().parent / "suites" / "teardown"


def suite(tmp_path, name):
    """A copy of suites/teardown/`name` at tmp_path/suite/`name`."""
    target = tmp_path / "suite" / name
    shutil.copytree(SUITES / name, target)
    return target


def returned(out, entry):
    """What the test returned, as the run's pickle probe kept it (written with the result file). These outputs are
    small: their pickles reference no array of the result file (docs/format.md, "Pickles"), so none is given."""
    obj, error, why = probe.unpickle((out / entry["file"]).read_bytes()[entry["pickle_offset"]:])
    assert error is None and why is None, (error, why)
    return obj


@pytest.fixture(scope="module")
def values_gold(tmp_path_factory):
    """A copy of the values suite and its gold run (whose teardowns mutate what the tests returned), made once for the
    two tests that read them; (suite, results)."""
    tmp = tmp_path_factory.mktemp("values")
    values = suite(tmp, "values")
    run("gold", tmp / "gold", "--scenarios", values)
    return values, tmp / "gold"


def test_a_drift_a_mutating_teardown_would_wipe_out_is_caught_by_values(values_gold, tmp_path):
    values, gold = values_gold
    run("fsproxy", tmp_path / "fsproxy", "--scenarios", values)
    _, report, _ = compare(gold, tmp_path / "fsproxy", tmp_path, "--scenarios", values)
    caught = {(id_, check) for id_, check, _ in failing(report)}
    assert ("test_values.py::test_visible_drift", "values") in caught, caught
    assert ("test_values.py::test_hidden_drift", "values") in caught, caught


def test_what_is_recorded_is_what_the_test_returned_not_what_its_teardown_left(values_gold, tmp_path):
    values, mutated = values_gold
    parity("run", "--backend", "gold", "--out", tmp_path / "tidy", "-q", "--scenarios", values,
           env={"PARITY_TEARDOWN_TIDY": "1"}, check=0)
    entries = manifest_entries(mutated)
    assert returned(mutated, entries["test_values.py::test_buffer"]).tolist() == [1.0, 1.0, 1.0]
    assert list(returned(mutated, entries["test_values.py::test_frame"]).columns) == ["a", "b"]
    # The result files themselves: every check passes against a run whose teardowns leave the results alone.
    proc, report, _ = compare(tmp_path / "tidy", mutated, tmp_path, "--scenarios", values)
    assert proc.returncode == 0 and not failing(report), (failing(report), proc.stdout)


# Each test's record of the fixtures set up and torn down before it returned (module fixtures once per module,
# function fixtures torn down after every test, whatever its status), run in one worker as one pytest session.
A_SETUP = ["setup test_a_first", "setup test_one"]
A_BEFORE_TWO = [*A_SETUP, "teardown test_one", "setup test_skips", "teardown test_skips", "setup test_xfails",
                "teardown test_xfails", "setup test_unwritable", "teardown test_unwritable", "setup test_two"]
B_BEFORE_AFTER = [*A_BEFORE_TWO, "teardown test_two", "teardown test_a_first", "setup test_b_second",
                  "setup test_after"]
EVENTS = {
    "test_a_first.py::test_one": A_SETUP,
    "test_a_first.py::test_two": A_BEFORE_TWO,
    "test_b_second.py::test_after": B_BEFORE_AFTER,
    "test_b_second.py::test_last": [*B_BEFORE_AFTER, "teardown test_after"],
}


def test_fixtures_are_set_up_once_per_module_and_torn_down_after_every_test_whatever_its_status(tmp_path):
    order = suite(tmp_path, "order")
    out = tmp_path / "out"
    run("gold", out, "--scenarios", order, "--jobs", "1", check=1)
    entries = manifest_entries(out)
    assert {id_: returned(out, entries[id_]) for id_ in EVENTS} == EVENTS
    statuses = {id_: entry["status"] for id_, entry in entries.items() if id_ not in EVENTS}
    assert statuses == {"test_a_first.py::test_skips": "skip", "test_a_first.py::test_xfails": "xfail",
                        "test_a_first.py::test_unwritable": "error", "test_b_second.py::test_teardown_raises": "error"}
    assert entries["test_a_first.py::test_unwritable"]["error"]["type"] == "SerializeError"


def test_a_teardown_that_raises_after_the_result_is_written_is_still_that_tests_error(tmp_path):
    order = suite(tmp_path, "order")
    out = tmp_path / "out"
    run("gold", out, "--scenarios", order, "--only", "test_b_second.py::test_teardown_raises", check=1)
    entry = manifest_entries(out)["test_b_second.py::test_teardown_raises"]
    assert entry["status"] == "error", entry
    assert entry["error"]["type"] == "RuntimeError" and entry["error"]["message"] == "in teardown: teardown went wrong"
    # What it returned was written before its teardown ran, and is kept beside the error.
    assert returned(out, entry) == [1.0, 2.0]
