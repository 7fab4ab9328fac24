"""scripts/nightly.sh end to end: two candidates in 3 shards over a small scenario set, each merged into reports that
say what the unsharded compare says; a failing candidate fails the night without hiding or skipping another one."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from e2e_test import BIN, REPO, parity, run  # the shared e2e helpers (tests/conftest.py), not a copy of them

N = 3
SCENARIOS = [REPO / "scenarios" / "broadcasting.py", REPO / "scenarios" / "shapes.py"]
SCRIPT = REPO / "scripts" / "nightly.sh"


def nightly(out, candidates, *args):
    """Runs scripts/nightly.sh on the parity under test (no set-up, no build); returns (exit code, its output).
    The output goes to a file, not a pipe, which a process the candidates leave behind could hold open."""
    env = {**os.environ, "PARITY_BUILD_DIR": str(Path(BIN).parent), "PARITY_NIGHTLY_SKIP_BUILD": "1",
           "PARITY_NIGHTLY_OUT": str(out), "PARITY_NIGHTLY_CANDIDATES": " ".join(candidates),
           "PARITY_NIGHTLY_SHARDS": str(N), "PARITY_NIGHTLY_SCENARIOS": " ".join(map(str, SCENARIOS))}
    env.pop("PARITY_NIGHTLY_TIMES", None)
    with tempfile.TemporaryFile("w+") as log:
        code = subprocess.run([SCRIPT, *map(str, args)], stdout=log, stderr=subprocess.STDOUT, env=env,
                              timeout=900).returncode
        log.seek(0)
        return code, log.read()


def merged(out, candidate):
    return json.loads((out / candidate / "report.json").read_text())


def statuses(report):
    return {s["id"]: s["status"] for s in report["scenarios"]}


def merge_exit_code(out, candidate):
    return (out / candidate / "merge-exit-code").read_text().strip()


@pytest.fixture(scope="module")
def passing(tmp_path_factory):
    out = tmp_path_factory.mktemp("nightly-passing")
    return out, *nightly(out, ["fsproxy", "memmap"])


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    """broken.perturb first: its failure must neither stop fsproxy's shards nor be hidden by their success."""
    out = tmp_path_factory.mktemp("nightly-failing")
    return out, *nightly(out, ["broken.perturb", "fsproxy"])


def test_a_passing_night_exits_0_with_every_candidates_merged_reports(passing):
    out, code, log = passing
    assert code == 0, log
    for candidate in ("fsproxy", "memmap"):
        assert all((out / candidate / name).is_file() for name in ("report.json", "junit.xml", "report.html")), log
        assert sorted(p.name for p in out.glob(f"{candidate}/shard-*")) == [f"shard-{i}" for i in range(1, N + 1)]
        assert merge_exit_code(out, candidate) == "0"
        assert merged(out, candidate)["merged"]["missing"] == []
        assert f"| {candidate} | passed | {N}/{N} |" in log, log


@pytest.mark.parametrize("candidate", ["fsproxy", "memmap"])
def test_each_merged_report_says_what_the_unsharded_compare_says(passing, candidate, tmp_path):
    out, _, _ = passing
    scenarios = [arg for path in SCENARIOS for arg in ("--scenarios", path)]
    run("gold", tmp_path / "gold", *scenarios)
    run(candidate, tmp_path / "candidate", *scenarios)
    parity("compare", tmp_path / "gold", tmp_path / "candidate", "-q", "--json", tmp_path / "full.json", check=0)
    full = json.loads((tmp_path / "full.json").read_text())
    assert statuses(merged(out, candidate)) == statuses(full)
    assert merged(out, candidate)["summary"] == full["summary"]


def test_a_failing_candidate_fails_the_night_and_the_next_one_still_reports(failing):
    out, code, log = failing
    assert code == 1, log
    report = merged(out, "broken.perturb")
    assert report["summary"]["fail"] > 0 and merge_exit_code(out, "broken.perturb") == "1"
    failed = [s for s in report["scenarios"] if s["status"] == "fail"]
    assert all(any(c["check"] == "values" and not c["ok"] for c in s["checks"]) for s in failed), "perturbed values"
    assert "| broken.perturb | **FAILED** |" in log, log
    assert all((out / "fsproxy" / name).is_file() for name in ("report.json", "junit.xml", "report.html"))
    assert merge_exit_code(out, "fsproxy") == "0" and "| fsproxy | passed |" in log, log


