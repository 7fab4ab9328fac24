"""End-to-end tests of trends: `compare --baseline` and `report --baseline` over real compares, and the refusals.

Three compares of gold against tests/e2e/report/mixed.py over tests/e2e/report/scenarios, one second apart:
  a: release 0.1.0;
  b: release 0.2.0, which mends the `noisy_` breaker: strip_1d is fixed, and known_difference (an xfail of `values`)
     now passes, an xpass: a new failure. Baseline: a.
  c: release 0.1.0 again, without fortran_order (--only): strip_1d fails anew, known_difference is fixed again and
     fortran_order's failure is gone. Baselines: b and a, newest first on the command line.
Both releases are a file `mixed.py` run from their own folder, so the backend's name is `mixed.py` for both, as an
installed package keeps its name across versions.
"""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from e2e_test import results_copy  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
REPORT = REPO / "tests" / "e2e" / "report"
DEMO = "report_demo."


def parity(*args, check, cwd=None):
    """Runs the binary; asserts its exit code."""
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd)
    assert proc.returncode == check, f"parity {args}: exit {proc.returncode}, expected {check}\n{proc.stderr}"
    return proc


def release(folder: Path, version: str, mended=()) -> Path:
    """Writes the mixed candidate as `folder`/mixed.py at `version`, with the breakers of `mended` removed."""
    folder.mkdir()
    fixes = "".join(f"BREAKERS.pop({prefix!r})\n" for prefix in mended)
    (folder / "mixed.py").write_text((REPORT / "mixed.py").read_text() + f"\n__version__ = {version!r}\n{fixes}")
    return folder


def wait_past(started: str):
    """Waits until a compare started now would have a later `started` (whole UTC seconds) than `started`."""
    while time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) <= started:
        time.sleep(0.05)


class Compare:
    """One compare's reports (JSON, HTML, JUnit) and what it printed."""

    def __init__(self, tmp: Path, name: str, candidate: str, *extra):
        self.json, self.html, self.junit = tmp / f"{name}.json", tmp / f"{name}.html", tmp / f"{name}.xml"
        self.stderr = parity("compare", tmp / "gold", tmp / candidate, "--json", self.json, "--html", self.html,
                             "--junit", self.junit, *extra, check=1).stderr
        self.report = json.loads(self.json.read_text())
        self.page = self.html.read_text()

    def trend(self, name):
        return next(s["trend"] for s in self.report["scenarios"] if s["id"] == DEMO + name)

    def marks(self):
        return {s["id"].removeprefix(DEMO): s["trend"]["mark"] for s in self.report["scenarios"] if s["trend"]["mark"]}

    def row(self, name):
        """The opening tag of the scenario's rows in the HTML table."""
        return re.search(rf'<tbody class="scenario" data-id="{re.escape(DEMO + name)}"[^>]*>', self.page)[0]


