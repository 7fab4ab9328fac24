"""Renders the compare JSON (docs/report-json.md) as one self-contained HTML page through a Jinja2 template.

The C++ writer (src/parity/report/html_report.cc) calls `render`; the template is reports/templates/report.html.j2.
Everything the page shows comes from the JSON, so `parity report` can re-render a report without re-running it.
"""
import json
from collections import Counter

import jinja2

from parity.statuses import FAILING, STATUS_ORDER
# Checks whose details carry a side-by-side `table` of both arrays' facts (src/parity/compare/tree_walk.cc, expect_array).
FACT_ROWS = ("dtype", "shape", "strides", "c_contiguous", "f_contiguous", "writeable", "aligned", "type", "memmap",
             "attributes")
# Trend marks (docs/report-json.md, "Trends") that filter the table, with their labels.
TREND_MARKS = (("new", "new failures"), ("still-failing", "still failing"), ("fixed", "fixed"))
# Mismatch-map colours, lightest to darkest; a cell's level is its fraction of mismatched elements, rounded up.
MAP_LEVELS = ("#eeeeee", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#67000d")


def _fact_rows(table: dict) -> list:
    """[(fact, gold, candidate, differs)] for a layout-class check's side-by-side table."""
    gold, cand = table.get("gold", {}), table.get("candidate", {})
    names = [n for n in FACT_ROWS if n in gold or n in cand]
    names += sorted((set(gold) | set(cand)) - set(FACT_ROWS))
    cell = lambda v: ("yes" if v else "no") if isinstance(v, bool) else ("" if v is None else str(v))  # noqa: E731
    return [(n, cell(gold.get(n)), cell(cand.get(n)), gold.get(n) != cand.get(n)) for n in names]


def _counts(value, length=None) -> bool:
    """Whether `value` is a list of whole numbers >= 0 (of `length` items when given)."""
    return (isinstance(value, list) and (length is None or len(value) == length)
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value))


def _drawable_map(grid_map: dict) -> bool:
    """Whether a mismatch map's grid has one count and size per cell: a report is data from elsewhere, and a grid
    like [10**18, 0] would otherwise be walked row by row."""
    grid = grid_map.get("grid")
    if not _counts(grid) or len(grid) not in (1, 2):
        return False
    cells = grid[0] * (grid[1] if len(grid) == 2 else 1)
    return (cells > 0 and _counts(grid_map.get("counts"), cells) and _counts(grid_map.get("sizes"), cells)
            and isinstance(grid_map.get("shape"), list))


def _map_runs(grid_map: dict) -> dict:
    """The mismatch map as rectangles: runs of equal colour along each row, so the SVG stays small."""
    grid = grid_map["grid"]
    rows, cols = (1, grid[0]) if len(grid) == 1 else (grid[0], grid[1])
    counts, sizes = grid_map["counts"], grid_map["sizes"]
    level = lambda k: _level(counts[k], sizes[k])  # noqa: E731
    runs = []
    for r in range(rows):
        col = 0
        while col < cols:
            first = r * cols + col
            end = col + 1
            while end < cols and level(r * cols + end) == level(first):
                end += 1
            span = range(first, r * cols + end)
            runs.append({"row": r, "col": col, "width": end - col, "colour": MAP_LEVELS[level(first)],
                         "mismatched": sum(counts[i] for i in span), "elements": sum(sizes[i] for i in span)})
            col = end
    return {"rows": rows, "cols": cols, "runs": runs, "shape": grid_map["shape"],
            "mismatched": sum(counts), "levels": MAP_LEVELS}


