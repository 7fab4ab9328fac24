"""Hostile scenarios against `parity run`'s supervisor (issue #16: D8, D14, D16, D18, MemoryError subclasses): a
scenario that closes descriptors, leaves its process group, forges replies, leaves processes behind or cannot
allocate is that scenario's crash or timeout; the run never hangs, aborts or loses another scenario's record."""
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN, SCENARIOS, parity, read_json

HERE = Path(__file__).resolve().parent / "scenarios_supervisor"
PLAIN = {"plain.matrix", "plain.strided", "plain.nested"}


def run(out, *files, extra=(), timeout=90, env=None, check=None):
    """A gold run of `files` (and the ordinary scenarios when SCENARIOS is among them); a hang fails the test."""
    args = ["run", "--backend", "gold", "--out", out, "-q", *extra]
    for f in files:
        args += ["--scenarios", f]
    proc = parity(*args, timeout=timeout, env=env, check=check)
    manifest = read_json(Path(out) / "manifest.json")
    return proc, manifest, {s["id"]: s for s in manifest["scenarios"]}


def assert_plain_ok(out, by_id):
    for scenario in PLAIN:
        assert by_id[scenario]["status"] == "ok", by_id[scenario]
        assert (Path(out) / by_id[scenario]["file"]).is_file()


