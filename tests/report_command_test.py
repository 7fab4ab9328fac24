"""End-to-end tests of `parity report`: the reports rendered again from a compare JSON, and the inputs it refuses."""
import json
import os
from pathlib import Path

import pytest

import demo_run

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))


def parity(*args, check):
    return demo_run.parity(BIN, *args, check=check)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """gold against tests/e2e/report/mixed.py, compared with every report written: the directory holding them."""
    return demo_run.compare_demo(BIN, tmp_path_factory.mktemp("report"))


def test_report_renders_the_same_html_and_junit_from_the_json_alone(compared, tmp_path):
    proc = parity("report", compared / "report.json", "--html", tmp_path / "again.html", "--junit",
                  tmp_path / "again.xml", check=0)
    assert (tmp_path / "again.html").read_bytes() == (compared / "report.html").read_bytes()
    assert (tmp_path / "again.xml").read_bytes() == (compared / "junit.xml").read_bytes()
    assert str(tmp_path / "again.html") in proc.stderr and str(tmp_path / "again.xml") in proc.stderr


def test_report_of_a_hand_edited_field_of_the_wrong_type_is_an_error_naming_the_file(compared, tmp_path):
    report = json.loads((compared / "report.json").read_text())
    failed = next(s for s in report["scenarios"] if s["status"] == "fail")
    failed["checks"][0]["ok"] = "no"
    source = tmp_path / "edited.json"
    source.write_text(json.dumps(report))
    proc = parity("report", source, "--junit", tmp_path / "out.xml", check=2)
    assert str(source) in proc.stderr, proc.stderr


def test_report_without_an_output_is_a_usage_error(compared):
    proc = parity("report", compared / "report.json", check=2)
    assert "nothing to write" in proc.stderr


@pytest.mark.parametrize("content, complaint", [
    (None, "cannot be read"),
    ("{not json", "not JSON"),
    ('{"format": "parity-manifest", "version": 1}', "not a parity compare report"),
    ('{"format": "parity-compare", "version": 99}', "written by a newer parity (report version 99"),
    ('{"format": "parity-compare", "version": 4294967297}', "newer parity (report version 4294967297"),
    ('{"format": "parity-compare", "version": 0}', "a compare report's is 1 or more"),
    ('{"format": "parity-compare", "version": 1}', 'has no "scenarios" array'),
    ('{"format": "parity-compare", "version": 1, "scenarios": [{"status": "pass"}]}', 'scenarios[0] has no string "id"'),
    ('{"format": "parity-compare", "version": 1, "scenarios": []}', "the report has no 'gold' dict"),
])
def test_report_refuses_what_is_not_a_compare_report_naming_the_file(tmp_path, content, complaint):
    source = tmp_path / "input.json"
    if content is not None:
        source.write_text(content)
    proc = parity("report", source, "--html", tmp_path / "out.html", check=2)
    assert str(source) in proc.stderr and complaint in proc.stderr, proc.stderr
    assert not (tmp_path / "out.html").exists()


def test_report_into_a_directory_that_does_not_exist_is_an_error_naming_it(compared, tmp_path):
    target = tmp_path / "missing" / "out.html"
    proc = parity("report", compared / "report.json", "--html", target, check=2)
    assert str(target.parent) in proc.stderr or str(target) in proc.stderr, proc.stderr


def test_the_json_carries_the_run_the_html_shows(compared):
    report = json.loads((compared / "report.json").read_text())
    html = (compared / "report.html").read_text()
    for scenario in report["scenarios"]:
        assert f'data-id="{scenario["id"]}"' in html
    assert f'id="count-total">{report["summary"]["total"]}<' in html


@pytest.mark.parametrize("status", ["bogus", "PASS", "missing", "", None, 1])
def test_a_scenario_status_compare_does_not_write_is_refused_by_every_reader(compared, tmp_path, status):
    """Each reader counted a status it did not know as not failing: the HTML title said "0 failing", merge exited 0
    and a baseline marked the scenario fixed."""
    report = json.loads((compared / "report.json").read_text())
    victim = next(s for s in report["scenarios"] if s["status"] == "fail")
    victim["status"] = status
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(report))
    for args in (["report", edited, "--html", tmp_path / "a.html"],
                 ["report", compared / "report.json", "--baseline", edited, "--html", tmp_path / "b.html"],
                 ["merge", edited, "--json", tmp_path / "merged.json"]):
        proc = parity(*args, check=2)
        assert str(edited) in proc.stderr and f"scenario '{victim['id']}' has the status" in proc.stderr, proc.stderr


