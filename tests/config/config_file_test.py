"""[tool.parity] and parity.toml: a configuration file drives list, run and compare; flags win; mistakes exit 2."""
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from e2e_test import results_copy  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))

# Scenarios that sleep long enough for two workers to share them, and note which worker ran them.
SCENARIOS = '''\
"""Config-test scenarios."""
import os
import time

import parity


@parity.scenario(params={"n": [1, 2]})
def pid(xp, n):
    time.sleep(0.5)
    with open(os.environ["CONFIG_TEST_PIDS"], "a") as f:
        f.write(f"{os.getpid()}\\n")
    return {"a": xp.arange(3.0) * n}
'''


def parity(*args, cwd, check=None, env=None):
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, **(env or {})})
    if check is not None:
        assert proc.returncode == check, f"parity {args}: exit {proc.returncode}, expected {check}\n{proc.stderr}"
    return proc


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def project(tmp_path):
    """A project with its scenarios under scen/ and a working directory two levels below its pyproject.toml."""
    write(tmp_path / "scen" / "configured.py", SCENARIOS)
    write(tmp_path / "scen" / "second.py", SCENARIOS)  # a worker takes a module's scenarios: two modules, two workers
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "reports").mkdir()  # a report's directory must exist, whoever names the report
    return tmp_path


PYPROJECT = """\
    [project]
    name = "demo"
    dependencies = [
        "numpy",
    ]

    [tool.parity]
    scenarios = ["scen"]
    timeout = 77

    [tool.parity.run]
    backend = "fsproxy"
    jobs = 2

    [tool.parity.compare]
    json = "reports/report.json"
    junit = "reports/junit.xml"
    html = "reports/report.html"
    dtype-policy = "kind"
    """


IDS = ["configured.pid[n=1]", "configured.pid[n=2]", "second.pid[n=1]", "second.pid[n=2]"]


def pids(path: Path) -> set:
    found = set(path.read_text().split())
    path.unlink()
    return found


def test_a_pyproject_drives_run_and_compare_from_a_subdirectory(project):
    pyproject = write(project / "pyproject.toml", PYPROJECT)
    cwd, log = project / "deep" / "er", project / "pids"
    env = {"CONFIG_TEST_PIDS": str(log)}
    gold = parity("run", "--backend", "gold", "--out", project / "gold", cwd=cwd, check=0, env=env)
    assert f"configuration: {pyproject}" in gold.stderr
    assert len(pids(log)) == 2  # jobs = 2
    parity("run", "--out", project / "cand", cwd=cwd, check=0, env=env)
    manifest = json.loads((project / "cand" / "manifest.json").read_text())
    assert manifest["backend"]["name"] == "fsproxy"  # backend = "fsproxy"
    assert manifest["run"]["timeout"] == 77
    assert manifest["run"]["paths"] == [str(project / "scen")]  # relative to the file, not to the working directory
    assert sorted(s["id"] for s in manifest["scenarios"]) == IDS
    parity("compare", project / "gold", project / "cand", cwd=cwd, check=0)
    report = json.loads((project / "reports" / "report.json").read_text())
    assert report["policy"]["dtype"] == "kind"
    assert (project / "reports" / "junit.xml").is_file() and (project / "reports" / "report.html").is_file()


def test_flags_win_over_the_file(project):
    write(project / "pyproject.toml", PYPROJECT)
    cwd, log = project / "deep", project / "pids"
    env = {"CONFIG_TEST_PIDS": str(log)}
    parity("run", "--backend", "gold", "--out", project / "gold", "--jobs", "1", "--timeout", "9", cwd=cwd, check=0,
           env=env)
    assert len(pids(log)) == 1
    manifest = json.loads((project / "gold" / "manifest.json").read_text())
    assert manifest["backend"]["name"] == "gold" and manifest["run"]["timeout"] == 9
    parity("compare", project / "gold", results_copy(project / "gold"), "--json", project / "mine.json", "--dtype-policy", "exact",
           cwd=cwd, check=0)
    assert json.loads((project / "mine.json").read_text())["policy"]["dtype"] == "exact"
    assert not (project / "reports" / "report.json").exists()  # --json replaced the file's json, not added to it
    assert (project / "reports" / "junit.xml").is_file()  # what no flag replaced still applies


