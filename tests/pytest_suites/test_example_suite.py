"""Issue #18 end to end: a cuDF-style pytest directory under gold, fsproxy and a drifting candidate; the bundled
example suite (scenarios/pytest_style) in the default corpus and under plain pytest."""
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

# The e2e helpers (tests/conftest.py), shared rather than copied.
from e2e_test import REPO, compare, failing, parity, passes_but_corpus_xfails, run

HERE = Path(__file__).resolve().parent
SUITE = HERE / "suites" / "cudf_style"
DRIFT = HERE / "backends" / "drift.py"
EXAMPLE = REPO / "scenarios" / "pytest_style"
LOG_VARIABLE = "PARITY_SUITE_FIXTURE_LOG"

A, F = "test_arrays.py::", "test_frames.py::"
ARRAY_TESTS = [A + "test_matmul", *(f"{A}test_percentile[{q}]" for q in (10, 50, 90)), A + "test_session_values",
               A + "test_dict_of_results"]
FRAME_TESTS = [F + "test_groupby_sum", F + "test_cumulative[cumsum]", F + "test_cumulative[cummin]",
               F + "test_column_mean", F + "test_dict_of_frames"]
# What pytest's semantics give each test of the suite, per pass (README, "Running an existing pytest suite").
MARKED = {
    "gold": {A + "test_array_types": "ok", A + "test_proxy_wrapped_array": "xfail", A + "test_exact_type": "ok",
             A + "test_needs_a_missing_library": "skip", A + "test_unwritable_result": "error"},
    "fsproxy": {A + "test_array_types": "ok", A + "test_proxy_wrapped_array": "ok", A + "test_exact_type": "xfail",
                A + "test_needs_a_missing_library": "skip", A + "test_unwritable_result": "error"},
    "compare": {A + "test_array_types": "xfail", A + "test_proxy_wrapped_array": "xfail",
                A + "test_exact_type": "xfail", A + "test_needs_a_missing_library": "skip",
                A + "test_unwritable_result": "error"},
}


def statuses(results):
    """{id: status} of a run's manifest."""
    return {s["id"]: s["status"] for s in json.loads((results / "manifest.json").read_text())["scenarios"]}


def run_suite(backend, out, log, *extra):
    """Runs the suite under `backend` with its fixtures logging to `log`; a run with an error exits 1."""
    return parity("run", "--backend", backend, "--out", out, "-q", "--scenarios", SUITE, *extra,
                  env={LOG_VARIABLE: str(log)}, check=1)


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory):
    """The suite under gold (one worker, then two), fsproxy and the drifting candidate."""
    tmp = tmp_path_factory.mktemp("suite")
    for name, backend, jobs in (("gold", "gold", 1), ("gold-2", "gold", 2), ("fsproxy", "fsproxy", 1),
                                ("drift", str(DRIFT), 1)):
        run_suite(backend, tmp / name, tmp / f"{name}.log", "--jobs", jobs)
    return tmp


@pytest.fixture(scope="module")
def fsproxy_report(suite_runs, tmp_path_factory):
    """The compare of the suite's gold and fsproxy runs, made once for the two tests that read its report (a compare
    imports the suite's conftests and pandas)."""
    return compare(suite_runs / "gold", suite_runs / "fsproxy", tmp_path_factory.mktemp("fsproxy-compare"),
                   "--scenarios", SUITE, check=1)[1]


def test_each_pass_gives_the_statuses_pytest_semantics_give(suite_runs, fsproxy_report):
    ok = dict.fromkeys(ARRAY_TESTS + FRAME_TESTS, "ok")
    assert statuses(suite_runs / "gold") == {**ok, **MARKED["gold"]}
    assert statuses(suite_runs / "fsproxy") == {**ok, **MARKED["fsproxy"]}
    report = fsproxy_report
    passed = dict.fromkeys(ARRAY_TESTS + FRAME_TESTS, "pass")
    assert {s["id"]: s["status"] for s in report["scenarios"]} == {**passed, **MARKED["compare"]}
    meta = {s["id"]: s["meta"] for s in json.loads((suite_runs / "fsproxy" / "manifest.json").read_text())["scenarios"]}
    # The module-wide asserter, and a test's own mark over it (named where the function is defined).
    assert meta[A + "test_matmul"]["assert_eq"].endswith(".assert_allclose")
    assert meta[F + "test_column_mean"]["assert_eq"].endswith(".assert_series_equal")
    assert meta[A + "test_array_types"]["xfail"] == {"compare": "the proxy's arrays are a class of their own"}


def test_fsproxy_reaches_test_modules_their_helpers_and_conftests(fsproxy_report):
    """Item 3: fsproxy's import hook proxies `import numpy` in the test module, a helper module of the suite and its
    conftest (whose session fixture made the array), so each names its arrays' class ProxyNDArray, gold ndarray."""
    report = fsproxy_report
    scenario = next(s for s in report["scenarios"] if s["id"] == A + "test_array_types")
    failed = {c["path"]: c["message"] for c in scenario["checks"] if not c["ok"] and c["check"] != "assert_eq"}
    assert set(failed) == {"outputs['test_module']", "outputs['helper']", "outputs['conftest']"}, failed
    for message in failed.values():
        assert "'ndarray'" in message and "'ProxyNDArray'" in message, message


