"""End-to-end tests of a backend's DIFFERENCES: what they explain, what stays red, stale and malformed ones."""
import json
import os
from pathlib import Path

import pytest

import demo_run

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))

SCENARIOS = '''
import parity


@parity.scenario
def transposed(xp):
    return {"t": xp.arange(6.0).reshape(2, 3).T}


@parity.scenario
def determinant(xp):
    return {"det": xp.linalg.det(xp.eye(2))}


@parity.scenario
def ones(xp):
    return {"v": xp.ones(3)}


@parity.scenario
def plain(xp):
    return {"x": xp.arange(3)}
'''

# Like dask: results come back as new C-contiguous arrays, and its linalg lacks det. Its `ones` is wrong, which no
# declaration explains.
BACKEND = '''
import types

import numpy

DIFFERENCES = [
    {"id": "fresh-c-contiguous", "check": "layout", "match": {"details.table.candidate.c_contiguous": True},
     "reason": "every result is computed into a new C-contiguous array"},
    {"id": "no-linalg-det", "check": "error",
     "match": {"details.type": "AttributeError", "details.message": "*has no attribute 'det'"},
     "reason": "its linalg has no det"},
]


class _Namespace:
    linalg = types.SimpleNamespace(eye=numpy.eye)

    def __getattr__(self, name):
        return numpy.zeros if name == "ones" else getattr(numpy, name)


def namespace():
    return _Namespace()


def materialize(obj):
    return {k: numpy.ascontiguousarray(v) for k, v in obj.items()}
'''


def parity(*args, check):
    return demo_run.parity(BIN, *args, check=check)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(tmp, gold results, candidate results, candidate backend file) for the four scenarios above."""
    tmp = tmp_path_factory.mktemp("differences")
    (tmp / "scenarios").mkdir()
    (tmp / "scenarios" / "declared.py").write_text(SCENARIOS)
    backend = tmp / "like_dask.py"
    backend.write_text(BACKEND)
    for name, spec in (("gold", "gold"), ("cand", str(backend))):
        parity("run", "--backend", spec, "--scenarios", tmp / "scenarios", "--out", tmp / name, "-q", check=None)
    return tmp, tmp / "gold", tmp / "cand", backend


def compare(runs, *extra, check):
    tmp, gold, cand, _ = runs
    report = tmp / "report.json"
    proc = parity("compare", gold, cand, "--json", report, "--html", tmp / "report.html", *extra, check=check)
    return proc, json.loads(report.read_text())


def test_declared_differences_explain_their_failures_and_the_rest_stays_red(runs):
    proc, report = compare(runs, "--strict-differences", check=1)
    status = {s["id"]: s for s in report["scenarios"]}
    assert status["declared.transposed"]["status"] == "xfail"
    assert status["declared.transposed"]["message"] == \
        "declared differences of the candidate: fresh-c-contiguous (layout)"
    assert status["declared.determinant"]["status"] == "xfail"  # the candidate's run raised, as declared
    assert status["declared.plain"]["status"] == "pass"
    assert status["declared.ones"]["status"] == "fail"  # wrong values: nothing declared explains them
    layout = next(c for c in status["declared.transposed"]["checks"] if not c["ok"])
    assert layout["details"]["difference"] == "fresh-c-contiguous"
    assert layout["details"]["xfail"] == "every result is computed into a new C-contiguous array"
    used = {d["id"]: (d["checks_explained"], d["scenarios_explained"]) for d in report["differences"]}
    assert used == {"fresh-c-contiguous": (1, 1), "no-linalg-det": (1, 1)}
    assert report["strict_differences"] is True
    assert "explained no failure" not in proc.stderr


def test_the_html_report_lists_the_declarations_and_marks_explained_checks(runs):
    compare(runs, check=1)
    html = (runs[0] / "report.html").read_text()
    assert 'class="difference" data-id="fresh-c-contiguous"' in html
    assert "declared difference <code>fresh-c-contiguous</code>" in html
    assert "stale" not in html.split('id="differences"')[1].split("</details>")[0].replace("class=\"difference\"", "")


def test_a_declaration_that_explains_nothing_fails_only_a_strict_compare(runs):
    only = ("--only", "declared.transposed")
    proc, report = compare(runs, *only, check=0)
    assert "note: 1 declared difference explained no failure in this run: no-linalg-det" in proc.stderr
    assert {d["id"]: d["checks_explained"] for d in report["differences"]}["no-linalg-det"] == 0
    proc, _ = compare(runs, *only, "--strict-differences", check=1)
    assert "failed: 1 declared difference explained no failure in this run: no-linalg-det" in proc.stderr
    assert "remove them from its DIFFERENCES" in proc.stderr
    assert 'class="difference stale" data-id="no-linalg-det"' in (runs[0] / "report.html").read_text()


@pytest.mark.parametrize("entry, message", [
    ({"id": "x", "check": "fidelity", "reason": "r"}, "check 'fidelity' cannot be declared"),
    ({"id": "x", "check": "layout"}, "needs a non-empty string 'reason'"),
    ({"id": "No Spaces", "check": "layout", "reason": "r"}, "id 'No Spaces' is not lowercase words joined by '-'"),
    ({"id": "x", "check": "layout", "reason": "r", "when": {}}, "has unknown keys ['when']"),
    ({"id": "x", "check": "layout", "reason": "r", "match": {"path": {"a": 1}}}, "match must be a dict of dotted keys"),
    ({"id": "fresh-c-contiguous", "check": "layout", "reason": "r"}, "repeats the id 'fresh-c-contiguous'"),
])
def test_a_malformed_declaration_stops_the_run_naming_it(runs, tmp_path, entry, message):
    backend = tmp_path / "malformed.py"
    backend.write_text(runs[3].read_text() + f"\nDIFFERENCES = DIFFERENCES[:1] + [{entry!r}]\n")
    proc = parity("run", "--backend", backend, "--scenarios", runs[0] / "scenarios", "--out", tmp_path / "x",
                  check=2)
    assert f"backend '{backend}': DIFFERENCES[1] {message}" in proc.stderr


def test_compare_refuses_a_manifest_with_a_malformed_declaration_naming_the_file(runs, tmp_path):
    _, gold, cand, _ = runs
    edited = tmp_path / "edited"
    edited.mkdir()
    for item in cand.iterdir():
        (edited / item.name).symlink_to(item)
    manifest = json.loads((cand / "manifest.json").read_text())
    manifest["backend"]["differences"].append({"id": "mine", "check": "missing", "reason": "r"})
    (edited / "manifest.json").unlink()
    (edited / "manifest.json").write_text(json.dumps(manifest))
    proc = parity("compare", gold, edited, check=2)
    assert f"{edited / 'manifest.json'}: backend.differences[2] ('mine') cannot declare check 'missing'" in proc.stderr
