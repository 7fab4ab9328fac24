"""JUnit for CI annotators: each testcase's file and line, what each side printed, and --junitxml (issue #19, item 8)."""
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))

NATIVE = '''\
"""Scenarios that print."""
import sys
import warnings

import parity


def _shared_helper():
    warnings.warn("the shared helper is deprecated", UserWarning)


@parity.scenario(tags=["loud"])
def talks(xp):
    print("native says hello")
    print("native warns", file=sys.stderr)
    return {"a": xp.arange(3)}


@parity.scenario()
def floods(xp):
    print("x" * 100000 + "THE END")
    return {"b": 1}


@parity.scenario()
def warns_first(xp):
    _shared_helper()
    return {"w": 1}


@parity.scenario()
def warns_again(xp):
    _shared_helper()
    return {"w": 2}
'''

PYTEST_STYLE = '''\
import numpy as np


def test_prints():
    print("pytest-style says hello")
    return {"c": np.arange(2)}
'''


def parity(*args, check):
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == check, f"parity {args}: exit {proc.returncode}, expected {check}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """gold and fsproxy over the printing scenarios, compared with --junitxml: (directory, {name: testcase})."""
    out = tmp_path_factory.mktemp("junit")
    scenarios = out / "scen"
    scenarios.mkdir()
    (scenarios / "loud.py").write_text(NATIVE)
    (scenarios / "test_loud.py").write_text(PYTEST_STYLE)
    for backend in ("gold", "fsproxy"):
        parity("run", "--backend", backend, "--out", out / backend, "--scenarios", scenarios, "-q", check=0)
    parity("compare", out / "gold", out / "fsproxy", "--scenarios", scenarios, "--json", out / "report.json",
           "--junitxml", out / "junit.xml", check=0)
    cases = {tc.get("name"): tc for tc in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    return out, cases


def definition_line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(text))


def test_each_testcase_carries_its_scenarios_file_and_line(compared):
    out, cases = compared
    scenarios = out / "scen"
    talks = cases["talks"]
    assert talks.get("file") == str(scenarios / "loud.py")
    assert int(talks.get("line")) == definition_line(scenarios / "loud.py", "@parity.scenario(tags")
    pytest_case = cases["test_loud.py::test_prints"]
    assert pytest_case.get("file") == str(scenarios / "test_loud.py")
    assert int(pytest_case.get("line")) == definition_line(scenarios / "test_loud.py", "def test_prints")


def test_system_out_and_err_hold_what_each_side_printed_labelled(compared):
    _, cases = compared
    out, err = cases["talks"].findtext("system-out"), cases["talks"].findtext("system-err")
    assert out == ("----- gold stdout -----\nnative says hello\n"
                   "----- candidate stdout -----\nnative says hello\n"), out
    assert err == "----- gold stderr -----\nnative warns\n----- candidate stderr -----\nnative warns\n", err
    assert "pytest-style says hello\n" in cases["test_loud.py::test_prints"].findtext("system-out")


def test_each_scenario_shows_its_own_warnings_whatever_ran_before_it(compared):
    # Python shows a warning once per place in a process: without a fresh registry per scenario, the second
    # scenario's stderr would depend on which scenarios shared its worker (shards, --jobs), not on the scenario.
    _, cases = compared
    for name in ("warns_first", "warns_again"):
        err = cases[name].findtext("system-err") or ""
        assert err.count("UserWarning: the shared helper is deprecated") == 2, (name, err)


def test_a_flood_of_output_keeps_its_end_and_says_so(compared):
    _, cases = compared
    out = cases["floods"].findtext("system-out")
    assert "----- gold stdout (its end only) -----" in out and out.count("THE END") == 2
    assert len(out) < 20000, len(out)


def test_the_junit_still_validates_against_the_schema(compared):
    etree = pytest.importorskip("lxml.etree")
    out, _ = compared
    schema = etree.XMLSchema(etree.parse(str(REPO / "tests" / "schemas" / "junit.xsd")))
    assert schema.validate(etree.parse(str(out / "junit.xml"))), schema.error_log


def test_report_and_merge_take_junitxml_too(compared, tmp_path):
    out, _ = compared
    parity("report", out / "report.json", "--junitxml", tmp_path / "again.xml", check=0)
    assert (tmp_path / "again.xml").read_bytes() == (out / "junit.xml").read_bytes()
    shards = [tmp_path / f"shard-{i}.json" for i in (1, 2)]
    for i, shard in enumerate(shards, 1):
        parity("compare", out / "gold", out / "fsproxy", "--scenarios", out / "scen", "--shard", f"{i}/2", "--json",
               shard, check=0)
    parity("merge", "--junitxml", tmp_path / "merged.xml", *shards, check=0)
    merged = {tc.get("name"): tc for tc in ET.parse(tmp_path / "merged.xml").getroot().iter("testcase")}
    assert merged["talks"].get("line") == compared[1]["talks"].get("line")