def test_a_drifting_candidate_fails_array_and_frame_tests(suite_runs, tmp_path):
    _, report, _ = compare(suite_runs / "gold", suite_runs / "drift", tmp_path, "--scenarios", SUITE, check=1)
    failed_values = {(i, p) for i, check, p in failing(report) if check == "values"}
    by_id = {s["id"]: s for s in report["scenarios"]}
    for test in ARRAY_TESTS + FRAME_TESTS:
        assert by_id[test]["status"] == "fail" and {c["check"] for c in by_id[test]["checks"] if not c["ok"]} == {
            "values", "assert_eq"}, by_id[test]  # parity's check and the suite's own asserter both see the drift
    assert (A + "test_matmul", "outputs") in failed_values
    assert (F + "test_groupby_sum", "outputs['x']") in failed_values, failed_values
    assert (F + "test_dict_of_frames", "outputs['sorted']['x']") in failed_values, failed_values
    # A candidate that hands the test plain arrays meets the candidate pass's xfail: strict, so an xpass.
    assert by_id[A + "test_exact_type"]["status"] == "xpass"


def test_an_unwritable_result_is_an_error_naming_the_object_and_its_path(suite_runs):
    for side in ("gold", "fsproxy"):
        record = next(s for s in json.loads((suite_runs / side / "manifest.json").read_text())["scenarios"]
                      if s["id"] == A + "test_unwritable_result")
        assert record["status"] == "error", record
        message = record["error"]["message"]
        assert "outputs['callback']" in message and "function" in message, message


def fixture_events(log):
    """Counter of (event, fixture, pid) lines a run's fixtures logged."""
    return Counter(tuple(line.split()) for line in log.read_text().splitlines())


@pytest.mark.parametrize("name, jobs", [("gold", 1), ("gold-2", 2)])
def test_fixtures_are_set_up_once_per_scope_per_worker_and_torn_down(suite_runs, name, jobs):
    events = fixture_events(suite_runs / f"{name}.log")
    pids = {pid for _, _, pid in events}
    assert 1 <= len(pids) <= jobs, events
    for fixture in ("session", "module-arrays", "module-frames"):
        setups = {pid for (event, f, pid), n in events.items() if event == "setup" and f == fixture}
        assert setups, (fixture, events)
        for pid in setups:
            assert events[("setup", fixture, pid)] == events[("teardown", fixture, pid)] == 1, (fixture, events)
    if jobs == 1:
        assert sum(events.values()) == 6, events


def test_a_backend_that_skips_what_it_cannot_run_skips_pytest_tests_too(tmp_path):
    """masked runs only scenarios that take an `xp` (parity.skip from its execute); a pytest test takes none."""
    parity("run", "--backend", "masked", "--out", tmp_path / "masked", "-q", "--scenarios", EXAMPLE, check=0)
    records = json.loads((tmp_path / "masked" / "manifest.json").read_text())["scenarios"]
    assert len(records) >= 15
    for record in records:
        assert record["status"] == "skip" and "masked runs scenarios through their `xp`" in record["error"][
            "message"], record


def plain_pytest(path, *options):
    """Runs plain pytest with parity's plugin over `path`; the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"),
                                                        os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "parity.pytest_plugin", "-p", "no:cacheprovider",
                           "-q", "-rxX", *options, str(path)], capture_output=True, text=True, env=env, timeout=300)


def test_the_bundled_example_runs_under_plain_pytest():
    proc = plain_pytest(EXAMPLE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.strip().splitlines()[-1]
    assert "1 xfailed" in summary and "failed" not in summary.replace("xfailed", "") and "warning" not in summary, \
        proc.stdout
    xfailed = r"^XFAIL \S*test_numpy.py::test_percentile_above_100 - NumPy refuses"
    assert re.search(xfailed, proc.stdout, re.M), proc.stdout


def test_the_plugin_swaps_the_candidate_pass_markers_on_request():
    """Without a candidate installed the exact-type test passes: its xfail is not strict, so an xpass."""
    proc = plain_pytest(EXAMPLE, "--parity-pass", "candidate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("25 passed, 1 xfailed, 1 xpassed"), proc.stdout
    assert re.search(r"^XPASS \S*test_numpy.py::test_concatenate_is_exact_ndarray", proc.stdout, re.M), proc.stdout


def test_the_plugin_fails_a_test_that_returns_none(tmp_path):
    (tmp_path / "test_none.py").write_text("def test_nothing():\n    pass\n")
    proc = plain_pytest(tmp_path)
    assert proc.returncode == 1 and "test_none.py::test_nothing returned None" in proc.stdout, proc.stdout


def test_the_bundled_example_is_part_of_the_default_corpus(tmp_path):
    listed = parity("list", check=0).stdout.split()
    example = [i for i in listed if i.startswith("pytest_style/")]
    assert "pytest_style/test_numpy.py::test_dot" in example and "pytest_style/test_pandas.py::test_describe" \
        in example, example
    assert 15 <= len(example) <= 30
    assert any("." in i and "::" not in i for i in listed), "the native corpus is listed beside it"
    for name, backend in (("gold", "gold"), ("gold2", "gold"), ("fsproxy", "fsproxy")):
        run(backend, tmp_path / name, "-k", "pytest_style")
    assert sorted(statuses(tmp_path / "gold")) == sorted(example)
    first, second = (sorted((tmp_path / name / "results").iterdir()) for name in ("gold", "gold2"))
    assert [f.name for f in first] == [f.name for f in second]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name
    # As scripts/main.sh compares them.
    _, report, _ = compare(tmp_path / "gold", tmp_path / "fsproxy", tmp_path, "--strict-differences",
                           "--trust-backend", "fsproxy", check=0)
    assert sorted(s["id"] for s in report["scenarios"]) == sorted(example)
    assert passes_but_corpus_xfails(report, "fsproxy"), report["summary"]
