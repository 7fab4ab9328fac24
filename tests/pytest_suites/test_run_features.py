"""Everything native scenarios have, for pytest-style suites (issue #18, items 1, 2 and 5): list, --only, shards,
--jobs, --resume, crash and timeout isolation, repro commands, reports, trends, CTest registration, and a run that
goes on around suites, conftests, fixtures and results that break.

The suites are under suites/runfeat/ (data: conftest.py keeps this suite from collecting them); each test runs a
copy in its own tmp_path, so that what pytest might write lands there and is checked.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_test import BIN, REPO, compare, manifest_entries, parity, run  # the shared e2e helpers

SUITES = Path(__file__).resolve().parent / "suites" / "runfeat"
PYTHON = sys.executable
# What pytest may leave in a suite it imported: Python's bytecode caches, nothing else.
BYTECODE = "__pycache__"

PLAIN_IDS = [
    "sub/test_nested.py::test_nested_sum",
    "test_values.py::test_dot",
    "test_values.py::test_percentile[25]",
    "test_values.py::test_percentile[50]",
    "test_values.py::test_percentile[75]",
    "test_values.py::test_counts",
    "test_values.py::TestGrouped::test_cumsum",
]
# The plain suite's tests whose outputs are floats: broken.perturb drifts exactly these.
PLAIN_FLOATS = {"sub/test_nested.py::test_nested_sum", "test_values.py::test_dot", "test_values.py::test_percentile[25]",
                "test_values.py::test_percentile[50]", "test_values.py::test_percentile[75]"}


def suite(tmp_path, name, where="suite"):
    """A copy of suites/runfeat/`name` at tmp_path/`where`/`name`."""
    target = tmp_path / where / name
    shutil.copytree(SUITES / name, target)
    return target


def files_of(directory):
    """Every file under `directory` but Python's bytecode caches, relative to it."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*")
                  if p.is_file() and BYTECODE not in p.parts)


