"""The HTML report in a real browser: Debian's chromium, driven by playwright, loads a report of a run with passes,
failures of several checks, an error, an xfail and a skip, and the tests assert on the rendered page."""
import json
import os
import shutil
from pathlib import Path

import pytest

import demo_run
from demo_run import CHROMIUM, CHROMIUM_ARGS

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
# Where the screenshot goes for CI to keep (scripts/test.sh sets it; README "Tests").
ARTIFACTS = Path(os.environ.get("PARITY_ARTIFACTS", REPO / "build" / "artifacts"))

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (scripts/setup.sh installs it)")
if not Path(CHROMIUM).is_file():
    pytest.skip(f"no chromium at {CHROMIUM} (scripts/setup.sh installs Debian's chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A compare of gold against tests/e2e/report/mixed.py: (the JSON, the HTML file)."""
    out = demo_run.compare_demo(BIN, tmp_path_factory.mktemp("html"))
    return json.loads((out / "report.json").read_text()), out / "report.html"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, report):
    """The report loaded, with every request the page makes recorded and every console error collected."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.requests, page.errors = [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("console", lambda message: message.type == "error" and page.errors.append(message.text))
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(report[1].as_uri())
    yield page
    context.close()


def visible_ids(page):
    return page.eval_on_selector_all("#scenarios > tbody:not([hidden])", "groups => groups.map(g => g.dataset.id)")


def test_the_page_is_self_contained_and_runs_without_errors(page, report):
    assert page.requests == [report[1].as_uri()], "the page fetched something besides itself"
    assert page.errors == []


def test_header_counts_backends_and_environment_match_the_json(page, report):
    data, _ = report
    for status, n in data["summary"].items():
        assert page.inner_text(f"#count-{status}") == str(n), status
    header = page.inner_text("header")
    for side in ("gold", "candidate"):
        assert data[side]["backend"]["version"] in header
    env = data["candidate"]["environment"]
    assert f"Python {env['python']}" in header and f"NumPy {env['numpy']}" in header and env["platform"] in header
    assert data["started"] in header
    bars = page.eval_on_selector_all("#chart-check .bar", "bars => bars.map(b => [b.dataset.filterCheck, b.querySelector('.n').textContent])")
    assert dict(bars) == {"values": "2", "layout": "1", "dtype": "1", "error": "1"}


def test_failures_come_first(page, report):
    statuses = page.eval_on_selector_all("#scenarios > tbody", "groups => groups.map(g => g.dataset.status)")
    assert len(statuses) == report[0]["summary"]["total"]
    failing = sum(s in ("fail", "error", "xpass") for s in statuses)
    assert set(statuses[:failing]) <= {"fail", "error", "xpass"} and statuses[-1] == "pass"


def test_filters_hide_rows(page, report):
    total = report[0]["summary"]["total"]
    page.select_option("#filter-status", "fail")
    assert len(visible_ids(page)) == report[0]["summary"]["fail"] < total
    assert page.inner_text("#shown") == f"{report[0]['summary']['fail']} of {total} scenarios shown"
    page.select_option("#filter-status", "all")
    page.select_option("#filter-check", "layout")
    assert visible_ids(page) == ["report_demo.fortran_order"]
    page.select_option("#filter-check", "")
    page.select_option("#filter-tag", "ipc")
    assert visible_ids(page) == ["report_demo.zeroed_block_2d"]
    page.select_option("#filter-tag", "")
    page.fill("#filter-text", "BYTE_order")
    page.wait_for_function("document.querySelector('#shown').textContent.startsWith('1 of')")
    assert visible_ids(page) == ["report_demo.byte_order"]
    page.fill("#filter-text", "")
    page.click("#chart-check .bar[data-filter-check='values']")
    assert sorted(visible_ids(page)) == ["report_demo.strip_1d", "report_demo.zeroed_block_2d"]


def test_sorting_by_time(page):
    page.click("#sort-time")
    times = page.eval_on_selector_all("#scenarios > tbody", "groups => groups.map(g => Number(g.dataset.time))")
    assert times == sorted(times, reverse=True)
    page.click("#sort-time")
    times = page.eval_on_selector_all("#scenarios > tbody", "groups => groups.map(g => Number(g.dataset.time))")
    assert times == sorted(times)


def expand(page, scenario_id):
    group = page.locator(f"#scenarios > tbody[data-id='{scenario_id}']")
    group.locator("button.toggle").click()
    detail = group.locator("tr.detail")
    assert detail.is_visible()
    return detail


def test_an_expanded_values_failure_shows_statistics_mismatches_and_where_they_are(page, report):
    detail = expand(page, "report_demo.zeroed_block_2d")
    text = detail.inner_text()
    assert "600 / 3600 (16.7%)" in text
    assert "[20, 0]" in text and "1801.0" in text, "the first mismatch, with both values"
    assert "max absolute difference" in text
    hits = detail.locator(".map rect.hit")
    assert hits.count() > 0, "the 2-D output has a heat map of where its mismatches are"
    assert "Where the 600 mismatches are in the 40×90 array" in text
    strip = expand(page, "report_demo.strip_1d")
    assert strip.locator(".map rect.hit").count() == 8, "a strip for the 1-D output: 8 lone mismatches, 8 cells"


def test_an_expanded_layout_failure_shows_both_sides_and_an_error_its_traceback(page):
    detail = expand(page, "report_demo.fortran_order")
    differs = detail.locator("table.facts tr.differs th").all_inner_texts()
    assert differs == ["strides", "c_contiguous", "f_contiguous"]
    error = expand(page, "report_demo.candidate_raises")
    traceback = error.locator("pre.traceback").inner_text()
    assert "Traceback (most recent call last)" in traceback and "RuntimeError" in traceback
    assert "</script><b>not bold</b>" in traceback, "markup in a message is shown as text"
    assert error.locator("b").count() == 0


def test_expanded_xfail_and_skip_say_why(page):
    assert "expected: the candidate rounds differently, tracked upstream" in expand(page, "report_demo.known_difference").inner_text()
    assert "needs a GPU" in expand(page, "report_demo.not_here").inner_text()


def test_the_repro_copy_button_copies_the_command(page, report):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    detail = expand(page, "report_demo.byte_order")
    detail.locator("button.copy").click()
    repro = next(s["repro"] for s in report[0]["scenarios"] if s["id"] == "report_demo.byte_order")
    assert page.evaluate("navigator.clipboard.readText()") == repro
    assert detail.locator("button.copy").inner_text() == "Copied"


@pytest.fixture
def trend_page(browser, report, tmp_path):
    """The same report rendered again against two baselines made from it: in the latest, strip_1d passed (a new
    failure now) and passes[n=3] failed (fixed now); the older is the report itself, a day earlier."""
    data, html = report
    older, latest = json.loads(json.dumps(data)), json.loads(json.dumps(data))
    older["started"], latest["started"] = "2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z"
    for s in latest["scenarios"]:
        s["status"] = {"report_demo.strip_1d": "pass", "report_demo.passes[n=3]": "fail"}.get(s["id"], s["status"])
    for name, doc in (("older.json", older), ("latest.json", latest)):
        (tmp_path / name).write_text(json.dumps(doc))
    demo_run.parity(BIN, "report", html.with_suffix(".json"), "--html", tmp_path / "trends.html", "--baseline",
                    tmp_path / "latest.json", "--baseline", tmp_path / "older.json", check=0)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto((tmp_path / "trends.html").as_uri())
    yield page
    context.close()


def test_the_new_failures_filter_and_the_history(trend_page, report):
    page = trend_page
    assert page.inner_text("#count-trend-new") == "1"
    page.click("#trend-counts button[data-trend='new']")
    assert visible_ids(page) == ["report_demo.strip_1d"]
    assert page.input_value("#filter-trend") == "new"
    page.select_option("#filter-trend", "fixed")
    assert visible_ids(page) == ["report_demo.passes[n=3]"], "a fixed scenario passes: the status filter allows it"
    page.select_option("#filter-status", "error")
    page.select_option("#filter-trend", "still-failing")
    assert visible_ids(page) == ["report_demo.candidate_raises"], "the trend and status filters combine"
    page.select_option("#filter-trend", "")
    page.select_option("#filter-status", "all")
    assert len(visible_ids(page)) == report[0]["summary"]["total"]
    squares = page.eval_on_selector_all("tbody[data-id='report_demo.strip_1d'] .history .sq",
                                        "squares => squares.map(q => q.title)")
    assert squares == ["2020-01-01T00:00:00Z: fail", "2020-01-02T00:00:00Z: pass",
                       f"now, {report[0]['started']}: fail"], "oldest to newest, each titled by its date"
    badge = page.inner_text("tbody[data-id='report_demo.fortran_order'] .trend")
    assert badge == "still failing since 2020-01-01"


def test_screenshot_for_ci(page):
    """Not an assertion on pixels: the picture CI keeps so that a person can look at the page (build/artifacts)."""
    for scenario_id in ("report_demo.zeroed_block_2d", "report_demo.fortran_order", "report_demo.candidate_raises"):
        expand(page, scenario_id)
    page.evaluate("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "html-report.png"
    page.screenshot(path=shot, full_page=True)
    assert shot.stat().st_size > 10_000
    shutil.copy(page.url.removeprefix("file://"), ARTIFACTS / "html-report.html")
