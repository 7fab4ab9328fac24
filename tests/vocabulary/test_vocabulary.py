"""The vocabulary (check names, statuses and which fail, policies) is defined once, in src/parity/base/outcome.h;
the Python package and the HTML template hold copies. These tests fail as soon as one copy drifts."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(os.environ["PARITY_REPO"])
sys.path.insert(0, str(REPO / "python"))

from parity import _scenario, backend, html_report  # noqa: E402 - needs the sys.path entry above

sys.path.insert(0, str(REPO / "cmake"))
import parity_scenario_check  # noqa: E402 - the per-scenario CTest tests' checker, beside ParityScenarioTests.cmake

sys.path.insert(0, str(REPO / "scripts"))
import nightly_summary  # noqa: E402 - the nightly's summary table (scripts/nightly.sh runs it with the system Python)


@pytest.fixture(scope="module")
def cpp():
    """The C++ tables, as tests/vocabulary/vocabulary_dump.cc prints them."""
    out = subprocess.run([os.environ["PARITY_VOCABULARY_DUMP"]], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def test_check_names_agree(cpp):
    assert list(_scenario.CHECKS) == cpp["checks"]


def test_declarable_checks_agree(cpp):
    assert list(backend.DECLARABLE_CHECKS) == cpp["declarable_checks"]
    assert set(cpp["declarable_checks"]) <= set(cpp["checks"])


def test_policies_agree(cpp):
    assert {name: list(values) for name, values in _scenario.POLICIES.items()} == \
        {p["name"]: p["values"] for p in cpp["policies"]}
    assert list(_scenario.POLICIES) == [p["name"] for p in cpp["policies"]], "the order reports list them in"


def test_html_report_statuses_agree(cpp):
    assert sorted(html_report.STATUS_ORDER) == sorted(cpp["statuses"])
    assert list(html_report.STATUS_ORDER) == cpp["statuses_worst_first"], "the page ranks statuses as outcome.h does"
    assert sorted(html_report.FAILING) == sorted(cpp["failing_statuses"]), "the order is the page's own"
    assert set(cpp["failing_statuses"]) <= set(cpp["statuses"])
    assert set(cpp["failing_run_statuses"]) <= set(cpp["run_statuses"])


def test_html_template_takes_the_failing_statuses_from_the_report_code():
    """The template holds no list of statuses of its own: it renders html_report's FAILING."""
    template = (REPO / "reports" / "templates" / "report.html.j2").read_text()
    statuses = "|".join(html_report.STATUS_ORDER)
    quoted_lists = re.findall(rf'\[\s*"(?:{statuses})"(?:\s*,\s*"(?:{statuses})")*\s*\]', template)
    assert not quoted_lists, f"the template lists statuses itself: {quoted_lists}"
    assert "failing_statuses" in template


def test_rendered_page_filters_by_exactly_the_failing_statuses(cpp):
    side = {"dir": "d", "backend": {"name": "numpy", "spec": "numpy", "version": "2"}, "environment": {}, "run": {}}
    report = {"format": "parity-compare", "version": 1, "parity": "0", "started": "2026-01-01T00:00:00Z",
              "seconds": 0, "policy": {}, "summary": {"total": 0}, "scenarios": [], "gold": side, "candidate": side}
    page = html_report.render(json.dumps(report), str(REPO / "reports" / "templates"))
    found = re.search(r"const failing = new Set\((\[.*?\])\)", page)
    assert found, "the page's failing filter"
    assert sorted(json.loads(found.group(1))) == sorted(cpp["failing_statuses"])
    assert f'failing ({", ".join(html_report.FAILING)})' in page


def test_scenario_test_checker_agrees(cpp):
    """The per-scenario CTest tests (cmake/parity_scenario_check.py) fail exactly where run and compare exit 1."""
    assert sorted(parity_scenario_check.FAILING_RUN_STATUSES) == sorted(cpp["failing_run_statuses"])
    assert sorted(parity_scenario_check.FAILING_STATUSES) == sorted(cpp["failing_statuses"])
    assert (parity_scenario_check.EXIT_OK, parity_scenario_check.EXIT_FAILED) == \
        (cpp["exit_codes"]["ok"], cpp["exit_codes"]["failed"])


def test_nightly_summary_has_a_column_for_every_status(cpp):
    """scripts/nightly_summary.py runs standalone (scripts/nightly.sh's python3), so it keeps its own column list, in
    reading order (pass first), not the report's worst-first order: a status it lacked would be counted nowhere."""
    assert sorted(nightly_summary.STATUSES) == sorted(cpp["statuses"])
    assert len(nightly_summary.STATUSES) == len(set(nightly_summary.STATUSES))