def listed(*args, cwd=None):
    """The ids `parity list --json` gives, and its process."""
    proc = subprocess.run([BIN, "list", "--json", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=300)
    return [entry["id"] for entry in json.loads(proc.stdout)], proc


def pytest_collected(directory):
    """What `pytest --collect-only -q` run in `directory` lists: its node ids."""
    proc = subprocess.run([PYTHON, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=directory,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


def statuses(out):
    return {i: e["status"] for i, e in manifest_entries(out).items()}


# --- list ------------------------------------------------------------------------------------------------------


def test_list_gives_what_pytest_collects_whatever_the_checkout_path_and_working_directory(tmp_path):
    first, second = suite(tmp_path, "plain", "a"), suite(tmp_path, "plain", "b/deeper/checkout")
    # A conftest between the working directory and the suite that pytest, run in the suite, never loads.
    (tmp_path / "b" / "conftest.py").write_text("def pytest_collection_modifyitems(items):\n    del items[1:]\n")
    expected = pytest_collected(first)
    assert sorted(expected) == sorted(PLAIN_IDS)
    for path, cwd in ((first, tmp_path), (second, tmp_path / "b"), (second, "/")):
        ids, proc = listed("--scenarios", path, cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        assert ids == expected, (path, cwd)
        assert "Warning" not in proc.stderr, proc.stderr  # pytest's own deprecation warnings included
        plain = parity("list", "--scenarios", path, check=0)
        assert plain.stdout.split() == expected
    # The CMake function's listing (python -m parity list) gives the same ids.
    proc = subprocess.run([PYTHON, "-m", "parity", "list", str(second)], capture_output=True, text=True, cwd="/",
                          env={**os.environ, "PYTHONPATH": str(REPO / "python")}, timeout=300)
    assert proc.returncode == 0 and proc.stdout.split() == expected, proc.stderr


def test_list_json_carries_the_node_id_and_the_path_it_is_relative_to(tmp_path):
    plain = suite(tmp_path, "plain")
    proc = parity("list", "--json", "--scenarios", plain, check=0)
    entries = {e["id"]: e["meta"] for e in json.loads(proc.stdout)}
    assert list(entries) == pytest_collected(plain)
    meta = entries["test_values.py::test_percentile[50]"]
    assert meta["kind"] == "pytest" and meta["nodeid"] == "test_values.py::test_percentile[50]"
    assert meta["root"] == str(plain) and meta["source"] == str(plain / "test_values.py")
    assert meta["params"] == {"q": "50"}


def test_errors_of_collection_have_ids_relative_to_the_path_given_from_any_working_directory(tmp_path):
    robust = suite(tmp_path, "robust")
    seen = [listed("--scenarios", robust, cwd=cwd)[0] for cwd in (tmp_path, robust / "fixtures", "/")]
    assert seen[0] == seen[1] == seen[2]
    assert {"badini", "badconftest", "fixtures/test_generator.py"} <= set(seen[0])


# --- selection, shards, jobs, resume ------------------------------------------------------------------------------


def test_only_runs_exactly_the_node_id_given(tmp_path):
    plain = suite(tmp_path, "plain")
    run("gold", tmp_path / "one", "--scenarios", plain, "--only", "test_values.py::test_percentile[50]")
    assert statuses(tmp_path / "one") == {"test_values.py::test_percentile[50]": "ok"}
    proc = run("gold", tmp_path / "none", "--scenarios", plain, "--only", "test_values.py::test_percentile[51]",
               check=2)
    assert "test_values.py::test_percentile[51]" in proc.stderr


def test_shards_split_pytest_scenarios_by_flag_by_gtest_variables_and_by_times(tmp_path):
    plain = suite(tmp_path, "plain")
    run("gold", tmp_path / "all", "--scenarios", plain)
    by_count = None
    for times in ((), ("--shard-times", tmp_path / "all")):
        shards = []
        for i in (1, 2, 3):
            out = tmp_path / f"shard{i}{len(times)}"
            run("gold", out, "--scenarios", plain, "--shard", f"{i}/3", *times)
            shards.append(set(statuses(out)))
            assert set(statuses(out).values()) == {"ok"}
        assert set.union(*shards) == set(PLAIN_IDS) and sum(map(len, shards)) == len(PLAIN_IDS)
        by_count = by_count or shards
    gtest = tmp_path / "gtest"
    parity("run", "--backend", "gold", "--out", gtest, "-q", "--scenarios", plain,
           env={"GTEST_TOTAL_SHARDS": "3", "GTEST_SHARD_INDEX": "1"}, check=0)
    assert set(statuses(gtest)) == by_count[1]  # index 1 of 3 is --shard 2/3


def test_two_jobs_write_the_result_files_one_job_writes(tmp_path):
    plain = suite(tmp_path, "plain")
    run("gold", tmp_path / "j1", "--scenarios", plain)
    run("gold", tmp_path / "j2", "--scenarios", plain, "--jobs", "2")
    assert statuses(tmp_path / "j1") == statuses(tmp_path / "j2") == dict.fromkeys(PLAIN_IDS, "ok")
    one, two = tmp_path / "j1" / "results", tmp_path / "j2" / "results"
    assert sorted(p.name for p in one.iterdir()) == sorted(p.name for p in two.iterdir())
    for file in one.iterdir():
        assert file.read_bytes() == (two / file.name).read_bytes(), file.name


def test_resume_runs_only_the_pytest_scenarios_an_interrupted_run_did_not_finish(tmp_path):
    plain = suite(tmp_path, "plain")
    out = tmp_path / "out"
    run("gold", out, "--scenarios", plain)
    whole = {p.name: p.read_bytes() for p in (out / "results").iterdir()}
    manifest = json.loads((out / "manifest.json").read_text())
    dropped = {"test_values.py::test_dot": "never written", "sub/test_nested.py::test_nested_sum": "half written",
               "test_values.py::test_counts": "a link"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not parity's")
    for entry in manifest["scenarios"]:
        file = out / entry.get("file", "")
        if dropped.get(entry["id"]) == "never written":
            file.unlink()  # as a run killed before writing it leaves it
        elif dropped.get(entry["id"]) == "half written":  # as a worker killed writing it leaves it: in place, no record
            file.write_bytes(file.read_bytes()[:40])
        elif dropped.get(entry["id"]) == "a link":  # replaced by the next run's file, never written through
            file.unlink()
            file.symlink_to(elsewhere)
    manifest["scenarios"] = [e for e in manifest["scenarios"] if e["id"] not in dropped]
    manifest["complete"] = False
    (out / "manifest.json").write_text(json.dumps(manifest))
    proc = run("gold", out, "--scenarios", plain, "--resume")
    assert f"{len(PLAIN_IDS) - 3} of {len(PLAIN_IDS)} scenarios already finished" in proc.stderr, proc.stderr
    assert statuses(out) == dict.fromkeys(PLAIN_IDS, "ok")
    assert {p.name: p.read_bytes() for p in (out / "results").iterdir()} == whole
    assert not [p for p in (out / "results").iterdir() if p.is_symlink()]
    assert elsewhere.read_bytes() == b"not parity's"


# --- crash and timeout isolation ------------------------------------------------------------------------------------

CRASHY = {
    "test_c_import_crash.py": ("error", "Crash", "importing it killed the worker process (signal 6 (SIGABRT))"),
    "zz_crashing_conftest/conftest.py": ("error", "Crash", "importing it killed the worker process (signal 6"),
    "test_a_before.py::test_first": ("ok", None, None),
    "test_b_crashes.py::test_before_the_crashes": ("ok", None, None),
    "test_b_crashes.py::test_segfaults": ("crash", "Crash", "signal 11 (SIGSEGV)"),
    "test_b_crashes.py::test_aborts": ("crash", "Crash", "signal 6 (SIGABRT)"),
    "test_b_crashes.py::test_after_the_crashes": ("ok", None, None),
    "test_d_after.py::test_last": ("ok", None, None),
    "test_e_timeouts.py::test_sleeps_past_the_run_timeout": ("timeout", "Timeout", "timeout of 4 s (set by --timeout)"),
    "test_e_timeouts.py::test_sleeps_past_its_own_timeout": ("timeout", "Timeout", "timeout of 1 s (set by the scenario's timeout= argument)"),
    "test_e_timeouts.py::test_after_the_timeouts": ("ok", None, None),
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_crashes_import_crashes_and_timeouts_are_their_tests_own_and_the_rest_runs(tmp_path, jobs):
    crashy = suite(tmp_path, "crashy")
    run("gold", tmp_path / "out", "--scenarios", crashy, "--timeout", "4", "--jobs", jobs, check=1)
    entries = manifest_entries(tmp_path / "out")
    assert set(entries) == set(CRASHY)
    for id_, (status, kind, phrase) in CRASHY.items():
        entry = entries[id_]
        assert entry["status"] == status, (id_, entry)
        if kind is not None:
            assert entry["error"]["type"] == kind and phrase in entry["error"]["message"], (id_, entry["error"])
    # What a test printed (pytest runs it with -s) is in its crash report: its last words.
    for id_, words in (("test_b_crashes.py::test_segfaults", "last words before the segfault"),
                       ("test_b_crashes.py::test_aborts", "last words before the abort")):
        assert words in entries[id_]["error"]["traceback"], entries[id_]["error"]["traceback"]
    assert entries["test_e_timeouts.py::test_sleeps_past_its_own_timeout"]["meta"]["timeout"] == 1


def test_a_conftest_that_kills_the_worker_while_pytest_starts_is_its_error_and_the_rest_runs(tmp_path):
    crashing = suite(tmp_path, "crashy") / "zz_crashing_conftest"
    run("gold", tmp_path / "out", "--scenarios", crashing, "--scenarios", suite(tmp_path, "mixed"), check=1)
    entries = manifest_entries(tmp_path / "out")
    assert entries["conftest.py"]["status"] == "error" and entries["conftest.py"]["error"]["type"] == "Crash"
    assert entries["conftest.py"]["meta"]["source"] == str(crashing / "conftest.py")
    assert {i: e["status"] for i, e in entries.items() if i != "conftest.py"} == {
        "natives.doubled": "ok", "test_mixed.py::test_tripled": "ok"}


# --- repro commands, reports, trends ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def drifted(tmp_path_factory):
    """The plain suite under gold and broken.perturb, compared with every report; (suite, tmp, report JSON). Made once
    for the module: its tests read the runs and reports and write only beside them (repro/, first/)."""
    tmp_path = tmp_path_factory.mktemp("drifted")
    plain = suite(tmp_path, "plain")
    run("gold", tmp_path / "gold", "--scenarios", plain)
    run("broken.perturb", tmp_path / "perturb", "--scenarios", plain)
    proc, report, _ = compare(tmp_path / "gold", tmp_path / "perturb", tmp_path, "--html", tmp_path / "report.html",
                              "--trust-backend", "broken.perturb", check=1)
    return plain, tmp_path, report


def test_a_failing_pytest_scenarios_repro_names_its_node_id_and_reruns_exactly_it(drifted):
    plain, tmp, report = drifted
    nested = next(s for s in report["scenarios"] if s["id"] == "sub/test_nested.py::test_nested_sum")
    repro = nested["repro"]
    assert "--only sub/test_nested.py::test_nested_sum" in repro and f"--scenarios {plain} " in repro, repro
    proc = subprocess.run(repro.replace("/tmp/parity-repro", str(tmp / "repro")), shell=True, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the drift is found again
    for side in ("gold", "candidate"):
        assert statuses(tmp / "repro" / side) == {"sub/test_nested.py::test_nested_sum": "ok"}
    assert "sub/test_nested.py::test_nested_sum" in proc.stdout + proc.stderr


def test_json_junit_and_html_reports_carry_the_node_ids(drifted):
    _, tmp, report = drifted
    failed = {s["id"] for s in report["scenarios"] if s["status"] == "fail"}
    assert failed == PLAIN_FLOATS
    assert {s["id"] for s in report["scenarios"]} == set(PLAIN_IDS)
    junit = (tmp / "perturb.xml").read_text()
    html = (tmp / "report.html").read_text()
    for id_ in PLAIN_IDS:
        assert re.search(rf'name="[^"]*{re.escape(id_)}"', junit), id_
        assert id_ in html, id_


def test_trends_follow_pytest_scenarios_by_node_id(drifted):
    _, tmp, _ = drifted
    # The drifted compare again, against the first one as its baseline: by node id, its failures are still failing.
    (tmp / "first").mkdir()
    _, later, _ = compare(tmp / "gold", tmp / "perturb", tmp / "first", "--baseline", tmp / "perturb.json",
                          "--trust-backend", "broken.perturb", check=1)
    marks = {s["id"]: s.get("trend", {}).get("mark") for s in later["scenarios"]}
    assert {i for i, m in marks.items() if m == "still-failing"} == PLAIN_FLOATS, marks
    assert later["trend_summary"]["still_failing"] == len(PLAIN_FLOATS)


# --- CTest registration ---------------------------------------------------------------------------------------------


# A user's own suite with an asserter: its compare under CTest runs it (the directory registered is trusted).
USER_ASSERTED = ("import numpy as np, pytest\n"
                 "pytestmark = pytest.mark.assert_eq(fn=np.testing.assert_allclose)\n"
                 "def test_asserted():\n"
                 "    return np.arange(3.0)\n")


def test_the_ctest_function_registers_one_test_per_node_id_that_passes_and_fails_as_the_compare_does(tmp_path):
    plain = suite(tmp_path, "plain")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "test_user_asserted.py").write_text(USER_ASSERTED)
    asserted = "test_user_asserted.py::test_asserted"
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.25)
project(uses_parity NONE)
enable_testing()
add_executable(parity IMPORTED)
set_target_properties(parity PROPERTIES IMPORTED_LOCATION "{BIN}")
set(Python_EXECUTABLE "{PYTHON}")
include("{REPO}/cmake/ParityScenarioTests.cmake")
parity_add_scenario_tests(NAME plain DIRECTORY "{plain}" CANDIDATE broken.perturb)
parity_add_scenario_tests(NAME mine DIRECTORY "{mine}" CANDIDATE fsproxy)
""")
    build = tmp_path / "build"
    configure = subprocess.run(["cmake", "-S", project, "-B", build], capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    listing = subprocess.run(["ctest", "--test-dir", build, "-N", "-L", "compare"], capture_output=True, text=True)
    assert sorted(re.findall(r"Test +#\d+: compare\.(\S+)", listing.stdout)) == sorted([*PLAIN_IDS, asserted]), \
        listing.stdout
    proc = subprocess.run(["ctest", "--test-dir", build, "-L", "compare", "-j2"], capture_output=True, text=True,
                          timeout=600)
    failed = set(re.findall(r"\d+ - compare\.(\S+) \(Failed\)", proc.stdout))
    assert proc.returncode != 0 and failed == PLAIN_FLOATS, proc.stdout
    # The user's asserter ran and passed (not failed as untrusted), beside parity's own checks.
    assert re.search(rf"compare\.{re.escape(asserted)} \.+ +Passed", proc.stdout), proc.stdout


# A scenario that raises under every backend: its own gold.<id> and candidate.<id> fail, naming it.
RAISES = ("import numpy as np\n"
          "def test_raises():\n"
          "    raise RuntimeError('raised on purpose')\n"
          "def test_fine():\n"
          "    return np.arange(3)\n")


def test_ctest_scenario_tests_share_one_run_per_side_and_one_compare_and_name_their_scenario(tmp_path):
    """One `parity run` per side and one `parity compare` are fixture setups; each scenario's three tests judge it from
    those results, and running one scenario's test by name pulls in exactly the setups it needs."""
    plain = suite(tmp_path, "plain")
    (plain / "test_raises.py").write_text(RAISES)
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(f"""
cmake_minimum_required(VERSION 3.25)
project(uses_parity NONE)
enable_testing()
add_executable(parity IMPORTED)
set_target_properties(parity PROPERTIES IMPORTED_LOCATION "{BIN}")
set(Python_EXECUTABLE "{PYTHON}")
include("{REPO}/cmake/ParityScenarioTests.cmake")
parity_add_scenario_tests(NAME plain DIRECTORY "{plain}" CANDIDATE broken.perturb)
""")
    build = tmp_path / "build"
    configure = subprocess.run(["cmake", "-S", project, "-B", build], capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    # One scenario's compare test by name: the two runs and the compare run first, nothing else.
    dot = "test_values.py::test_dot"
    proc = subprocess.run(["ctest", "--test-dir", build, "-R", f"^compare\\.{re.escape(dot)}$", "--output-on-failure"],
                          capture_output=True, text=True, timeout=600)
    ran = re.findall(r"Test +#\d+: (\S+) \.", proc.stdout)
    assert sorted(ran) == sorted(["parity-run.plain.gold", "parity-run.plain.candidate", "parity-compare.plain",
                                  f"compare.{dot}"]), proc.stdout
    assert proc.returncode != 0 and re.search(rf"compare {re.escape(dot)}: fail failed checks: values", proc.stdout), \
        proc.stdout
    results = build / "parity-results" / "plain"
    ids = {e["id"] for e in json.loads((results / "gold" / "manifest.json").read_text())["scenarios"]}
    assert ids >= {*PLAIN_IDS, "test_raises.py::test_raises"}, "one gold run over the whole directory"
    # Every scenario's tests: the raising one fails its gold and candidate tests, naming it and its error.
    proc = subprocess.run(["ctest", "--test-dir", build, "-j2", "--output-on-failure"], capture_output=True,
                          text=True, timeout=600)
    failed = set(re.findall(r"\d+ - (\S+) \(Failed\)", proc.stdout))
    raises = "test_raises.py::test_raises"
    assert failed == {f"gold.{raises}", f"candidate.{raises}", f"compare.{raises}",
                      *(f"compare.{i}" for i in PLAIN_FLOATS)}, proc.stdout
    assert f"gold {raises}: error" in proc.stdout and "raised on purpose" in proc.stdout, proc.stdout
    # A run that cannot start (an unknown backend) fails its setup, and no scenario is judged on stale results.
    (project / "CMakeLists.txt").write_text((project / "CMakeLists.txt").read_text().replace(
        "CANDIDATE broken.perturb", "CANDIDATE no_such_backend_for_parity"))
    configure = subprocess.run(["cmake", "-S", project, "-B", build], capture_output=True, text=True, timeout=300)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    proc = subprocess.run(["ctest", "--test-dir", build, "-R", f"^candidate\\.{re.escape(dot)}$"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and re.search(r"parity-run\.plain\.candidate \(Failed\)", proc.stdout), proc.stdout
    assert not (results / "candidate" / "manifest.json").exists(), "the stale candidate run is removed first"


# --- robustness ------------------------------------------------------------------------------------------------------

ROBUST = {
    "badini": ("error", "pytest refused the suite", "unrecognized arguments: --no-such-parity-option"),
    "badconftest": ("error", "CollectError", "No module named 'no_such_module_for_parity'"),
    "fixtures/test_generator.py": ("error", "CollectError", "test_is_a_generator"),
    "badstrict": ("error", "pytest refused the suite", "its ini option xfail_strict: invalid truth value 'maybe'"),
    "good/test_good.py::test_good": ("ok", None, None),
    "skipped": ("skip", "Skipped", "could not import 'no_such_library_for_parity'"),
    "fixtures/test_bad_mark.py::test_bad_mark": ("error", "ValueError", "rtol must be a finite number"),
    "fixtures/test_bad_mark.py::test_beside_the_bad_mark": ("ok", None, None),
    "fixtures/test_fixtures.py::test_setup_raises": ("error", "RuntimeError", "in setup: setup went wrong"),
    "fixtures/test_fixtures.py::test_teardown_raises": ("error", "RuntimeError", "in teardown: teardown went wrong"),
    "fixtures/test_fixtures.py::test_returns_a_lambda": ("error", "SerializeError", "outputs['fn']"),
    "fixtures/test_fixtures.py::test_is_async": ("error", "Failed", "async def functions are not natively supported"),
    "fixtures/test_fixtures.py::test_returns_none": ("error", "ReturnedNone", "returned None"),
    "fixtures/test_fixtures.py::test_ordinary": ("ok", None, None),
}


def test_suites_conftests_fixtures_and_results_that_break_are_errors_naming_them_and_the_rest_runs(tmp_path):
    robust = suite(tmp_path, "robust")
    before = files_of(robust)
    run("gold", tmp_path / "out", "--scenarios", robust, check=1)
    entries = manifest_entries(tmp_path / "out")
    assert set(entries) == set(ROBUST)
    for id_, (status, kind, phrase) in ROBUST.items():
        entry = entries[id_]
        assert entry["status"] == status, (id_, entry)
        if kind is not None:
            text = entry["error"]["type"] + ": " + entry["error"]["message"]
            assert kind in text and phrase in text, (id_, text)
    # The object that cannot be written is named by its type and, a function, by its own name.
    lambda_error = entries["fixtures/test_fixtures.py::test_returns_a_lambda"]["error"]["message"]
    assert "outputs['fn']: cannot write an object of type builtins.function (test_returns_a_lambda.<locals>.<lambda>)" \
        in lambda_error, lambda_error
    assert files_of(robust) == before  # pytest wrote nothing into the suite: no .pytest_cache, no junit, no log


@pytest.mark.parametrize("name", ["badini", "badconftest"])
def test_a_suite_pytest_refuses_given_alone_is_its_error_named_by_the_suite(tmp_path, name):
    broken = suite(tmp_path, "robust") / name
    run("gold", tmp_path / "out", "--scenarios", broken, "--scenarios", suite(tmp_path, "mixed"), check=1)
    entries = manifest_entries(tmp_path / "out")
    assert entries[name]["status"] == "error" and entries[name]["meta"]["source"] == str(broken)
    assert entries["test_mixed.py::test_tripled"]["status"] == "ok"


def test_a_conftest_beside_the_path_given_that_skips_skips_its_suite_and_the_rest_runs(tmp_path):
    skipped = suite(tmp_path, "robust") / "skipped"
    run("gold", tmp_path / "out", "--scenarios", skipped, "--scenarios", suite(tmp_path, "mixed"))
    entries = manifest_entries(tmp_path / "out")
    assert entries["skipped"]["status"] == "skip", entries["skipped"]
    assert "no_such_library_for_parity" in entries["skipped"]["error"]["message"]
    assert entries["test_mixed.py::test_tripled"]["status"] == "ok"


def test_a_module_fixtures_failing_teardown_is_its_modules_last_test_error_not_the_next_modules(tmp_path):
    teardown = suite(tmp_path, "teardown")
    for extra in ((), ("--only", "test_a_module.py::test_first", "--only", "test_b_next.py::test_innocent")):
        out = tmp_path / f"out{len(extra)}"
        run("gold", out, "--scenarios", teardown, *extra, check=1)
        entries = manifest_entries(out)
        last = "test_a_module.py::test_last_of_the_module" if not extra else "test_a_module.py::test_first"
        assert entries[last]["status"] == "error"
        assert "in teardown: module teardown went wrong" in entries[last]["error"]["message"]
        assert {i: e["status"] for i, e in entries.items() if i != last} == dict.fromkeys(set(entries) - {last}, "ok")


def test_native_modules_and_test_files_in_one_directory_both_run_and_a_duplicate_is_an_error(tmp_path):
    mixed = suite(tmp_path, "mixed")
    run("gold", tmp_path / "out", "--scenarios", mixed)
    assert statuses(tmp_path / "out") == {"natives.doubled": "ok", "test_mixed.py::test_tripled": "ok"}
    run("gold", tmp_path / "twice", "--scenarios", mixed, "--scenarios", mixed / "test_mixed.py", check=1)
    manifest = json.loads((tmp_path / "twice" / "manifest.json").read_text())
    ids = [e["id"] for e in manifest["scenarios"]]
    assert len(ids) == len(set(ids)), ids  # the duplicate's error is not filed under the id it duplicates
    entries = manifest_entries(tmp_path / "twice")
    assert entries["test_mixed.py::test_tripled"]["status"] == "ok"
    assert entries["test_mixed.py"]["error"]["type"] == "DuplicateScenario"
    assert "test_mixed.py::test_tripled" in entries["test_mixed.py"]["error"]["message"]


def test_a_test_file_given_directly_runs_with_its_folders_conftest(tmp_path):
    plain = suite(tmp_path, "plain")
    run("gold", tmp_path / "out", "--scenarios", plain / "test_values.py")
    expected = [i for i in PLAIN_IDS if i.startswith("test_values.py::")]
    assert statuses(tmp_path / "out") == dict.fromkeys(expected, "ok")
    assert manifest_entries(tmp_path / "out")["test_values.py::test_dot"]["meta"]["root"] == str(
        plain / "test_values.py")
