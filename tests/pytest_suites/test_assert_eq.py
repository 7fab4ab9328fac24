"""Issue #18, item 4 (compare side): a pytest suite's assert_eq(fn=...) runs in compare on the rebuilt outputs as the
check `assert_eq`, beside parity's own checks, only from a trusted suite; xfail_compare follows the suite's
xfail_strict."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_test import BIN, REPO, parity, run

SUITES = Path(__file__).resolve().parent / "suites"
OWN_SUITES = ("asserteq", "lenient")
MODULE = "asserteq/test_module_mark.py"
MARKS = "asserteq/test_marks.py"
MODULE_IDS = [f"{MODULE}::test_cumsum", f"{MODULE}::test_power[1]", f"{MODULE}::test_power[2]"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The suites copied out of the source tree (so that what compare writes into them would show), run under gold,
    fsproxy and broken.perturb (a candidate that drifts one value of each output)."""
    tmp = tmp_path_factory.mktemp("asserteq")
    suites = tmp / "suites"
    for own in OWN_SUITES:  # only this file's suites: the others under suites/ belong to other test files
        shutil.copytree(SUITES / own, suites / own, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for name in ("gold", "fsproxy", "broken.perturb"):
        run(name, tmp / name, "--scenarios", suites)
    return tmp


def compared(runs, tmp_path, candidate, *extra, check, trusted=True, env=None):
    """(terminal output, {id: scenario}) of gold against `candidate`, trusting the suites unless told not to."""
    trust = ("--scenarios", runs / "suites") if trusted else ()
    json_file = tmp_path / "report.json"
    proc = parity("compare", runs / "gold", runs / candidate, "--json", json_file, *trust, *extra, env=env,
                  check=check)
    return proc.stdout + proc.stderr, {s["id"]: s for s in json.loads(json_file.read_text())["scenarios"]}


def checks(scenario, name):
    return [c for c in scenario["checks"] if c["check"] == name]


def failed(scenario):
    return {c["check"] for c in scenario["checks"] if not c["ok"]}


def test_a_faithful_candidate_passes_every_asserter_it_has(runs, tmp_path):
    _, scenarios = compared(runs, tmp_path, "fsproxy", "--only", MODULE_IDS[0], "--only", MODULE_IDS[1],
                            "--only", f"{MARKS}::TestScaled::test_scaled", "--only", f"{MARKS}::test_no_asserter",
                            check=0)
    for scenario_id in (*MODULE_IDS[:2], f"{MARKS}::TestScaled::test_scaled"):
        assert scenarios[scenario_id]["status"] == "pass", scenarios[scenario_id]
        assert [c["ok"] for c in checks(scenarios[scenario_id], "assert_eq")] == [True], scenario_id
        assert checks(scenarios[scenario_id], "values"), scenario_id  # parity's own checks ran too
    assert not checks(scenarios[f"{MARKS}::test_no_asserter"], "assert_eq")  # no mark, no check


def test_a_module_pytestmark_asserter_fails_a_drift_with_its_own_message(runs, tmp_path):
    output, scenarios = compared(runs, tmp_path, "broken.perturb", *(w for i in MODULE_IDS for w in ("--only", i)),
                                 check=1)
    for scenario_id in MODULE_IDS:
        scenario = scenarios[scenario_id]
        assert scenario["status"] == "fail" and failed(scenario) == {"values", "assert_eq"}, scenario
        [check] = checks(scenario, "assert_eq")
        assert check["path"] == "outputs" and check["details"]["criterion"].endswith("assert_allclose"), check
        assert "Not equal to tolerance" in check["details"]["message"], check
        assert "assert_allclose(gold, candidate) failed:" in check["message"], check
        # The repro names the node id, as for any failed scenario.
        assert "Repro" not in check["message"] and f"--only {scenario_id}" in scenario["repro"].replace("'", "")
    assert "[assert_eq]" in output and "Not equal to tolerance" in output, output


def test_a_class_mark_asserter_fails_with_the_message_it_raised(runs, tmp_path):
    test = f"{MARKS}::TestScaled::test_scaled"
    output, scenarios = compared(runs, tmp_path, "broken.perturb", "--only", test, check=1)
    [check] = checks(scenarios[test], "assert_eq")
    assert not check["ok"] and check["details"]["criterion"] == "test_marks.assert_same_sums", check
    assert check["message"].startswith("test_marks.assert_same_sums(gold, candidate) failed: sums differ: gold ")
    assert "sums differ: gold" in output


def test_an_asserter_that_compares_nothing_cannot_hide_a_drift(runs, tmp_path):
    test = f"{MARKS}::test_blind_asserter"
    _, scenarios = compared(runs, tmp_path, "broken.perturb", "--only", test, check=1)
    scenario = scenarios[test]
    assert scenario["status"] == "fail" and failed(scenario) == {"values"}, scenario
    assert [c["ok"] for c in checks(scenario, "assert_eq")] == [True]


def test_an_asserter_that_raises_anything_but_assertion_error_fails_loud(runs, tmp_path):
    test = f"{MARKS}::test_broken_asserter"
    _, scenarios = compared(runs, tmp_path, "fsproxy", "--only", test, check=1)
    scenario = scenarios[test]
    assert scenario["status"] == "fail" and failed(scenario) == {"assert_eq"}, scenario
    [check] = checks(scenario, "assert_eq")
    assert check["details"]["type"] == "AttributeError" and "no_such_attribute" in check["details"]["message"]
    assert "raised AttributeError" in check["message"] and "bug" in check["message"], check


def test_an_untrusted_suite_fails_assert_eq_saying_how_to_trust_it(runs, tmp_path):
    log = tmp_path / "imports.log"
    _, scenarios = compared(runs, tmp_path, "fsproxy", "--only", MODULE_IDS[0], "--only", f"{MARKS}::test_no_asserter",
                            check=1, trusted=False, env={"ASSERTEQ_IMPORT_LOG": str(log)})
    scenario = scenarios[MODULE_IDS[0]]
    assert scenario["status"] == "fail" and failed(scenario) == {"assert_eq"}, scenario
    message = checks(scenario, "assert_eq")[0]["message"]
    assert "was not run" in message and "--scenarios" in message and "PARITY_TRUST_SCENARIOS" in message, message
    assert str(runs / "suites") in message, message
    assert scenarios[f"{MARKS}::test_no_asserter"]["status"] == "pass"
    assert not log.exists()  # compare imported nothing from the untrusted suite
    # Trusted through the environment instead of the flag, the asserter runs.
    _, scenarios = compared(runs, tmp_path, "fsproxy", "--only", MODULE_IDS[0], check=0, trusted=False,
                            env={"PARITY_TRUST_SCENARIOS": str(runs / "suites")})
    assert [c["ok"] for c in checks(scenarios[MODULE_IDS[0]], "assert_eq")] == [True]


def test_compare_collects_each_test_file_once_and_writes_nothing_into_the_suite(runs, tmp_path):
    suites = runs / "suites"
    for junk in [*suites.rglob("__pycache__"), *suites.rglob(".pytest_cache")]:
        shutil.rmtree(junk)
    before = sorted(p.relative_to(suites) for p in suites.rglob("*"))
    log = tmp_path / "imports.log"
    _, scenarios = compared(runs, tmp_path, "fsproxy", *(w for i in MODULE_IDS for w in ("--only", i)), check=0,
                            env={"ASSERTEQ_IMPORT_LOG": str(log)})
    assert all(len(checks(scenarios[i], "assert_eq")) == 1 for i in MODULE_IDS)
    assert len(log.read_text().splitlines()) == 1, log.read_text()  # three scenarios, one collection
    assert sorted(p.relative_to(suites) for p in suites.rglob("*")) == before


def test_compare_leaves_no_pytest_session_and_no_suite_module_behind(runs):
    """In one process, as compare calls it: after the asserter is found the interpreter is as before (import
    hooks, sys.path, modules of the suite), and a second file collects afresh; after a trusted suite is imported for
    its reducers, no pytest import hook is left either."""
    program = f"""
import sys
sys.path.insert(0, {str(REPO / 'python')!r})
from parity import asserters
import pytest  # as compare's process has it: only pytest's import, no session
hooks, path = list(sys.meta_path), list(sys.path)
for test in ("test_cumsum", "test_power[1]"):
    meta = {{"kind": "pytest", "module": {MODULE!r}, "source": {str(runs / 'suites' / MODULE)!r},
            "assert_eq": "numpy.testing.assert_allclose"}}
    fn, name, failure = asserters.find(meta, {MODULE!r} + "::" + test, [{str(runs / 'suites')!r}], "")
    assert failure is None and name.endswith("assert_allclose"), (name, failure)
meta = {{"kind": "pytest", "module": {MARKS!r}, "source": {str(runs / 'suites' / MARKS)!r}, "assert_eq": "x"}}
assert asserters.find(meta, {MARKS!r} + "::test_blind_asserter", [{str(runs / 'suites')!r}], "")[2] is None
assert sys.meta_path == hooks, sys.meta_path
assert sys.path == path
assert not [m for m in sys.modules if m.startswith(("test_module_mark", "test_marks", "conftest"))]
# Importing a trusted suite for the reducers its modules register ends its pytest sessions too.
from parity import trust
assert trust.load_scenario_reducers(meta, [{str(runs / 'suites')!r}], "") is None
assert sys.meta_path == hooks, sys.meta_path
print("clean")
"""
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "clean" in proc.stdout, proc.stdout + proc.stderr


def test_a_compare_xfail_is_strict_as_the_suite_says(runs, tmp_path):
    strict, lenient, by_ini = (f"{MARKS}::test_strict_xfail", f"{MARKS}::test_lenient_xfail",
                               "lenient/test_lenient.py::test_lenient_by_ini")
    only = [w for i in (strict, lenient, by_ini) for w in ("--only", i)]
    _, passed = compared(runs, tmp_path, "fsproxy", *only, check=1)  # the strict one's xpass fails the run
    assert passed[strict]["status"] == "xpass", passed[strict]
    for scenario_id in (lenient, by_ini):
        scenario = passed[scenario_id]
        assert scenario["status"] == "pass", scenario
        assert "XPASS" in scenario["message"] and "expected to fail (the candidate may drift)" in scenario["message"]
    _, drifted = compared(runs, tmp_path, "broken.perturb", *only, check=0)
    assert {i: s["status"] for i, s in drifted.items()} == {strict: "xfail", lenient: "xfail", by_ini: "xfail"}
    _, alone = compared(runs, tmp_path, "fsproxy", "--only", lenient, "--only", by_ini, check=0)
    assert {s["status"] for s in alone.values()} == {"pass"}


def test_a_mistyped_xfail_strict_is_an_error_naming_it(runs, tmp_path):
    candidate = tmp_path / "candidate"
    shutil.copytree(runs / "fsproxy", candidate)
    manifest = json.loads((candidate / "manifest.json").read_text())
    test = f"{MARKS}::test_lenient_xfail"
    next(s for s in manifest["scenarios"] if s["id"] == test)["meta"]["xfail_strict"] = "no"
    (candidate / "manifest.json").write_text(json.dumps(manifest))
    json_file = tmp_path / "report.json"
    parity("compare", runs / "gold", candidate, "--only", test, "--json", json_file, check=1)
    [scenario] = json.loads(json_file.read_text())["scenarios"]
    assert scenario["status"] == "error" and "meta.xfail_strict is a string, not true or false" in scenario["message"]


def test_a_backend_may_declare_an_assert_eq_difference(runs, tmp_path):
    backend = tmp_path / "declared_drift.py"
    backend.write_text('"""broken.perturb\'s drift, declared for values and for the suite\'s own asserter."""\n'
                       "from parity_fixtures.broken.perturb import materialize  # noqa: F401\n\n"
                       '__version__ = "1.0"\nDIFFERENCES = [\n'
                       '    {"id": "drift", "check": "values", "reason": "drifts on purpose"},\n'
                       '    {"id": "asserted-drift", "check": "assert_eq", "reason": "drifts on purpose",\n'
                       '     "match": {"details.criterion": "*assert_allclose"}},\n]\n')
    run(str(backend), runs / "declared", "--scenarios", runs / "suites", "--only", MODULE_IDS[0])
    _, scenarios = compared(runs, tmp_path, "declared", "--only", MODULE_IDS[0], "--trust-backend", backend, check=0)
    scenario = scenarios[MODULE_IDS[0]]
    assert scenario["status"] == "xfail" and "asserted-drift (assert_eq)" in scenario["message"], scenario


def test_outputs_compare_cannot_rebuild_fail_assert_eq_saying_which_backend_to_trust(runs, tmp_path):
    backend = str(REPO / "tests" / "objects" / "backends" / "wrapper_faithful.py")  # a TYPE_MAP wrapper of its own
    run(backend, runs / "wrapped", "--scenarios", runs / "suites", "--only", MODULE_IDS[0])
    _, scenarios = compared(runs, tmp_path, "wrapped", "--only", MODULE_IDS[0], check=1)
    [check] = checks(scenarios[MODULE_IDS[0]], "assert_eq")
    assert not check["ok"] and "was not run: the outputs cannot be rebuilt" in check["message"], check
    assert "--trust-backend" in check["message"], check
    _, scenarios = compared(runs, tmp_path, "wrapped", "--only", MODULE_IDS[0], "--trust-backend", backend, check=0)
    assert [c["ok"] for c in checks(scenarios[MODULE_IDS[0]], "assert_eq")] == [True]


def test_a_suite_found_by_id_under_a_trusted_directory_elsewhere_is_read_as_it_is_now(runs, tmp_path):
    """A CI artifact's recorded source lies on another machine: the test file is found by its id under the trusted
    directory, and its asserter read from it as it is now; a test renamed since the run fails assert_eq saying so."""
    moved = tmp_path / "checkout"
    shutil.copytree(SUITES, moved, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    marks = moved / MARKS
    marks.write_text(marks.read_text().replace("def test_scaled(", "def test_scaled_renamed("))
    tests = (f"{MARKS}::TestScaled::test_scaled", f"{MARKS}::test_blind_asserter")
    proc = parity("compare", runs / "gold", runs / "broken.perturb", "--scenarios", moved, "--json",
                  tmp_path / "report.json", *(w for t in tests for w in ("--only", t)), check=1)
    scenarios = {s["id"]: s for s in json.loads((tmp_path / "report.json").read_text())["scenarios"]}
    [gone] = checks(scenarios[tests[0]], "assert_eq")
    assert not gone["ok"] and f"{marks} holds no test 'TestScaled::test_scaled' now" in gone["message"], proc.stdout
    assert [c["ok"] for c in checks(scenarios[tests[1]], "assert_eq")] == [True]


HANGING_SUITE = '''import time
import numpy as np
import pytest


def hang(gold, candidate):
    try:
        time.sleep(1000)
    except BaseException:  # swallows the first interruption, as a careless asserter might, and hangs again
        pass
    time.sleep(1000)


@pytest.mark.assert_eq(fn=hang)
def test_hang():
    return np.arange(3)


@pytest.mark.assert_eq(fn=np.testing.assert_array_equal)
def test_after():
    return np.arange(3)
'''


def run_one_file_suite(tmp_path, name, text, candidate):
    """A suite of the one test file `name` holding `text`, run under gold and `candidate` into tmp_path/<backend>."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / name).write_text(text)
    for backend in ("gold", candidate):
        run(backend, tmp_path / backend, "--scenarios", suite)
    return suite


def test_an_asserter_that_hangs_is_stopped_at_the_compare_time_limit(tmp_path):
    """The asserter gets what is left of the scenario's --timeout: a hang is that scenario's timeout (its assert_eq
    check saying the asserter did not return), and the next scenario is compared."""
    suite = run_one_file_suite(tmp_path, "test_hang.py", HANGING_SUITE, "fsproxy")
    report = tmp_path / "report.json"
    command = [BIN, "compare", tmp_path / "gold", tmp_path / "fsproxy", "--scenarios", suite, "--timeout", "2",
               "--json", report]
    proc = subprocess.run(list(map(str, command)), capture_output=True, text=True, timeout=120)  # a hang fails
    assert proc.returncode == 1, proc.stdout + proc.stderr
    scenarios = {s["id"]: s for s in json.loads(report.read_text())["scenarios"]}
    hung = scenarios["test_hang.py::test_hang"]
    assert hung["status"] == "timeout", hung
    [check] = checks(hung, "assert_eq")
    assert "the asserter test_hang.hang did not return within" in check["message"], check
    assert "took longer than --timeout 2 s" in check["message"], check
    assert scenarios["test_hang.py::test_after"]["status"] == "pass", scenarios


EXITING_SUITE = '''import os
import numpy as np
import pytest


def leave(gold, candidate):
    os._exit(0)


@pytest.mark.assert_eq(fn=leave)
def test_exit():
    return np.linspace(0, 1, 5)


def test_after():
    return np.linspace(1, 2, 5)
'''


def test_an_asserter_that_calls_os_exit_fails_its_check_and_compare_goes_on(tmp_path):
    """os._exit(0) in an asserter used to end compare at once with exit 0 and no report: a red run turned green."""
    suite = run_one_file_suite(tmp_path, "test_exit.py", EXITING_SUITE, "broken.perturb")
    report = tmp_path / "report.json"
    proc = parity("compare", tmp_path / "gold", tmp_path / "broken.perturb", "--scenarios", suite, "--json", report,
                  check=1)
    scenarios = {s["id"]: s for s in json.loads(report.read_text())["scenarios"]}
    [check] = checks(scenarios["test_exit.py::test_exit"], "assert_eq")
    assert not check["ok"] and "os._exit(0)" in check["message"], (check, proc.stdout)
    assert scenarios["test_exit.py::test_after"]["status"] == "fail"  # the drift, compared after it