def listed(proc) -> list:
    return [entry["id"] for entry in json.loads(proc.stdout)]


def test_parity_toml_wins_over_the_pyproject_beside_it_and_the_nearest_directory_wins(project):
    write(project / "other" / "o.py", SCENARIOS.replace("def pid", "def other"))
    write(project / "pyproject.toml", PYPROJECT)
    assert listed(parity("list", "--json", cwd=project / "deep", check=0)) == IDS
    toml = write(project / "deep" / "parity.toml", 'scenarios = "../other"\n')
    proc = parity("list", "--json", cwd=project / "deep" / "er", check=0)
    assert listed(proc) == ["o.other[n=1]", "o.other[n=2]"] and f"configuration: {toml}" in proc.stderr
    write(project / "deep" / "pyproject.toml", '[tool.parity]\nscenarios = "../scen"\n')
    assert listed(parity("list", "--json", cwd=project / "deep", check=0))[0] == "o.other[n=1]"


def test_a_pyproject_without_tool_parity_is_passed_over(project):
    write(project / "pyproject.toml", PYPROJECT)
    write(project / "deep" / "pyproject.toml", '[project]\nname = "parity-less"\n[tool.black]\nline-length = 99\n')
    assert listed(parity("list", "--json", cwd=project / "deep" / "er", check=0))[0] == "configured.pid[n=1]"


def test_no_config_ignores_the_files_and_config_picks_one(project):
    write(project / "pyproject.toml", PYPROJECT)
    proc = parity("list", "--json", "--no-config", cwd=project, check=0)
    assert "configured.pid[n=1]" not in listed(proc) and "configuration:" not in proc.stderr  # the bundled corpus
    chosen = write(project / "elsewhere" / "settings.toml", 'scenarios = "../other"\n')
    write(project / "other" / "o.py", SCENARIOS.replace("def pid", "def other"))
    assert listed(parity("list", "--json", "--config", chosen, cwd=project, check=0))[0] == "o.other[n=1]"
    parity("list", "--config", chosen, "--no-config", cwd=project, check=2)


def test_a_results_directory_is_never_read_for_configuration(project):
    write(project / "pyproject.toml", PYPROJECT)
    results = project / "results"
    write(results / "manifest.json", "{}")
    write(results / "parity.toml", 'scenarios = "/nonexistent"\n[run]\nbackend = "/tmp/evil.py"\n')
    proc = parity("list", "--json", cwd=results, check=0)
    assert listed(proc)[0] == "configured.pid[n=1]" and str(results / "parity.toml") not in proc.stderr


ALL, RUN, COMPARE = ("list", "run", "compare"), ("run",), ("compare",)