def _level(count: int, size: int) -> int:
    if count == 0 or size == 0:
        return 0
    return min(len(MAP_LEVELS) - 1, -(-count * (len(MAP_LEVELS) - 1) // size))


def _check_view(check: dict) -> dict:
    details = check.get("details") or {}
    message = check.get("message") or ""
    view = {"check": check["check"], "path": check.get("path") or "", "message": message, "details": details,
            "headline": message.split("\n", 1)[0], "facts": None, "map": None}
    if isinstance(details.get("table"), dict):
        view["facts"] = _fact_rows(details["table"])
    if isinstance(details.get("map"), dict) and _drawable_map(details["map"]):
        view["map"] = _map_runs(details["map"])
    return view


def _object(value) -> dict:
    """`value` when it is a JSON object, else {}: the trends are a decoration, shown without what is mistyped."""
    return value if isinstance(value, dict) else {}


def _array(value) -> list:
    """`value` when it is a JSON array, else [] (as _object)."""
    return value if isinstance(value, list) else []


def _trend_view(trend, dates: list) -> dict:
    """A scenario's mark as a badge (label, title) and its history as squares, oldest first, each titled by date."""
    trend = _object(trend)
    # A mark of another type is no mark: a list one failed the render as a key of the labels and of the counts.
    mark = trend["mark"] if isinstance(trend.get("mark"), str) else ""
    since = str(trend.get("since") or "?")
    label = {"new": "new failure", "still-failing": f"still failing since {since[:10]}", "fixed": "fixed",
             "gone": f"gone, failing since {since[:10]}"}.get(mark, mark)
    title = {"new": "failing now, not in the latest baseline",
             "still-failing": f"failing in every baseline since the one started {since}, and now",
             "fixed": "failing in the latest baseline, not now",
             "gone": f"failing in every baseline since the one started {since}, and not in this compare"}.get(mark, "")
    history = _array(trend.get("history"))
    squares = [{"status": str(status), "title": f"{'now, ' if n == len(dates) - 1 else ''}{when}: {status}"}
               for n, (status, when) in enumerate(zip(history, dates))]
    return {"mark": mark, "label": label, "title": title, "squares": squares}


def _trends_view(report: dict):
    """The header's trends: counts, the baselines (their candidate versions) and the failures gone; None without."""
    baselines = report.get("baselines")
    if not isinstance(baselines, list) or not baselines:
        return None
    baselines = [b for b in baselines if isinstance(b, dict)]
    dates = [str(b.get("started", "?")) for b in baselines] + [str(report.get("started", "?"))]
    gone = [g for g in _array(report.get("gone")) if isinstance(g, dict)]
    return {
        "dates": dates, "history": len(baselines) > 1,
        "baselines": [{"file": b.get("file", ""), "started": b.get("started", "?"), "parity": b.get("parity", "?"),
                       "candidate": " ".join(str(_object(b.get("candidate")).get(k, "")) for k in ("name", "version")),
                       "failing": _failing(_object(b.get("summary")))}
                      for b in baselines],
        "gone": [{"id": str(g.get("id", "")), "trend": _trend_view(g.get("trend"), dates)} for g in gone],
    }


def _failing(summary: dict) -> int:
    """A baseline's failing scenarios by its summary, whose counts that are no numbers count for none."""
    return sum(n for n in (summary.get(status) for status in FAILING) if _is(n, NUMBER))


def coverage_note(coverage) -> str:
    """"values covered 2 of 5 leaves" when values covered fewer leaves than the scenario's `coverage` counts, else ""
    (src/parity/compare/compare.cc's coverage_note, which the terminal and JUnit use, says the same)."""
    if not isinstance(coverage, dict) or type(coverage.get("leaves")) is not int:
        return ""
    checks = coverage.get("checks") if isinstance(coverage.get("checks"), dict) else {}
    covered = checks.get("values", 0) if type(checks.get("values", 0)) is int else 0
    return f"values covered {covered} of {coverage['leaves']} leaves" if covered < coverage["leaves"] else ""


def _scenario_view(s: dict, dates: list) -> dict:
    failed = [c for c in s.get("checks") or [] if c.get("ok") is not True]
    seconds = s.get("seconds") or {}
    return {
        "id": s["id"], "status": s["status"], "message": s.get("message") or "",
        "tags": s.get("tags") or [], "source": s.get("source") or "", "repro": s.get("repro") or "",
        "policy": s.get("policy"), "params": s.get("params") or {}, "coverage": coverage_note(s.get("coverage")),
        "failed_checks": list(dict.fromkeys(c["check"] for c in failed)),
        "checks": [_check_view(c) for c in failed],
        "seconds": sum(v for v in seconds.values() if isinstance(v, (int, float))), "seconds_by_pass": seconds,
        "rank": STATUS_ORDER.index(s["status"]) if s["status"] in STATUS_ORDER else len(STATUS_ORDER),
        "trend": _trend_view(s.get("trend"), dates),
    }


def _status_counts(scenarios: list) -> dict:
    """The header's counts, {"total": n, status: n}, of the scenarios the page shows. Never the report's `summary`: a
    report is data from elsewhere, and one whose summary said "0 failing" while scenarios failed had a green header
    (JUnit and merge count the scenarios too)."""
    counts = Counter(v["status"] for v in scenarios)
    return {"total": len(scenarios), **{status: counts[status] for status in STATUS_ORDER}}


def _trend_counts(scenarios: list) -> list:
    """[(mark, label, n)] of the scenarios' own marks, not the report's `trend_summary`, as _status_counts."""
    marks = Counter(v["trend"]["mark"] for v in scenarios)
    return [(mark, label, marks[mark]) for mark, label in TREND_MARKS]


def _bars(counter: Counter) -> list:
    """[(label, count, percent of the largest)] largest first, for the header's bar charts."""
    top = max(counter.values(), default=0)
    return [(label, n, 100.0 * n / top) for label, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]


REQUIRED = {"gold": dict, "candidate": dict, "summary": dict, "scenarios": list}
NUMBER = (int, float)
# The types of the fields the page shows of a scenario, of each of its checks and of a values check's details, where
# present and not null (docs/report-json.md). A report is data from elsewhere: a field of another type failed the
# render with a bare TypeError naming no field, and a check's `ok` of "no" hid a failed check. JUnit refuses a
# mistyped field too; an absent one takes its default, as in a report of an older parity.
SCENARIO_FIELDS = {"message": str, "checks": list, "tags": list, "params": dict, "policy": dict, "source": str,
                   "repro": str, "seconds": dict}
CHECK_FIELDS = {"check": str, "ok": bool, "path": str, "message": str, "details": dict}
# Any check's details: the side-by-side table of a layout-class check (a missing one falls back to the message) and
# the declared difference that explains a failure, with its reason (compare writes both).
CHECK_DETAILS = {"table": dict, "difference": str, "xfail": str}
TABLE_SIDES = {"gold": dict, "candidate": dict}
VALUES_DETAILS = {"percent": NUMBER, "max_abs_diff": NUMBER, "max_rel_diff": NUMBER, "first": list,
                  "first_nonfinite": list}
# The header's run policies and the declared differences, each of which the page lists with its counts.
REPORT_FIELDS = {"policy": dict, "differences": list}
DIFFERENCE_FIELDS = {"id": str, "check": str, "reason": str, "checks_explained": NUMBER, "scenarios_explained": NUMBER}
# JSON's words for each type, for messages that speak the report's language.
JSON_WORDS = ((bool, "true or false"), (str, "a string"), (NUMBER, "a number"), (list, "an array"),
              (dict, "an object"))


def _validate(report) -> None:
    """A clear complaint about a JSON that is not a whole compare report, instead of a template error."""
    if not isinstance(report, dict):
        raise ValueError("the report is not a JSON object")
    for key, kind in REQUIRED.items():
        if not isinstance(report.get(key), kind):
            raise ValueError(f"the report has no {key!r} {kind.__name__}: is it the JSON 'parity compare --json' wrote?")
    _validate_times(report)
    _expect_fields(report, REPORT_FIELDS, "the report's ")
    _validate_differences(report.get("differences"))
    for n, s in enumerate(report["scenarios"]):
        if not isinstance(s, dict) or not isinstance(s.get("id"), str) or not isinstance(s.get("status"), str):
            raise ValueError(f"scenario #{n} of the report has no string 'id' and 'status'")
        _validate_scenario(s)


def _is(value, kind) -> bool:
    """Whether `value` is of `kind`; as in JSON, true and false are no numbers."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _expect(value, kind, where: str) -> None:
    if not _is(value, kind):
        got = "absent" if value is None else next(word for k, word in JSON_WORDS if _is(value, k))
        raise ValueError(f"{where} is {got}, not {dict(JSON_WORDS)[kind]}")


def _expect_fields(obj: dict, fields: dict, where: str) -> None:
    for key, kind in fields.items():
        if obj.get(key) is not None:
            _expect(obj[key], kind, f"{where}{key}")


def _expect_items(items, kind, where: str) -> None:
    for n, item in enumerate(items or []):
        _expect(item, kind, f"{where}[{n}]")


def _validate_check(check, where: str) -> None:
    _expect(check, dict, where)
    _expect(check.get("check"), str, f"{where}.check")  # the one field a check cannot do without
    _expect_fields(check, CHECK_FIELDS, f"{where}.")
    details = check.get("details") or {}
    _expect_fields(details, CHECK_DETAILS, f"{where}.details.")
    _expect_fields(details.get("table") or {}, TABLE_SIDES, f"{where}.details.table.")
    if details.get("difference") is not None:
        _expect(details.get("xfail"), str, f"{where}.details.xfail")
    if check["check"] == "values":
        _expect_fields(details, VALUES_DETAILS, f"{where}.details.")
        for key in ("first", "first_nonfinite"):
            _expect_items(details.get(key), dict, f"{where}.details.{key}")


def _validate_scenario(s: dict) -> None:
    """A clear complaint naming the scenario and the field, for a field the page shows that has another type."""
    where = f"scenario {s['id']!r}: "
    _expect_fields(s, SCENARIO_FIELDS, where)
    _expect_items(s.get("tags"), str, f"{where}tags")
    for name, value in (s.get("seconds") or {}).items():
        _expect(value, NUMBER, f"{where}seconds.{name}")
    for n, check in enumerate(s.get("checks") or []):
        _validate_check(check, f"{where}checks[{n}]")


def _validate_times(report: dict) -> None:
    """The header adds up each run's seconds (its manifest's run.seconds) and the compare's: each a number if given."""
    for side in ("gold", "candidate"):
        run = report[side].get("run")
        if isinstance(run, dict) and run.get("seconds") is not None:
            _expect(run["seconds"], NUMBER, f"the report's {side}.run.seconds")
    if report.get("seconds") is not None:
        _expect(report["seconds"], NUMBER, "the report's seconds")


def _validate_differences(differences) -> None:
    """Each declared difference an object; the counts required, for a difference without them would show as stale."""
    for n, difference in enumerate(differences or []):
        where = f"the report's differences[{n}]"
        _expect(difference, dict, where)
        _expect_fields(difference, DIFFERENCE_FIELDS, f"{where}.")
        for key in ("checks_explained", "scenarios_explained"):
            _expect(difference.get(key), NUMBER, f"{where}.{key}")


def _recorded_libraries(side) -> dict:
    environment = side.get("environment") if isinstance(side, dict) else None
    libraries = environment.get("libraries") if isinstance(environment, dict) else None
    return {str(k): str(v) for k, v in libraries.items()} if isinstance(libraries, dict) else {}


def _libraries(report: dict) -> list:
    """(name, gold version, candidate version) of the libraries either run imported (manifest environment.libraries);
    "-" for a side that did not import it."""
    gold, candidate = _recorded_libraries(report.get("gold")), _recorded_libraries(report.get("candidate"))
    return [(name, gold.get(name, "-"), candidate.get(name, "-")) for name in sorted({*gold, *candidate})]


def view_model(report: dict) -> dict:
    """What the template shows, computed once here so the template only lays it out."""
    _validate(report)
    trends = _trends_view(report)
    dates = trends["dates"] if trends else []
    scenarios = sorted((_scenario_view(s, dates) for s in report.get("scenarios", [])),
                       key=lambda v: (v["rank"], v["id"]))
    failing = [v for v in scenarios if v["status"] in FAILING]
    by_check = Counter(check for v in failing for check in v["failed_checks"])
    by_tag = Counter(tag for v in failing for tag in v["tags"])
    summary = _status_counts(scenarios)
    if trends:
        trends["counts"] = _trend_counts(scenarios)
    return {
        "report": report, "scenarios": scenarios, "summary": summary,
        # timeout (compare --timeout) only when some scenario had it: the others are always shown.
        "statuses": [(status, summary.get(status, 0)) for status in STATUS_ORDER
                     if status != "timeout" or summary.get(status)],
        "failing_total": sum(summary.get(status, 0) for status in FAILING), "failing_statuses": list(FAILING),
        "by_check": _bars(by_check), "by_tag": _bars(by_tag),
        "all_checks": sorted({c for v in scenarios for c in v["failed_checks"]}),
        "all_tags": sorted({t for v in scenarios for t in v["tags"]}),
        "gold": report.get("gold", {}), "candidate": report.get("candidate", {}),
        "differences": report.get("differences", []), "strict_differences": report.get("strict_differences", False),
        "trends": trends, "libraries": _libraries(report),
        # Checks compare skipped rather than trust the results directory (README, "Safety: what parity trusts") or
        # for want of a verdict.
        "notices": [n["message"] for n in report.get("notices", []) if isinstance(n, dict)
                    and isinstance(n.get("message"), str)] if isinstance(report.get("notices"), list) else [],
    }


def _seconds(value) -> str:
    value = float(value or 0)
    if value < 1:
        return f"{value * 1e3:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    minutes, secs = divmod(int(round(value)), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"


def _index(index) -> str:
    return "[" + ", ".join(str(i) for i in index) + "]" if isinstance(index, list) else str(index)


def _difference(value) -> str:
    # JSON has no infinity: compare writes an infinite difference (a relative one against a zero gold) as null.
    return "inf" if value is None else f"{value:.6g}"


def environment(templates_dir: str) -> jinja2.Environment:
    """Autoescaping everywhere and undefined names as errors: a template typo fails the render, not the page."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["seconds"] = _seconds
    env.filters["index"] = _index
    env.filters["difference"] = _difference
    return env


def render(report_json: str, templates_dir: str) -> str:
    """The HTML page for the compare report `report_json` (a JSON text)."""
    report = json.loads(report_json)
    return environment(templates_dir).get_template("report.html.j2").render(**view_model(report))
