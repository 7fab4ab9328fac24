"""A suite's own settings and habits, as pytest honours them (issue #18, attack round): common addopts, xfail_compare
conditions, native scenario modules named like tests, and tests that change the working directory."""
import json
from pathlib import Path

from e2e_test import compare, parity, run  # the shared e2e helpers


def write(directory: Path, files: dict) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory


def statuses(results: Path) -> dict:
    return {s["id"]: s["status"] for s in json.loads((results / "manifest.json").read_text())["scenarios"]}


ADDOPTS_SUITE = {
    # Options of the terminal, junitxml and cache plugins: pytest accepts them all, so parity must too.
    "pytest.ini": "[pytest]\naddopts = -ra -v --tb=native --color=yes --showlocals --junitxml=junit.xml "
                  "--cache-clear --durations=3\n",
    "test_a.py": "import numpy as np\n\ndef test_sum():\n    return np.arange(4).sum()\n",
}


def test_a_suite_whose_addopts_name_reporting_options_runs_and_writes_nothing_into_itself(tmp_path):
    suite = write(tmp_path / "suite", ADDOPTS_SUITE)
    listed = parity("list", "--scenarios", suite, check=0)
    assert listed.stdout.split() == ["test_a.py::test_sum"], listed.stdout  # no terminal header in the listing
    run("gold", tmp_path / "gold", "--scenarios", suite)
    assert statuses(tmp_path / "gold") == {"test_a.py::test_sum": "ok"}
    left = sorted(p.name for p in suite.iterdir() if p.name != "__pycache__")
    assert left == sorted(ADDOPTS_SUITE), left  # no junit.xml, no .pytest_cache


SUMMARY_SUITE = {
    # A plugin's terminal summary that writes into the suite, as pytest-cov's report does (Hypothesis's imports all of
    # Hypothesis there: ~0.8 s at each worker's end and in each compare that collects a suite for its assert_eq).
    "conftest.py": "from pathlib import Path\n\n\ndef pytest_terminal_summary(terminalreporter):\n"
                   "    (Path(__file__).parent / 'summary.txt').write_text('written')\n",
    "test_s.py": "import numpy as np\nimport pytest\n\n\n@pytest.mark.assert_eq(fn=np.testing.assert_allclose)\n"
                 "def test_arange():\n    return np.arange(4.0)\n",
}


def test_no_terminal_summary_runs_so_a_plugins_report_is_not_written_into_the_suite(tmp_path):
    suite = write(tmp_path / "suite", SUMMARY_SUITE)
    parity("list", "--scenarios", suite, check=0)
    run("gold", tmp_path / "gold", "--scenarios", suite)
    run("gold", tmp_path / "again", "--scenarios", suite, "-j", "2")
    _, report, _ = compare(tmp_path / "gold", tmp_path / "again", tmp_path, "--scenarios", suite, check=0)
    checks = {c["check"]: c["ok"] for c in report["scenarios"][0]["checks"]}
    assert checks["assert_eq"] is True, report["scenarios"][0]  # compare collected the suite, and ended its session
    assert not (suite / "summary.txt").exists()


UNREGISTERING_SUITE = {
    # A plugin unregistered as the session ends: pluggy walks every hook caller then, and 635465f had left a plain
    # function in place of the terminal summary's (AttributeError, the compare's error and the worker's teardown's).
    "conftest.py": "class Plugin:\n    pass\n\n\ndef pytest_configure(config):\n"
                   "    config.pluginmanager.register(Plugin(), 'my-plugin')\n\n\n"
                   "def pytest_sessionfinish(session):\n    session.config.pluginmanager.unregister(name='my-plugin')\n",
    "test_u.py": SUMMARY_SUITE["test_s.py"],
}


def test_a_plugin_unregistered_at_the_sessions_end_is_no_error(tmp_path):
    suite = write(tmp_path / "suite", UNREGISTERING_SUITE)
    run("gold", tmp_path / "gold", "--scenarios", suite)
    run("gold", tmp_path / "again", "--scenarios", suite)
    _, report, _ = compare(tmp_path / "gold", tmp_path / "again", tmp_path, "--scenarios", suite, check=0)
    assert report["scenarios"][0]["status"] == "pass", report["scenarios"][0]


CONDITIONS_SUITE = {
    "pytest.ini": "[pytest]\nxfail_strict = true\n",
    "test_c.py": """import sys
import pytest

@pytest.mark.xfail_compare("sys.platform == 'no-such-platform'", reason="only there")
def test_string_condition_false():
    return 1

@pytest.mark.xfail_compare(False, reason="never")
def test_bool_condition_false():
    return 2

@pytest.mark.xfail_compare(condition=sys.platform == "no-such-platform", reason="never")
def test_keyword_condition_false():
    return 3

@pytest.mark.xfail_compare("sys.platform == sys.platform", reason="always")
def test_string_condition_true():
    return 4

@pytest.mark.xfail_compare("no_such_name > 1", reason="broken")
def test_condition_that_does_not_evaluate():
    return 5
""",
}


def test_xfail_compare_applies_only_where_its_condition_holds(tmp_path):
    suite = write(tmp_path / "suite", CONDITIONS_SUITE)
    for name in ("gold", "fsproxy"):
        run(name, tmp_path / name, "--scenarios", suite, check=1)  # the broken condition is that test's error
    assert statuses(tmp_path / "gold")["test_c.py::test_condition_that_does_not_evaluate"] == "error"
    _, report, _ = compare(tmp_path / "gold", tmp_path / "fsproxy", tmp_path, "--scenarios", suite, check=1)
    got = {s["id"]: s["status"] for s in report["scenarios"]}
    # A false condition is no expected failure: a strict one would make each of these an xpass.
    for test in ("string_condition_false", "bool_condition_false", "keyword_condition_false"):
        assert got[f"test_c.py::test_{test}"] == "pass", (test, got)
    assert got["test_c.py::test_string_condition_true"] == "xpass", got  # strict, and the compare passed


def test_a_native_module_named_like_a_test_file_stays_native(tmp_path):
    scenarios = write(tmp_path / "scen", {
        "test_native.py": "import parity\n\n@parity.scenario\ndef dot(xp):\n    return xp.arange(3) @ xp.arange(3)\n"
                          "\n\ndef test_thing(xp):\n    return xp.ones(2)\n",
        "test_real.py": "def test_real():\n    return 7\n",
    })
    listed = parity("list", "--scenarios", scenarios, check=0).stdout.split()
    assert listed == ["test_native.dot", "test_real.py::test_real"], listed


def test_a_test_that_changes_the_working_directory_does_not_move_the_results(tmp_path, monkeypatch):
    suite = write(tmp_path / "suite", {
        "test_cd.py": "import os\n\ndef test_cd():\n    os.chdir('/')\n    return 1\n\ndef test_after():\n"
                      "    return 2\n",
    })
    monkeypatch.chdir(tmp_path)
    run("gold", Path("relative-out"), "--scenarios", suite)
    assert statuses(tmp_path / "relative-out") == {"test_cd.py::test_cd": "ok", "test_cd.py::test_after": "ok"}