# A wrong key or type is refused by every command (every table is checked); a bad value by the commands it applies to,
# with the option's own check.
@pytest.mark.parametrize("text, commands, where, complaint", [
    ("[tool.parity]\nscenario = 'scen'\n", ALL, "[tool.parity] unknown key 'scenario'", ""),
    ("[tool.parity.compare]\nmax-memory = 2\n", ALL, "[tool.parity.compare] unknown key 'max-memory'",
     "not an option of compare"),
    ("[tool.parity.run]\njobs = '2'\n", ALL, "[tool.parity.run] jobs", "expected an integer, got a string"),
    ("[tool.parity.compare]\nstrict-differences = 'yes'\n", ALL, "strict-differences", "expected a boolean"),
    ("[tool.parity]\nscenarios = [1]\n", ALL, "scenarios", "expected a string or an array of strings"),
    ("[tool.parity]\nrun = 3\n", ALL, "run", "expected a table"),
    ("[tool.parity.run]\nbackend = 2026-11-26\n", ALL, "backend", "a date"),
    ("[tool.parity\n", ALL, "not valid TOML", ""),
    ("[tool.parity.run]\njobs = 0\n", RUN, "[tool.parity.run] jobs", "--jobs"),
    ("[tool.parity.compare]\njobs = 0\n", COMPARE, "[tool.parity.compare] jobs", "--jobs"),
    ("[tool.parity]\ntimeout = -1\n", RUN + COMPARE, "[tool.parity] timeout", "--timeout"),
    ("[tool.parity.compare]\ndtype-policy = 'loose'\n", COMPARE, "[tool.parity.compare] dtype-policy", "loose"),
])
def test_a_mistake_in_the_file_is_a_usage_error_naming_the_key_and_the_file(project, text, commands, where,
                                                                            complaint):
    pyproject = write(project / "pyproject.toml", text)
    args = {"list": ["list"], "run": ["run", "--out", project / "x"], "compare": ["compare", project, project]}
    for command in commands:
        proc = parity(*args[command], cwd=project / "deep", check=2)
        assert f"{pyproject}: " in proc.stderr and where in proc.stderr and complaint in proc.stderr, proc.stderr
    assert not (project / "x").exists()


def test_a_parity_toml_names_its_tables_without_tool_parity(project):
    toml = write(project / "parity.toml", "[run]\njobs = 'many'\n")
    proc = parity("list", cwd=project, check=2)
    assert f"{toml}: [run] jobs: expected an integer" in proc.stderr, proc.stderr


# Every TOML spelling of the table is found (the search skips the interpreter for files that cannot hold one).
@pytest.mark.parametrize("text", [
    '[project]\nname = "parity"\n[tool.parity]\nscenarios = "scen"\n',
    '[tool.parity.list]\nscenarios = "scen"\n',
    'tool.parity.scenarios = "scen"\n[project]\nname = "x"\n',
    '[tool]\nparity.scenarios = "scen"\n',
    '[tool]\n"parity" = { scenarios = "scen" }\n',
    '[ "tool" . parity ]\nscenarios = "scen"\n',
])
def test_every_spelling_of_tool_parity_is_read(project, text):
    pyproject = write(project / "deep" / "pyproject.toml", text.replace('"scen"', '"../scen"'))
    proc = parity("list", "--json", cwd=project / "deep" / "er", check=0)
    assert listed(proc) == IDS and f"configuration: {pyproject}" in proc.stderr, proc.stderr


def test_a_project_named_parity_is_no_configuration(project):
    write(project / "deep" / "pyproject.toml", '[project]\nname = "parity"\ndependencies = ["parity"]\n')
    proc = parity("list", "--json", cwd=project / "deep", check=0)
    assert "configuration:" not in proc.stderr and "configured.pid[n=1]" not in listed(proc)


def test_a_runs_supervisor_reads_the_file_without_importing_numpy(project):
    """The supervisor parses the file with the standard library's tomllib; NumPy (most of an interpreter's start) is
    its workers' to import, and a compare that read the file still loads it."""
    import re

    write(project / "parity.toml", 'scenarios = ["scen"]\n[run]\nbackend = "gold"\n')
    proc = parity("run", "--out", project / "gold", cwd=project, check=0,
                  env={"PYTHONPROFILEIMPORTTIME": "1", "CONFIG_TEST_PIDS": str(project / "pids")})
    imported = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", proc.stderr, re.M))
    assert imported & {"tomllib", "tomli"}, proc.stderr[-2000:]  # the profile was read
    assert "numpy" not in imported
    manifest = json.loads((project / "gold" / "manifest.json").read_text())
    assert sorted(s["id"] for s in manifest["scenarios"]) == IDS
    parity("compare", project / "gold", results_copy(project / "gold"), cwd=project, check=0)
