"""Times the HTML report at nightly scale: render with `parity report`, then load, filter, sort and expand in chromium.

A real compare of gold against tests/e2e/report/mixed.py is replicated to N scenarios (default 5,000), with a
share of them failing; the page is rendered from that JSON and opened in Debian's chromium through playwright.
Figures are printed, never asserted (see bench/README.md, "html_report_bench").

  .venv/bin/python bench/html_report_bench.py [--scenarios N] [--failing 0.05,1.0] [--repeat 3] [--keep DIR]
"""
import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
sys.path.insert(0, str(REPO / "tests" / "e2e" / "report"))
import demo_run  # noqa: E402
from demo_run import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

try:
    from playwright.sync_api import sync_playwright
except ImportError:
    sync_playwright = None
NEXT_FRAME = "() => new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)))"


def demo_report(tmp: Path) -> dict:
    return json.loads((demo_run.compare_demo(BIN, tmp) / "report.json").read_text())


def scaled(report: dict, n: int, failing: float) -> dict:
    """`report` with n scenarios, a `failing` share of them copies of its non-passing ones."""
    bad = [s for s in report["scenarios"] if s["status"] != "pass"]
    good = [s for s in report["scenarios"] if s["status"] == "pass"]
    out = dict(report, scenarios=[])
    for i in range(n):
        pool = bad if int((i + 1) * failing) > int(i * failing) else good  # spread evenly, exactly the share
        s = copy.deepcopy(pool[i % len(pool)])
        s["id"] = f"{s['id']}_{i}"
        out["scenarios"].append(s)
    counts = {k: 0 for k in ("pass", "fail", "error", "xfail", "xpass", "skip")}
    for s in out["scenarios"]:
        counts[s["status"]] += 1
    out["summary"] = dict(counts, total=n)
    return out


def timed(page, action) -> float:
    start = time.perf_counter()
    action()
    page.evaluate(NEXT_FRAME)
    return time.perf_counter() - start


def type_filter(page, text):
    """Types into the text filter and waits for the count to change (it includes the filter's 120 ms debounce)."""
    before = page.inner_text("#shown")
    page.fill("#filter-text", text)
    page.wait_for_function(f"document.querySelector('#shown').textContent !== {json.dumps(before)}")


def browse(browser, html: Path) -> dict:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    load = timed(page, lambda: page.goto(html.as_uri(), wait_until="load"))
    figures = {
        "load": load,
        "filter": timed(page, lambda: page.select_option("#filter-status", "failing")),
        "text filter": timed(page, lambda: type_filter(page, "zeroed")),
        "sort": timed(page, lambda: page.click("#sort-time")),
        "expand": timed(page, lambda: page.locator("#scenarios > tbody:not([hidden]) button.toggle").first.click()),
    }
    page.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=5000)
    parser.add_argument("--failing", default="0.05,1.0", help="failing shares to try, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="loads of each page; the median is printed")
    parser.add_argument("--keep", type=Path, help="keep the JSON and HTML files in this directory")
    args = parser.parse_args()
    if sync_playwright is None or not Path(CHROMIUM).is_file():
        print(f"html_report_bench: skipped: needs playwright and chromium at {CHROMIUM} (scripts/setup.sh)")
        return 77
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        demo = demo_report(tmp)
        print(f"html_report_bench: {args.scenarios} scenarios, chromium {CHROMIUM}, median of {args.repeat} loads")
        print(f"{'failing':>8} {'JSON MB':>8} {'HTML MB':>8} {'render s':>9} {'load s':>7} {'filter s':>9}"
              f" {'text s':>7} {'sort s':>7} {'expand s':>9}")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for share in (float(x) for x in args.failing.split(",")):
                source, html = tmp / f"report-{share}.json", tmp / f"report-{share}.html"
                source.write_text(json.dumps(scaled(demo, args.scenarios, share)))
                start = time.perf_counter()
                rendered = demo_run.parity(BIN, "report", source, "--html", html)
                render = time.perf_counter() - start
                if rendered.returncode != 0:
                    print(rendered.stderr, file=sys.stderr)
                    return 1
                runs = [browse(browser, html) for _ in range(args.repeat)]
                med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                print(f"{share:>8.2f} {source.stat().st_size / 1e6:>8.1f} {html.stat().st_size / 1e6:>8.1f}"
                      f" {render:>9.2f} {med['load']:>7.2f} {med['filter']:>9.2f} {med['text filter']:>7.2f}"
                      f" {med['sort']:>7.2f} {med['expand']:>9.2f}")
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