def edited_report(compared, tmp_path, edit, failing="values"):
    """The demo's report with `edit(report, failed)` applied (`failed`: its first scenario failing the check
    `failing`), written to a file of its own: (that file, the failed scenario's id)."""
    report = json.loads((compared / "report.json").read_text())
    failed = next(s for s in report["scenarios"] if s["status"] == "fail"
                  and any(c["check"] == failing and not c["ok"] for c in s["checks"]))
    edit(report, failed)
    source = tmp_path / "edited.json"
    source.write_text(json.dumps(report))
    return source, failed["id"]


def test_the_html_header_counts_the_scenarios_it_shows_not_the_summary_it_is_given(compared, tmp_path):
    """A report from elsewhere whose summary says 0 failing while scenarios fail had a green header: the counts and the
    title trusted `summary`. They count the scenarios, as JUnit and merge do."""
    def all_pass(report, failed):
        report["summary"] = {"total": 1, "pass": 1, "fail": 0, "error": 0, "xfail": 0, "xpass": 0, "skip": 0}
    source, _ = edited_report(compared, tmp_path, all_pass)
    parity("report", source, "--html", tmp_path / "out.html", check=0)
    html = (tmp_path / "out.html").read_text()
    statuses = [s["status"] for s in json.loads(source.read_text())["scenarios"]]
    failing = sum(statuses.count(status) for status in ("fail", "error", "timeout", "xpass"))
    assert failing > 0 and f": {failing} failing of {len(statuses)}</title>" in html
    assert f'id="count-total">{len(statuses)}<' in html and f'id="count-fail">{statuses.count("fail")}<' in html
    assert f'id="count-pass">{statuses.count("pass")}<' in html


def test_the_html_trend_counts_are_the_scenarios_marks_not_the_summary_given(compared, tmp_path):
    def marked(report, failed):
        failed["trend"] = {"mark": "new", "since": None, "history": ["pass", "fail"]}
        report["baselines"] = [{"file": "b.json", "started": "2020-01-01T00:00:00Z", "parity": "0.1.0",
                                "candidate": {"name": "x", "version": "1"}, "summary": {}}]
        report["trend_summary"] = {"new": 0, "still_failing": 0, "fixed": 0, "gone": 0}
    source, _ = edited_report(compared, tmp_path, marked)
    parity("report", source, "--html", tmp_path / "out.html", check=0)
    assert '<option value="new">new failures (1)</option>' in (tmp_path / "out.html").read_text()


def first_failed_check(scenario):
    return next(c for c in scenario["checks"] if c["check"] == "values" and not c["ok"])


@pytest.mark.parametrize("edit, field", [
    (lambda s: first_failed_check(s).update(message=["a", "list"]), "checks[0].message is an array, not a string"),
    (lambda s: first_failed_check(s).update(details="text"), "checks[0].details is a string, not an object"),
    (lambda s: first_failed_check(s).update(ok="no"), "checks[0].ok is a string, not true or false"),
    (lambda s: first_failed_check(s).pop("check"), "checks[0].check is absent, not a string"),
    (lambda s: s["checks"].insert(0, 7), "checks[0] is a number, not an object"),
    (lambda s: s.update(checks="values"), "checks is a string, not an array"),
    (lambda s: s.update(seconds="1.5"), "seconds is a string, not an object"),
    (lambda s: s["seconds"].update(gold="1.5"), "seconds.gold is a string, not a number"),
    (lambda s: s.update(message={"a": 1}), "message is an object, not a string"),
    (lambda s: s.update(tags=[1]), "tags[0] is a number, not a string"),
    (lambda s: s.update(policy="exact"), "policy is a string, not an object"),
    (lambda s: first_failed_check(s)["details"].update(percent="5"), "checks[0].details.percent is a string, not a "
                                                                      "number"),
    (lambda s: first_failed_check(s)["details"].update(first=[3]), "checks[0].details.first[0] is a number, not an "
                                                                    "object"),
])
def test_a_scenario_field_of_the_wrong_type_is_an_error_naming_the_file_the_scenario_and_the_field(
        compared, tmp_path, edit, field):
    """It failed the render with a bare TypeError or AttributeError naming no field; a check's `ok` of "no" hid the
    failed check. JUnit refuses such a field too; the page is never written from it."""
    source, victim = edited_report(compared, tmp_path, lambda report, failed: edit(failed))
    proc = parity("report", source, "--html", tmp_path / "out.html", check=2)
    assert str(source) in proc.stderr and f"scenario '{victim}': {field}" in proc.stderr, proc.stderr
    assert not (tmp_path / "out.html").exists()