@pytest.fixture(scope="module")
def compares(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trends")
    scenarios = REPORT / "scenarios"
    parity("run", "--backend", "gold", "--out", tmp / "gold", "--scenarios", scenarios, "-q", check=0)
    for version, mended in (("0.1.0", ()), ("0.2.0", ("noisy_",))):
        folder = release(tmp / f"release-{version}", version, mended)
        parity("run", "--backend", "mixed.py", "--out", tmp / f"mixed-{version}", "--scenarios", scenarios, "-q",
               check=1, cwd=folder)
    a = Compare(tmp, "a", "mixed-0.1.0")
    wait_past(a.report["started"])
    b = Compare(tmp, "b", "mixed-0.2.0", "--baseline", a.json)
    wait_past(b.report["started"])
    kept = [arg for s in a.report["scenarios"] if s["id"] != DEMO + "fortran_order" for arg in ("--only", s["id"])]
    c = Compare(tmp, "c", "mixed-0.1.0", *kept, "--baseline", b.json, "--baseline", a.json)
    return {"a": a, "b": b, "c": c, "tmp": tmp}


def test_a_compare_without_baselines_has_no_trends(compares):
    a = compares["a"]
    assert not {"baselines", "trend_summary", "gone"} & a.report.keys()
    assert all("trend" not in s for s in a.report["scenarios"])
    assert "new failure" not in a.stderr and 'id="filter-trend"' not in a.page


def test_one_baseline_marks_the_fixed_failure_the_new_one_and_those_still_failing(compares):
    a, b = compares["a"], compares["b"]
    since = a.report["started"]
    assert b.marks() == {"strip_1d": "fixed", "known_difference": "new", "zeroed_block_2d": "still-failing",
                         "fortran_order": "still-failing", "byte_order": "still-failing",
                         "candidate_raises": "still-failing"}
    assert b.trend("known_difference") == {"mark": "new", "since": None, "history": ["xfail", "xpass"]}
    assert b.trend("candidate_raises") == {"mark": "still-failing", "since": since, "history": ["error", "error"]}
    assert b.trend("strip_1d") == {"mark": "fixed", "since": None, "history": ["fail", "pass"]}
    assert b.trend("passes[n=3]") == {"mark": None, "since": None, "history": ["pass", "pass"]}
    assert b.report["trend_summary"] == {"new": 1, "still_failing": 4, "fixed": 1, "gone": 0}
    assert b.report["gone"] == []
    assert b.report["baselines"] == [{"file": str(a.json), "started": since, "parity": a.report["parity"],
                                      "candidate": {"name": "mixed.py", "version": "0.1.0"},
                                      "summary": a.report["summary"]}]
    assert b.report["candidate"]["backend"]["version"] == "0.2.0", "another release of the same backend is a baseline"


def test_the_terminal_counts_the_marks_and_lists_the_new_failures_first(compares):
    b = compares["b"]
    counts = "parity compare: 1 new failure, 4 still failing, 1 fixed, 0 gone (against 1 baseline, started "
    assert counts in b.stderr, b.stderr
    listing = b.stderr[b.stderr.index(counts):]
    new = listing.index(DEMO + "known_difference  ")
    assert re.search(r"known_difference +new failure\n", listing), listing
    assert new < listing.index("still failing since") < listing.index("fixed\n"), listing


def test_the_html_and_junit_carry_the_marks(compares):
    a, b = compares["a"], compares["b"]
    assert 'data-trend="new"' in b.row("known_difference") and 'data-trend="fixed"' in b.row("strip_1d")
    assert f"still failing since {a.report['started'][:10]}</span>" in b.page
    assert '<span class="trend mark-new" title="failing now, not in the latest baseline">new failure</span>' in b.page
    assert 'id="count-trend-new">1<' in b.page and 'id="count-trend-still-failing">4<' in b.page
    assert 'class="sq ' not in b.page, "one baseline: marks, no history"
    assert "<td>mixed.py 0.1.0</td>" in b.page and "<td>mixed.py 0.2.0</td>" in b.page, "both releases are shown"
    junit = b.junit.read_text()
    assert re.search(r'<failure message="[^"]*\(new failure\)" type="xpass"', junit), junit
    assert f'(still failing since {a.report["started"]})" type="error"' in junit
    assert '<property name="trend.new" value="1"' in junit


def test_several_baselines_are_ordered_by_when_they_started_and_a_failure_not_compared_is_gone(compares):
    a, b, c = compares["a"], compares["b"], compares["c"]
    day_a, day_b = a.report["started"], b.report["started"]
    assert [x["started"] for x in c.report["baselines"]] == [day_a, day_b], "given newest first, listed oldest first"
    assert [x["candidate"]["version"] for x in c.report["baselines"]] == ["0.1.0", "0.2.0"]
    assert c.marks() == {"strip_1d": "new", "known_difference": "fixed", "zeroed_block_2d": "still-failing",
                         "byte_order": "still-failing", "candidate_raises": "still-failing"}
    assert c.trend("strip_1d")["history"] == ["fail", "pass", "fail"]
    assert c.trend("zeroed_block_2d") == {"mark": "still-failing", "since": day_a, "history": ["fail"] * 3}
    assert c.report["gone"] == [{"id": DEMO + "fortran_order",
                                 "trend": {"mark": "gone", "since": day_a, "history": ["fail", "fail", "absent"]}}]
    assert c.report["trend_summary"] == {"new": 1, "still_failing": 3, "fixed": 1, "gone": 1}
    assert f'<span class="sq status-pass" title="{day_b}: pass"></span>' in c.page, "a history, with dates"
    assert f'title="now, {c.report["started"]}: fail"' in c.page
    assert "<code>report_demo.fortran_order</code>" in c.page
    assert re.search(r"fortran_order +gone \(failing since ", c.stderr), c.stderr


def test_report_renders_the_trends_again(compares, tmp_path):
    a, b, c = compares["a"], compares["b"], compares["c"]
    parity("report", c.json, "--html", tmp_path / "c.html", check=0)
    assert (tmp_path / "c.html").read_bytes() == c.html.read_bytes(), "the JSON keeps the trends"
    parity("report", b.json, "--baseline", a.json, "--html", tmp_path / "b.html", "--junit", tmp_path / "b.xml",
           check=0)
    assert (tmp_path / "b.html").read_bytes() == b.html.read_bytes()
    assert (tmp_path / "b.xml").read_bytes() == b.junit.read_bytes()
    # c against a alone: strip_1d failed there too, and fortran_order's failure of a is gone.
    parity("report", c.json, "--baseline", a.json, "--html", tmp_path / "c-a.html", check=0)
    page = (tmp_path / "c-a.html").read_text()
    assert re.search(r'data-id="report_demo\.strip_1d"[^>]*data-trend="still-failing"', page)
    assert 'id="count-trend-new">0<' in page and "<code>report_demo.fortran_order</code>" in page


def refused(*args, complaint, check_file):
    proc = parity(*args, check=2)
    assert str(check_file) in proc.stderr and complaint in proc.stderr, proc.stderr
    return proc


def test_compare_refuses_a_baseline_that_is_not_a_compare_json(compares, tmp_path):
    tmp = compares["tmp"]
    manifest = tmp / "gold" / "manifest.json"
    refused("compare", tmp / "gold", tmp / "mixed-0.1.0", "--json", tmp_path / "out.json", "--baseline",
            compares["a"].json, "--baseline", manifest, complaint="not a parity compare report", check_file=manifest)
    assert not (tmp_path / "out.json").exists(), "refused before comparing"
    missing = tmp_path / "missing.json"
    refused("compare", tmp / "gold", tmp / "mixed-0.1.0", "--baseline", missing, complaint="cannot be read",
            check_file=missing)
    refused("report", compares["b"].json, "--html", tmp_path / "out.html", "--baseline", manifest,
            complaint="not a parity compare report", check_file=manifest)
    assert not (tmp_path / "out.html").exists()


def test_compare_refuses_a_baseline_of_another_candidate_backend(compares, tmp_path):
    tmp = compares["tmp"]
    other = tmp_path / "gold-vs-gold.json"
    parity("compare", tmp / "gold", results_copy(tmp / "gold"), "--json", other, check=1)  # known_difference: an xpass
    proc = refused("compare", tmp / "gold", tmp / "mixed-0.1.0", "--baseline", other,
                   complaint="compares candidate backend 'gold', not 'mixed.py'", check_file=other)
    assert proc.stderr.startswith("parity compare: baseline "), proc.stderr


def test_report_refuses_a_baseline_newer_than_the_report(compares, tmp_path):
    a, b = compares["a"], compares["b"]
    refused("report", a.json, "--html", tmp_path / "a.html", "--baseline", b.json,
            complaint=f"started {b.report['started']}, after this compare", check_file=b.json)