def gone(pid):
    """Ended: no such process, or a zombie nobody reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_closing_descriptors_3_and_4_is_harmless(tmp_path):
    # D8: the protocol used to be on 3 and 4; closing 3 left the supervisor waiting for a worker that ran on.
    proc, _, by_id = run(tmp_path / "gold", HERE / "closes_low_descriptors.py", SCENARIOS, check=0)
    assert by_id["closes_low_descriptors.closes_3_and_4"]["status"] == "ok", proc.stderr
    assert_plain_ok(tmp_path / "gold", by_id)


def test_a_scenario_that_closes_its_reply_pipe_is_a_crash_and_the_run_goes_on(tmp_path):
    # D8: no timeout ends it here (--timeout 600): the closed pipe itself must, within seconds.
    start = time.monotonic()
    proc, manifest, by_id = run(tmp_path / "gold", HERE / "closes_every_descriptor.py", SCENARIOS,
                                extra=["--timeout", "600"], check=1)
    assert time.monotonic() - start < 60
    record = by_id["closes_every_descriptor.closes_everything_and_sleeps"]
    assert record["status"] == "crash" and record["error"]["type"] == "Crash", record
    assert "closed its reply descriptor" in record["error"]["message"]
    assert manifest["complete"] is True
    assert_plain_ok(tmp_path / "gold", by_id)


def test_a_worker_that_left_its_process_group_is_still_stopped_at_its_timeout(tmp_path):
    # D8: a kill of the worker's former group missed it, and the supervisor waited for it for ever.
    proc, _, by_id = run(tmp_path / "gold", HERE / "leaves_its_group.py", SCENARIOS,
                         extra=["--only", "leaves_its_group.hangs_in_another_group", "--only", "plain.matrix"],
                         check=1)
    record = by_id["leaves_its_group.hangs_in_another_group"]
    assert record["status"] == "timeout", record
    assert "ran past its timeout of 2 s" in record["error"]["message"]
    assert by_id["plain.matrix"]["status"] == "ok"


def test_sigterm_stops_a_run_whose_worker_left_its_process_group(tmp_path):
    # D8: SIGTERM was noted, and then the supervisor waited for ever for a worker its kill had missed.
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / "gold"
    scenario = "leaves_its_group.hangs_in_another_group_without_a_timeout"
    proc = subprocess.Popen([BIN, "run", "--backend", "gold", "--scenarios", HERE / "leaves_its_group.py", "--out",
                             out, "--timeout", "0", "--only", scenario],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PARITY_HOSTILE_MARKS=str(marks)))
    try:
        deadline = time.monotonic() + 60
        while not (marks / "hangs_in_another_group_without_a_timeout").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (marks / "hangs_in_another_group_without_a_timeout").exists(), "the scenario never started"
        worker = int((marks / "hangs_in_another_group_without_a_timeout").read_text())
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert read_json(out / "manifest.json")["complete"] is False
        deadline = time.monotonic() + 10
        while not gone(worker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gone(worker), "the worker outlived the run"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("jobs", [1, 2])
def test_forged_replies_are_the_forging_scenarios_crash_and_replace_no_record(tmp_path, jobs):
    # D14: a forged fatal aborted the run, forged done lines replaced the real records (and popped an empty deque),
    # a record naming "../x" threw out of the supervisor and emptied the manifest.
    proc, manifest, by_id = run(tmp_path / "gold", HERE / "forges.py", SCENARIOS, extra=["--jobs", str(jobs)],
                                check=1)
    forging = {"forges.forges_a_fatal_event", "forges.forges_records_of_another_scenario",
               "forges.forges_its_own_record_with_an_escaping_file", "forges.forges_a_started_event",
               # the same in the form the worker writes, which the supervisor reads without parsing
               "forges.forges_canonical_records_of_another_scenario",
               "forges.forges_its_own_canonical_record_with_an_escaping_file",
               "forges.forges_its_own_canonical_record_naming_another_file",
               "forges.forges_its_own_canonical_record_with_a_status_of_the_supervisor",
               "forges.forges_a_canonical_started_event"}
    assert [s["id"] for s in manifest["scenarios"]].count("x") == 0
    assert set(by_id) == forging | PLAIN and len(manifest["scenarios"]) == len(by_id)
    for scenario in forging:
        record = by_id[scenario]
        assert record["status"] == "crash" and record["error"]["type"] == "Crash", record
        assert "its worker sent an invalid reply" in record["error"]["message"], record
        assert record["file"] == ""
    assert manifest["complete"] is True
    assert_plain_ok(tmp_path / "gold", by_id)
    assert not (tmp_path / "x").exists()


def test_an_infinite_timeout_is_its_modules_error_and_no_other_module_is_blamed(tmp_path):
    # D16: timeout=inf passed the decorator, JSON could not carry it, every worker died and innocent.py was blamed.
    proc, _, by_id = run(tmp_path / "gold", HERE / "infinite_timeout.py", HERE / "innocent.py", check=1)
    assert by_id["innocent.runs"]["status"] == "ok", proc.stderr
    errors = [r for r in by_id.values() if r["status"] != "ok"]
    assert len(errors) == 1 and errors[0]["id"].startswith("infinite_timeout"), errors
    assert errors[0]["error"]["type"] == "ValueError"
    assert "timeout must be a finite positive number of seconds, got inf" in errors[0]["error"]["message"]


def test_processes_a_scenario_leaves_behind_end_with_the_run(tmp_path):
    # D18: a child in the worker's group outlived the run (its group was killed only after a grace period), and a
    # double-forked daemon in its own session escaped altogether.
    marks = tmp_path / "marks"
    marks.mkdir()
    pids = {}
    try:
        _, _, by_id = run(tmp_path / "gold", HERE / "forks.py", env={"PARITY_HOSTILE_MARKS": str(marks)}, check=0)
        assert by_id["forks.leaves_children"]["status"] == "ok"
        pids = {name: int((marks / name).read_text()) for name in ("child", "daemon")}
        deadline = time.monotonic() + 5
        while not all(map(gone, pids.values())) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert {name: gone(pid) for name, pid in pids.items()} == {"child": True, "daemon": True}
    finally:
        for pid in pids.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_numpys_memory_error_is_a_crash_and_the_next_scenario_runs(tmp_path):
    # numpy._ArrayMemoryError subclasses MemoryError: the worker cannot be trusted after it, as after MemoryError.
    proc, _, by_id = run(tmp_path / "gold", HERE / "memory_error.py", check=1)
    record = by_id["memory_error.allocates_four_exbibytes"]
    assert record["status"] == "crash", record
    assert record["error"]["type"].endswith("_ArrayMemoryError"), record["error"]
    assert by_id["memory_error.runs_after"]["status"] == "ok", proc.stderr
