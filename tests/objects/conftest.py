"""Shared helpers of the objects suite (label `objects`, issue #17): run gold and a candidate over a scenarios
directory and compare them, with tests/e2e_test.py's run/compare/failing rather than copies of them."""
from pathlib import Path

from e2e_test import BIN, REPO, compare, failing, manifest_entries, parity, run  # noqa: F401 - re-exported to the suite

HERE = Path(__file__).resolve().parent
# Backends of this suite's own (faithful twins of fixtures/broken ones, wrappers without an array form).
BACKENDS = HERE / "backends"


def backend_path(name):
    """The path of tests/objects/backends/NAME.py, as --backend takes it."""
    return str(BACKENDS / f"{name}.py")


def run_pair(tmp_path, scenarios, candidate, *compare_args, gold="gold", run_check=0, compare_check=None):
    """Runs `gold` and `candidate` over `scenarios` and compares them; returns (process, report, junit file)."""
    gold_out, cand_out = tmp_path / "gold", tmp_path / "cand"
    run(gold, gold_out, "--scenarios", scenarios, check=run_check)
    run(candidate, cand_out, "--scenarios", scenarios, check=run_check)
    return compare(gold_out, cand_out, tmp_path, *compare_args, check=compare_check)


def checks_of(report, scenario_id):
    """The check entries of one scenario of a compare report."""
    return next(s for s in report["scenarios"] if s["id"] == scenario_id)["checks"]