def test_the_previous_merged_report_balances_the_next_nights_shards(passing, tmp_path):
    out, _, _ = passing
    (tmp_path / "fsproxy").mkdir()
    shutil.copy(out / "fsproxy" / "report.json", tmp_path / "fsproxy" / "report.json")
    code, log = nightly(tmp_path, [], "shard", "fsproxy", f"1/{N}", tmp_path)
    assert code == 0, log
    for side in ("gold", "candidate"):
        shard = json.loads((tmp_path / "fsproxy" / "shard-1" / side / "manifest.json").read_text())["run"]["shard"]
        assert shard["times_from"] == str(tmp_path / "fsproxy" / "report.json")


@pytest.mark.parametrize("args, message", [
    (["shard", "fsproxy", f"{N + 1}/{N}", "OUT"], "is not I/N"),
    (["merge", "fsproxy", "OUT", "--baseline", "old.json"], "unexpected '--baseline old.json'"),
    (["merge", "fsproxy", "OUT"], "no shard report"),
    (["tonight"], "unknown subcommand"),
])
def test_usage_and_infrastructure_errors_exit_2_saying_why(tmp_path, args, message):
    code, log = nightly(tmp_path, ["fsproxy"], *[str(tmp_path) if a == "OUT" else a for a in args])
    assert code == 2 and message in log, log


def copy_as_last_night(night, tonight):
    """The shards of `night` as tonight's, beside its merged report.json dated a day before them (last night's)."""
    shutil.copytree(night, tonight)
    day_before = min(p.stat().st_mtime for p in tonight.glob("shard-*/report.json")) - 86400
    os.utime(tonight / "report.json", (day_before, day_before))


def test_last_nights_merged_report_is_the_baseline_of_tonights_trends(failing, tmp_path):
    """Tonight's merge of broken.perturb against last night's: every failure is 'still failing' since then."""
    out, _, _ = failing
    tonight = tmp_path / "broken.perturb"
    copy_as_last_night(out / "broken.perturb", tonight)
    last_night = merged(out, "broken.perturb")
    code, log = nightly(tmp_path, [], "merge", "broken.perturb", tmp_path)
    assert code == 1, log
    assert json.loads((tonight / "baseline.json").read_text()) == last_night
    report = merged(tmp_path, "broken.perturb")
    failing_ids = {s["id"] for s in report["scenarios"] if s["status"] == "fail"}
    assert failing_ids and report["trend_summary"]["still_failing"] == len(failing_ids), report["trend_summary"]
    assert report["trend_summary"]["new"] == 0 and report["baselines"][0]["started"] == last_night["started"]
    assert "still failing" in log, log


def test_merging_again_the_same_night_keeps_last_nights_baseline(failing, tmp_path):
    out, _, _ = failing
    tonight = tmp_path / "broken.perturb"
    copy_as_last_night(out / "broken.perturb", tonight)
    last_night = merged(out, "broken.perturb")
    for _ in range(2):  # the second merge finds tonight's first one, newer than the shard reports
        code, log = nightly(tmp_path, [], "merge", "broken.perturb", tmp_path)
        assert code == 1, log
    assert json.loads((tonight / "baseline.json").read_text()) == last_night


def test_the_summary_table_counts_timeouts_and_absent_counts_as_zero(tmp_path):
    for name, summary in (("slow", {"total": 3, "pass": 1, "timeout": 2}), ("fine", {"total": 1, "pass": 1})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "merge-exit-code").write_text("1" if "timeout" in summary else "0")
        (tmp_path / name / "report.json").write_text(json.dumps({"summary": summary}))
    table = subprocess.run([sys.executable, REPO / "scripts" / "nightly_summary.py", tmp_path], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    header = [c.strip() for c in table[0].strip("|").split("|")]
    rows = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")] for r in table[2:]}
    timeout = header.index("timeout")
    assert rows["slow"][timeout] == "2" and rows["fine"][timeout] == "0", table
    assert rows["slow"][1] == "**FAILED**" and rows["fine"][header.index("fail")] == "0", table
