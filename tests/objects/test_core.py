"""Issue #17, items 1 and 2: a TYPE_MAP wrapper type is compared through its array form with every array check,
a leaf no values comparison reaches fails `uncompared`, and each scenario's coverage shows in every report."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import REPO, backend_path, checks_of, compare, failing, parity, run, run_pair

SCENARIOS = REPO / "tests" / "objects" / "core_scenarios"
MIXED, READ_ONLY = "wrapped.arrays_and_plain_values", "wrapped.read_only_array"
WRAPPED = {(MIXED, "outputs['a']"), (MIXED, "outputs['b']"), (READ_ONLY, "outputs['r']")}


@pytest.fixture(scope="module")
def compare_with(tmp_path_factory):
    """`compare_with(backend, check=...)`: gold against `backend` over this suite's scenarios, as (process, report,
    JUnit file); the backends of tests/objects/backends are trusted, so that compare may load their reducers for the
    fidelity and pickle probes. Gold runs once for the module and each backend's run and compare once, whichever tests
    read them (each a process that starts the interpreter)."""
    gold = tmp_path_factory.mktemp("core") / "gold"
    run("gold", gold, "--scenarios", SCENARIOS)
    compares = {}

    def result(backend, check):
        if backend not in compares:
            tmp = tmp_path_factory.mktemp("core")
            run(backend, tmp / "cand", "--scenarios", SCENARIOS)
            trust = ("--trust-backend", backend) if backend.endswith(".py") else ()
            compares[backend] = compare(gold, tmp / "cand", tmp, *trust)
        proc = compares[backend][0]
        assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}\n{proc.stderr}"
        return compares[backend]
    return result


def test_a_doubled_wrapper_fails_values_at_every_wrapped_output(compare_with):
    # Before issue #17 this compare exited 0: an Object leaf (the wrapper) against an Array one (gold's) "had no
    # common state to compare" (src/parity/compare/compare.cc, compare_state), and the mapped type passed `type`, so the
    # wrapper's leaves got only type, fidelity and pickle, none of which looks at values. Now its array form
    # (__array__) is recorded beside its state and checked like any array.
    _, report, _ = compare_with("broken.wrapper_values", check=1)
    assert failing(report) == {(i, "values", p) for i, p in WRAPPED}
    assert "Mismatched elements: 1 / 2" in next(c["message"] for c in checks_of(report, MIXED)
                                                 if c["path"] == "outputs['b']" and not c["ok"])


def test_a_faithful_wrapper_passes_with_every_leaf_covered_by_values(compare_with):
    _, report, junit = compare_with(backend_path("wrapper_faithful"), check=0)
    assert {s["id"]: s["status"] for s in report["scenarios"]} == {MIXED: "pass", READ_ONLY: "pass"}
    coverage = {s["id"]: s["coverage"] for s in report["scenarios"]}
    assert coverage[MIXED]["leaves"] == 4 and coverage[MIXED]["checks"]["values"] == 4
    # Every array check reached the wrapped arrays: shape, dtype (>i4 kept), layout and writeable.
    for check in ("shape", "dtype", "layout", "writeable"):
        assert coverage[MIXED]["checks"][check] == 2, check
    assert coverage[READ_ONLY]["leaves"] == 1 and coverage[READ_ONLY]["checks"]["writeable"] == 1
    assert "system-out" not in junit.read_text()


def test_a_wrapper_without_an_array_form_fails_uncompared_and_coverage_says_how_much_was_compared(compare_with):
    proc, report, junit = compare_with(backend_path("wrapper_opaque"), check=1)
    assert failing(report) == {(i, "uncompared", p) for i, p in WRAPPED}
    message = next(c["message"] for c in checks_of(report, MIXED) if c["check"] == "uncompared")
    for text in ("parity_backend_wrapper_opaque.Opaque has no array form", "to_numpy(obj)", "__array__",
                 "numpy.ndarray"):
        assert text in message, message
    coverage = {s["id"]: s["coverage"] for s in report["scenarios"]}
    assert coverage[MIXED]["leaves"] == 4
    assert coverage[MIXED]["checks"]["values"] == 2 and coverage[MIXED]["checks"]["uncompared"] == 2
    # The terminal summary and the JUnit testcase say it in words.
    assert "values covered 2 of 4 leaves" in proc.stdout + proc.stderr
    cases = {tc.get("name"): tc for tc in ET.parse(junit).getroot().iter("testcase")}
    outs = {name: tc.findtext("system-out") for name, tc in cases.items()}
    assert "values covered 2 of 4 leaves" in outs.values() and "values covered 0 of 1 leaves" in outs.values()


def test_the_html_report_shows_the_coverage_gap(compare_with, tmp_path):
    _, _, junit = compare_with(backend_path("wrapper_opaque"), check=1)
    html = tmp_path / "report.html"
    parity("report", junit.with_suffix(".json"), "--html", html, check=0)
    assert "values covered 2 of 4 leaves" in html.read_text()


def test_array_form_tries_the_backend_hook_then_dunder_array_then_dlpack(monkeypatch):
    from parity import reducers

    class ByArray:
        def __array__(self, dtype=None, copy=None):
            return np.arange(3.0)

    class ByDLPack:
        def __dlpack__(self, **kwargs):
            return np.arange(2.0).__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return np.arange(2.0).__dlpack_device__()

    class Nothing:
        pass

    monkeypatch.setattr(reducers, "_array_form_types", {})
    names = [reducers.qualified_name(cls) for cls in (ByArray, ByDLPack, Nothing)]
    assert reducers.array_form(ByArray()) is None  # not a TYPE_MAP type: no array form recorded
    reducers.set_array_form(names)
    assert reducers.array_form(ByArray()).tolist() == [0.0, 1.0, 2.0]
    assert reducers.array_form(ByDLPack()).tolist() == [0.0, 1.0]
    assert reducers.array_form(Nothing()) is None
    # The backend's hook comes first; one that fails leaves the next way to try.
    reducers.set_array_form(names, lambda obj: np.ma.masked_array([7.0]))
    form = reducers.array_form(ByArray())
    assert type(form) is np.ndarray and form.tolist() == [7.0]
    reducers.set_array_form(names, lambda obj: 1 / 0)
    assert reducers.array_form(ByArray()).tolist() == [0.0, 1.0, 2.0]


def test_a_proxy_of_a_library_type_is_compared_part_by_part_through_the_type_map(tmp_path):
    # A modin-like frame proxy whose reducer records the pandas frame's state: its parts are compared with gold's
    # DataFrame at the same paths. Before, objects of two types were `uncompared` whatever they held.
    scenarios, backend = REPO / "tests" / "objects" / "proxy_scenarios", backend_path("frame_proxy")
    _, report, _ = run_pair(tmp_path / "faithful", scenarios, backend, "--trust-backend", backend, compare_check=0)
    assert report["scenarios"][0]["coverage"]["checks"]["values"] == report["scenarios"][0]["coverage"]["leaves"]
    gold_out, doubled = tmp_path / "faithful" / "gold", tmp_path / "doubled"
    parity("run", "--backend", backend, "--role", "candidate", "--scenarios", scenarios, "--out", doubled, "-q",
           env={"PARITY_TEST_PROXY_SCALE": "2"}, check=0)
    report = compare(gold_out, doubled, tmp_path, "--trust-backend", backend, check=1)[1]
    assert failing(report) == {("frames.frame", "values", "outputs['df']['a']")}