def test_a_report_whose_durations_are_not_numbers_is_an_error_naming_the_field(compared, tmp_path):
    source, _ = edited_report(compared, tmp_path, lambda report, failed: report.update(seconds="0.5"))
    proc = parity("report", source, "--html", tmp_path / "out.html", check=2)
    assert str(source) in proc.stderr and "the report's seconds is a string, not a number" in proc.stderr, proc.stderr


def first_failed_layout(scenario):
    return next(c for c in scenario["checks"] if c["check"] == "layout" and not c["ok"])


@pytest.mark.parametrize("edit, field", [
    (lambda s: first_failed_layout(s)["details"]["table"].update(gold="C"), "checks[0].details.table.gold is a string, "
                                                                            "not an object"),
    (lambda s: first_failed_layout(s)["details"]["table"].update(candidate=[1]), "checks[0].details.table.candidate "
                                                                                 "is an array, not an object"),
    (lambda s: first_failed_layout(s)["details"].update(table=["C", "F"]), "checks[0].details.table is an array, not "
                                                                           "an object"),
    (lambda s: first_failed_layout(s)["details"].update(difference="d1"), "checks[0].details.xfail is absent, not a "
                                                                          "string"),
    (lambda s: first_failed_layout(s)["details"].update(difference=3, xfail="why"), "checks[0].details.difference is "
                                                                                    "a number, not a string"),
])
def test_a_layout_check_detail_of_the_wrong_type_is_an_error_naming_the_scenario_and_the_field(
        compared, tmp_path, edit, field):
    """A side-by-side table whose side was a string or a list failed the render with a bare AttributeError ('str'
    object has no attribute 'get'); a table that was no object was dropped, and the failure's facts with it."""
    source, victim = edited_report(compared, tmp_path, lambda report, failed: edit(failed), failing="layout")
    proc = parity("report", source, "--html", tmp_path / "out.html", check=2)
    assert str(source) in proc.stderr and f"scenario '{victim}': {field}" in proc.stderr, proc.stderr
    assert not (tmp_path / "out.html").exists()


DIFFERENCE = {"id": "d1", "check": "values", "reason": "why", "checks_explained": 1, "scenarios_explained": 1}


@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(policy="exact"), "the report's policy is a string, not an object"),
    (lambda r: r.update(differences="d1"), "the report's differences is a string, not an array"),
    (lambda r: r.update(differences=[DIFFERENCE, 7]), "the report's differences[1] is a number, not an object"),
    (lambda r: r.update(differences=[{**DIFFERENCE, "reason": ["a"]}]), "the report's differences[0].reason is an "
                                                                        "array, not a string"),
    (lambda r: r.update(differences=[{**DIFFERENCE, "checks_explained": None}]), "the report's "
                                                                                 "differences[0].checks_explained is "
                                                                                 "absent, not a number"),
])
def test_a_report_field_of_the_wrong_type_is_an_error_naming_the_field(compared, tmp_path, edit, field):
    """A run's policy that was a string, or a declared difference that was no object or lacked its counts, failed the
    render with a bare jinja2 UndefinedError ('str object' has no attribute 'items')."""
    source, _ = edited_report(compared, tmp_path, lambda report, failed: edit(report))
    proc = parity("report", source, "--html", tmp_path / "out.html", check=2)
    assert str(source) in proc.stderr and field in proc.stderr, proc.stderr
    assert not (tmp_path / "out.html").exists()


BASELINE = {"file": "b.json", "started": "2020-01-01T00:00:00Z", "parity": "0.1.0",
            "candidate": {"name": "x", "version": "1"}, "summary": {"fail": 1}}


@pytest.mark.parametrize("edit", [
    lambda r, s: s.update(trend={"mark": ["new"], "since": None, "history": ["fail", "fail"]}),
    lambda r, s: r["baselines"][0].update(candidate="x 1"),
    lambda r, s: r["baselines"][0].update(summary=[1]),
    lambda r, s: r["baselines"][0].update(summary={"fail": "1"}),
    lambda r, s: r.update(gone=7),
], ids=["trend.mark", "baseline.candidate", "baseline.summary", "baseline.summary.fail", "gone"])
def test_a_mistyped_trend_field_is_rendered_without_it(compared, tmp_path, edit):
    """The trends are a decoration, handled leniently as before (a mark of another type is no mark, a baseline's
    candidate or counts of another type are blank): they failed the render with a bare TypeError or AttributeError."""
    def with_trends(report, failed):
        report["baselines"] = [json.loads(json.dumps(BASELINE))]
        failed["trend"] = {"mark": "new", "since": None, "history": ["pass", "fail"]}
        edit(report, failed)
    source, victim = edited_report(compared, tmp_path, with_trends)
    parity("report", source, "--html", tmp_path / "out.html", check=0)
    assert f'data-id="{victim}"' in (tmp_path / "out.html").read_text()
