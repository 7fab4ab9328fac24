"""The reference candidates' declared differences over the operation registry's scenarios: a declared one is reported
as declared (xfail, naming the entry), an undeclared one still fails, and an entry about variants a run does not
generate is left out (parity.ops.in_play), so that --strict-differences holds on both the sample and the full product."""
import json

from e2e_test import REPO, parity
from parity.ops import in_play, variants

FULL = {"PARITY_OPS": "full"}  # the full product generates the variants selected below
# MaskedArray.trace casts to float64 (a numpy.ma bug that masked's DIFFERENCES declare), on every variant of trace.
SELECTION = ["--scenarios", REPO / "scenarios" / "ops.py", "--only", "ops.trace[layout=C,dtype=int32]", "--only",
             "ops.trace[layout=F,dtype=complex128]"]

WITHOUT_DTYPE_ENTRY = '''
"""masked, without its declaration of the dtype MaskedArray.trace returns: that difference is now undeclared."""
from parity_fixtures.masked import *  # noqa: F401,F403
from parity_fixtures import masked

DIFFERENCES = [entry for entry in masked.DIFFERENCES if entry["id"] != "ops-trace-casts-to-float64-dtype"]
'''


def _run_and_compare(tmp_path, backend, *selection):
    parity("run", "--backend", "gold", "--out", tmp_path / "gold", "-q", *selection, env=FULL, check=0)
    parity("run", "--backend", backend, "--out", tmp_path / "cand", "-q", *selection, env=FULL, check=0)
    report_file = tmp_path / "report.json"
    proc = parity("compare", tmp_path / "gold", tmp_path / "cand", "--json", report_file, "--trust-backend", backend,
                  env=FULL)
    return proc, {s["id"]: s for s in json.loads(report_file.read_text())["scenarios"]}


def test_a_declared_ops_difference_is_reported_as_declared(tmp_path):
    proc, scenarios = _run_and_compare(tmp_path, "masked", *SELECTION)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for scenario_id in ("ops.trace[layout=C,dtype=int32]", "ops.trace[layout=F,dtype=complex128]"):
        scenario = scenarios[scenario_id]
        assert scenario["status"] == "xfail", scenario
        explained = {c["check"]: c["details"]["difference"] for c in scenario["checks"] if not c["ok"]}
        assert explained["dtype"] == "ops-trace-casts-to-float64-dtype"
        assert explained["type"] == "ops-trace-casts-to-float64-type"
        assert "ops-trace-casts-to-float64-dtype (dtype)" in scenario["message"]
    complex_checks = {c["check"]: c["details"].get("difference")
                      for c in scenarios["ops.trace[layout=F,dtype=complex128]"]["checks"] if not c["ok"]}
    assert complex_checks["values"] == "ops-trace-drops-imaginary-part"


def test_an_undeclared_ops_difference_still_fails(tmp_path):
    backend = tmp_path / "masked_undeclared.py"
    backend.write_text(WITHOUT_DTYPE_ENTRY)
    proc, scenarios = _run_and_compare(tmp_path, backend, *SELECTION)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    scenario = scenarios["ops.trace[layout=C,dtype=int32]"]
    assert scenario["status"] == "fail" and "dtype" in scenario["message"]
    dtype_check = next(c for c in scenario["checks"] if c["check"] == "dtype" and not c["ok"])
    assert "difference" not in dtype_check["details"]


def test_an_entry_that_explains_nothing_fails_a_strict_compare(tmp_path):
    # masked's entry for the complex trace's values is in play (a complex variant is selected, and under the full
    # product it is generated) but explains nothing when only the int32 variant runs: stale, and strict fails.
    selection = ["--scenarios", REPO / "scenarios" / "ops.py", "--only", "ops.trace[layout=C,dtype=int32]"]
    parity("run", "--backend", "gold", "--out", tmp_path / "gold", "-q", *selection, env=FULL, check=0)
    parity("run", "--backend", "masked", "--out", tmp_path / "cand", "-q", *selection, env=FULL, check=0)
    proc = parity("compare", tmp_path / "gold", tmp_path / "cand", "--json", tmp_path / "r.json",
                  "--strict-differences", env=FULL)
    assert proc.returncode == 1
    stale = {d["id"] for d in json.loads((tmp_path / "r.json").read_text())["differences"]
             if d["checks_explained"] == 0}
    assert "ops-trace-drops-imaginary-part" in stale and "ops-trace-casts-to-float64-dtype" not in stale


def test_in_play_keeps_only_entries_about_generated_variants():
    complex_trace = {"id": "complex", "scenarios": variants("trace", dtypes=["complex*"])}
    any_trace = {"id": "any", "scenarios": variants("trace")}
    elsewhere = {"id": "corpus", "scenarios": ["layouts.*"]}
    everywhere = {"id": "everywhere"}
    entries = [complex_trace, any_trace, elsewhere, everywhere]
    # The default sample draws trace's int64 F variant only; the full product draws every dtype.
    assert [e["id"] for e in in_play(entries, per_op=1)] == ["any", "corpus", "everywhere"]
    assert [e["id"] for e in in_play(entries, per_op=0)] == ["complex", "any", "corpus", "everywhere"]


def test_variants_escape_the_id_brackets():
    assert variants("linalg.trace", layouts=["F"], dtypes=["complex*"]) == [
        "ops.linalg_trace[[]layout=F,dtype=complex*]"]
