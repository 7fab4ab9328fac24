"""Fault injection: scenarios that kill or hang their worker are recorded, and the run goes on around them."""
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from e2e_test import not_fork_safe_backend, results_copy, shm_leftovers  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
# The leaking scenario keeps up to 2000 MB, so any limit well below that must stop it; a sanitized build raises
# the limit (tests/CMakeLists.txt) for ASan's shadow memory, which the ordinary scenarios' workers carry too.
MEMORY_LIMIT_MB = int(os.environ.get("PARITY_FAULTS_MAX_MEMORY_MB", "300"))
assert MEMORY_LIMIT_MB <= 1000, "the leaking scenario must run into the limit long before its 2000 MB"
# Set in a sanitized build: where every parity process, workers included, writes its ASan and UBSan reports.
SANITIZER_REPORTS = os.environ.get("PARITY_SANITIZER_REPORTS")

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)

# What each fault becomes: (status, error type, a phrase of its message).
EXPECTED = {
    "faults.segfaults": ("crash", "Crash", "signal 11 (SIGSEGV)"),
    "faults.aborts": ("crash", "Crash", "signal 6 (SIGABRT)"),
    "faults.exits": ("crash", "Crash", "exit code 3"),
    "faults.hangs": ("timeout", "Timeout", "ran past its timeout of 1 s (set by the scenario's timeout= argument)"),
    "faults.hangs_past_the_runs_timeout": ("timeout", "Timeout", "ran past its timeout of 2 s (set by --timeout)"),
    "faults.leaks": ("crash", "MemoryLimit", f"past the memory limit of {MEMORY_LIMIT_MB} MB"),
    "faults.runs_out_of_memory": ("crash", "MemoryError", "the allocator gave up"),
    "faults.writes_into_the_reply_channel": ("crash", "Crash", "its worker sent an invalid reply (not JSON)"),
    "faults.raises": ("error", "ValueError", "an ordinary failure"),
}
ORDINARY = ("faults.ordinary_first", "faults.ordinary_last")


@pytest.fixture(scope="session", autouse=True)
def no_sanitizer_reports():
    """In a sanitized build no parity process reports anything: a worker that ends normally is not watched for its
    last words, so its reports (a leak found at exit) are read from the files they went to."""
    if not SANITIZER_REPORTS:
        yield
        return
    reports = Path(SANITIZER_REPORTS)
    reports.mkdir(parents=True, exist_ok=True)
    for stale in reports.iterdir():
        stale.unlink()
    yield
    found = sorted(reports.iterdir())
    assert not found, "sanitizer reports:\n" + "\n".join(f"{p}:\n{p.read_text()}" for p in found)


def run(out, *extra, backend="gold"):
    proc = subprocess.run([BIN, "run", "--backend", backend, "--scenarios", SCENARIOS, "--out", out,
                           "--max-memory", str(MEMORY_LIMIT_MB), "--timeout", "2", *extra],
                          capture_output=True, text=True, timeout=300)
    return proc, json.loads((Path(out) / "manifest.json").read_text())


@pytest.fixture(scope="module", params=[(1, True), (3, True), (2, False)],
                ids=["jobs=1", "jobs=3", "jobs=2-not-fork-safe"])
def faulty_run(request, tmp_path_factory):
    jobs, forked = request.param
    tmp = tmp_path_factory.mktemp(f"faults-j{jobs}")
    out = tmp / "gold"
    proc, manifest = run(out, "--jobs", str(jobs), backend="gold" if forked else not_fork_safe_backend(tmp))
    return out, proc, manifest, {s["id"]: s for s in manifest["scenarios"]}


def test_every_fault_is_recorded_with_its_status_and_cause(faulty_run):
    _, proc, manifest, by_id = faulty_run
    assert proc.returncode == 1, proc.stderr
    assert manifest["complete"] is True
    for scenario, (status, error_type, phrase) in EXPECTED.items():
        record = by_id[scenario]
        assert record["status"] == status, (scenario, record)
        assert record["error"]["type"] == error_type, (scenario, record["error"])
        assert phrase in record["error"]["message"], (scenario, record["error"])


def test_the_ordinary_scenarios_around_the_faults_pass_and_keep_their_results(faulty_run):
    out, _, _, by_id = faulty_run
    for scenario in ORDINARY:
        assert by_id[scenario]["status"] == "ok", by_id[scenario]
        assert (out / by_id[scenario]["file"]).is_file()
    proc = subprocess.run([BIN, "compare", out, results_copy(out), "--only", ORDINARY[0], "--only", ORDINARY[1]],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_a_crash_report_carries_the_last_output_of_its_worker(faulty_run):
    _, proc, _, by_id = faulty_run
    assert "about to read address 0" in by_id["faults.segfaults"]["error"]["traceback"]
    assert "signal 11 (SIGSEGV)" in proc.stderr and "about to read address 0" in proc.stderr


def test_results_do_not_depend_on_the_number_of_workers(tmp_path):
    results = {}
    for jobs in (1, 3):
        out = tmp_path / f"j{jobs}"
        run(out, "--jobs", str(jobs), "--only", ORDINARY[0], "--only", ORDINARY[1], "--only", "faults.segfaults")
        results[jobs] = {p.name: p.read_bytes() for p in (out / "results").iterdir()}
    assert results[1] == results[3] and len(results[1]) >= 2


def test_compare_reports_a_crashed_side_as_an_error_naming_how_it_ended(faulty_run, tmp_path):
    out, _, _, _ = faulty_run
    report = tmp_path / "report.json"
    subprocess.run([BIN, "compare", out, results_copy(out), "--json", report], capture_output=True, timeout=120)
    by_id = {s["id"]: s for s in json.loads(report.read_text())["scenarios"]}
    check = next(c for c in by_id["faults.segfaults"]["checks"] if not c["ok"])
    assert by_id["faults.segfaults"]["status"] == "error" and check["check"] == "error"
    assert check["message"].startswith("the gold run crashed: Crash: its worker process died running it (signal 11")
    assert "timed out: Timeout" in next(c for c in by_id["faults.hangs"]["checks"] if not c["ok"])["message"]


def test_sigint_stops_the_run_cleanly_keeping_what_finished(tmp_path):
    out = tmp_path / "gold"
    proc = subprocess.Popen([BIN, "run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", out, "--timeout",
                             "120", "--only", ORDINARY[0], "--only", "faults.hangs_past_the_runs_timeout",
                             "--only", ORDINARY[1]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    manifest_file = out / "manifest.json"
    deadline = time.monotonic() + 60
    # Interrupted while the hang runs: ordinary_first is done and in the manifest (within a second), the rest not.
    while time.monotonic() < deadline:
        if manifest_file.is_file() and any(s["id"] == ORDINARY[0] for s in json.loads(manifest_file.read_text())["scenarios"]):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    manifest = json.loads(manifest_file.read_text())
    assert manifest["complete"] is False
    finished = {s["id"]: s for s in manifest["scenarios"]}
    assert finished[ORDINARY[0]]["status"] == "ok" and (out / finished[ORDINARY[0]]["file"]).is_file()
    assert "stopped by signal 2" in err


@pytest.mark.parametrize("stop", ["timeout", "sigterm"])
def test_a_stopped_workers_joblib_pool_leaves_nothing_in_dev_shm(tmp_path, stop):
    """A worker stopped while its scenario's joblib pool was alive (past a timeout, or its run interrupted) had its
    whole process group SIGKILLed, loky's resource tracker with it: the pool's memmapping folders and semaphores
    stayed in /dev/shm for good, ten entries a stop. The tracker, which ignores SIGTERM to outlive what it tracks, is
    spared now; it removes them once the others have ended, and ends with the run at the latest."""
    pytest.importorskip("joblib", reason="the scenarios of tests/faults/pools/ make joblib pools")
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here: joblib and loky keep their folders and semaphores elsewhere")
    marks = tmp_path / "marks"
    marks.mkdir()
    before = os.listdir("/dev/shm")
    scenario = "pools.times_out" if stop == "timeout" else "pools.is_interrupted"
    proc = subprocess.Popen([BIN, "run", "--backend", "gold", "--scenarios", Path(__file__).parent / "pools",
                             "--out", tmp_path / "gold", "--only", scenario, "--timeout", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PARITY_POOLS_MARKS=str(marks)))
    mark = marks / scenario.partition(".")[2]
    deadline = time.monotonic() + 120
    while not mark.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert mark.exists(), "the scenario's pool never ran"
    if stop == "sigterm":
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == (1 if stop == "timeout" else 130), err
    if stop == "timeout":
        assert "ran past its timeout of 3 s" in err, err
    # The worker that ran the scenario made the pool's entries (the pid in their names); the mark holds its pid.
    left = shm_leftovers(before, makers={int(mark.read_text())})
    assert not left, f"left in /dev/shm by the stopped worker's pool: {sorted(left)}"


@pytest.mark.parametrize("jobs, forked", [(1, True), (2, True), (2, False)],
                         ids=["jobs=1", "jobs=2", "jobs=2-not-fork-safe"])
def test_a_module_whose_import_kills_the_worker_is_a_module_error_and_the_rest_runs(tmp_path, jobs, forked):
    out = tmp_path / "gold"
    backend = "gold" if forked else not_fork_safe_backend(tmp_path)
    proc = subprocess.run([BIN, "run", "--backend", backend, "--scenarios", Path(__file__).parent / "crashing_import",
                           "--out", out, "--jobs", str(jobs)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    by_id = {s["id"]: s for s in json.loads((out / "manifest.json").read_text())["scenarios"]}
    assert by_id["b_ordinary.still_runs"]["status"] == "ok"
    crashed = by_id["a_crashes_on_import"]
    assert crashed["status"] == "error" and crashed["error"]["type"] == "Crash"
    assert "importing it killed the worker process (signal 11 (SIGSEGV))" in crashed["error"]["message"]


def test_a_worker_that_dies_after_importing_the_scenarios_blames_no_module(tmp_path):
    # The worker replies "imported" once every scenario module is imported (src/parity/run/protocol.h): a death after
    # that (here in the backend's version(), which the ready reply asks for) ends the run at once. Without that reply
    # the supervisor made the module imported last a module error and started another worker, module after module.
    backend = tmp_path / "dies_when_ready.py"
    backend.write_text("import os\n\n\ndef version():\n"
                       "    with open(os.environ['PARITY_TEST_READY_LOG'], 'a') as log:\n"
                       "        log.write('asked\\n')\n"
                       "    os._exit(3)\n")
    log = tmp_path / "asked.log"
    proc = subprocess.run([BIN, "run", "--backend", backend, "--scenarios",
                           Path(__file__).parent / "crashing_import" / "b_ordinary.py", "--out", tmp_path / "out"],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PARITY_TEST_READY_LOG": str(log)})
    assert proc.returncode == 2, proc.stderr
    assert "the worker process ended (exit code 3) before it was ready" in proc.stderr
    assert log.read_text() == "asked\n", "one worker started, and no scenario module was blamed"


LEAVES_TEMPORARY_FILES = """
import os
import tempfile
import time

import parity


@parity.scenario()
def finishes(xp):
    with open(os.environ["FAULTS_TEST_LOG"], "a") as f:
        f.write(tempfile.gettempdir() + "\\n")
    return {"x": xp.arange(2.0)}


@parity.scenario(timeout=1)
def hangs_in_a_temporary_directory(xp):
    with tempfile.TemporaryDirectory(prefix="faults-left-") as tmp:
        with open(os.path.join(tmp, "data"), "w") as f:
            f.write("written before the timeout")
        time.sleep(60)
    return {"x": xp.arange(2.0)}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_what_a_stopped_scenario_left_in_its_temporary_directory_goes_with_the_run(tmp_path, jobs):
    """A scenario stopped at its timeout never leaves its `with TemporaryDirectory()`: its files stayed in TMPDIR
    after every run. The workers now get a temporary directory of the run's own (TMPDIR), removed when it ends."""
    scenarios, temp, log = tmp_path / "scen", tmp_path / "tmp", tmp_path / "log"
    scenarios.mkdir()
    temp.mkdir()
    (scenarios / "temporary.py").write_text(LEAVES_TEMPORARY_FILES)
    proc = subprocess.run([BIN, "run", "--backend", "gold", "--scenarios", scenarios, "--out", tmp_path / "out",
                           "--jobs", str(jobs), "-q"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(temp), "FAULTS_TEST_LOG": str(log)})
    assert proc.returncode == 1, proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {s["id"]: s["status"] for s in manifest["scenarios"]} == {
        "temporary.finishes": "ok", "temporary.hangs_in_a_temporary_directory": "timeout"}
    seen = Path(log.read_text().strip())
    assert seen.parent == temp and seen.name.startswith("parity-run-"), seen
    assert list(temp.iterdir()) == []


WAITS_IN_ITS_TEMPORARY_DIRECTORY = """
import os
import tempfile
import time

import parity


@parity.scenario(timeout=120)
def waits(xp):
    mine = os.path.join(tempfile.gettempdir(), "in-use")
    with open(mine, "w") as f:
        f.write("written while another run starts")
    # Written whole under another name, then renamed: the test waits for the file to exist and reads it at once.
    with open(os.environ["FAULTS_TEST_LOG"] + ".part", "w") as f:
        f.write(tempfile.gettempdir())
    os.replace(os.environ["FAULTS_TEST_LOG"] + ".part", os.environ["FAULTS_TEST_LOG"])
    while not os.path.exists(os.environ["FAULTS_TEST_GO"]):
        time.sleep(0.02)
    if not os.path.exists(mine):
        raise RuntimeError("another run removed this run's temporary directory")
    return {"x": xp.arange(2.0)}
"""


def test_a_run_removes_what_runs_killed_outright_left_never_a_live_runs_directory(tmp_path):
    """A run killed with SIGKILL cannot remove its scenarios' temporary directory; the next run under the same TMPDIR
    does (a nightly killed at CI's timeout left one each night), and says so, but never one a running run holds."""
    temp, log, go = tmp_path / "tmp", tmp_path / "log", tmp_path / "go"
    temp.mkdir()
    for name, text in (("waiting", WAITS_IN_ITS_TEMPORARY_DIRECTORY),
                       ("finishing", LEAVES_TEMPORARY_FILES.split("@parity.scenario(timeout=1)")[0])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "temporary.py").write_text(text)
    env = {**os.environ, "TMPDIR": str(temp), "FAULTS_TEST_GO": str(go)}
    live = subprocess.Popen([BIN, "run", "--backend", "gold", "--scenarios", tmp_path / "waiting", "--out",
                             tmp_path / "live", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**env, "FAULTS_TEST_LOG": str(log)})
    try:
        deadline = time.monotonic() + 120
        while not log.is_file() and live.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        live_dir = Path(log.read_text())
        # parity-run-, this host's tag (8 hex digits), '-' and mkdtemp's six characters (temp_directory.h)
        assert live_dir.parent == temp and re.fullmatch(r"parity-run-[0-9a-f]{8}-.{6}", live_dir.name), live_dir
        left = temp / (live_dir.name[:-6] + "k1lled")  # as a run killed outright leaves it: no process holds it
        (left / "deeper").mkdir(parents=True)
        (left / "deeper" / "partial").write_text("a killed scenario's file")
        (left / "deeper").chmod(0o500)  # as a scenario may leave it
        not_a_run = temp / (live_dir.name[:-6] + "notdir")
        not_a_run.write_text("a file with a run directory's name")
        older = temp / "parity-run-0lder1"  # an older parity's run (no tag, no lock) or the user's own: not a sweep's
        (older / "in-use").mkdir(parents=True)
        proc = subprocess.run([BIN, "run", "--backend", "gold", "--scenarios", tmp_path / "finishing", "--out",
                               tmp_path / "next"], capture_output=True, text=True, timeout=300,
                              env={**env, "FAULTS_TEST_LOG": str(tmp_path / "next-log")})
        assert proc.returncode == 0, proc.stderr
        assert ("parity run: removed 1 temporary directory left by 'parity run' processes killed outright "
                "(parity-run-*)" in proc.stderr), proc.stderr
        assert not left.exists()
        assert not_a_run.is_file() and (live_dir / "in-use").is_file() and (older / "in-use").is_dir()
    finally:
        go.touch()
        out, err = live.communicate(timeout=300)
    assert live.returncode == 0, err
    assert sorted(p.name for p in temp.iterdir()) == sorted([not_a_run.name, older.name])


def test_a_run_whose_tmpdir_does_not_exist_runs_as_before(tmp_path):
    """No temporary directory of the run's own can be made under a TMPDIR that does not exist: the workers keep the
    one they were given (Python's tempfile then falls back to its own), the run says so and goes on, its scenarios
    ok."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "temporary.py").write_text(LEAVES_TEMPORARY_FILES.split("@parity.scenario(timeout=1)")[0])
    proc = subprocess.run([BIN, "run", "--backend", "gold", "--scenarios", scenarios, "--out", tmp_path / "out"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(tmp_path / "missing"),
                               "FAULTS_TEST_LOG": str(tmp_path / "log")})
    assert proc.returncode == 0, proc.stderr
    assert (f"parity run: no temporary directory of the run's own (the temporary directory {tmp_path / 'missing'}"
            in proc.stderr and "its scenarios' temporary files go to the TMPDIR it was given" in proc.stderr), \
        proc.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [(s["id"], s["status"]) for s in manifest["scenarios"]] == [("temporary.finishes", "ok")]
    assert not (tmp_path / "missing").exists()


SPARES_A_SHIELDED_PROCESS = '''
"""The first scenario leaves, past its timeout, a process that ignores SIGTERM; the second watches it end."""
import os
import select
import subprocess
import time

import parity


@parity.scenario(timeout=1)
def a_leaves_a_shielded_process(xp):
    shielded = subprocess.Popen(["sh", "-c", "trap '' TERM; exec sleep 300"])
    while not int(open(f"/proc/{shielded.pid}/status").read().split("SigIgn:")[1].split()[0], 16) & 1 << 14:
        time.sleep(0.01)  # named once it ignores SIGTERM, as a resource tracker does
    with open(os.environ["FAULTS_TEST_PID"], "w") as f:
        f.write(str(shielded.pid))
    time.sleep(300)


@parity.scenario(timeout=60)
def b_watches_it(xp):
    pidfd = os.pidfd_open(int(open(os.environ["FAULTS_TEST_PID"]).read()))
    start = time.monotonic()
    ended = bool(select.select([pidfd], [], [], 30)[0])
    with open(os.environ["FAULTS_TEST_LOG"], "w") as f:
        f.write(f"{ended} {time.monotonic() - start:.2f}")
    return {"x": xp.arange(2)}
'''


def test_a_process_spared_at_a_workers_stop_is_killed_once_its_grace_is_over(tmp_path):
    """A worker stopped at its scenario's timeout takes its group with it, but for what shields itself from SIGTERM
    (a resource tracker, left to clean up); such a process is killed 10 s later (kCleanerGraceSeconds, process.h) by
    the supervisor's loop while the run goes on, never left to run until the run's end beside the next scenarios."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "spared.py").write_text(SPARES_A_SHIELDED_PROCESS)
    log = tmp_path / "log"
    proc = subprocess.run([BIN, "run", "--backend", "gold", "--scenarios", scenarios, "--out", tmp_path / "out", "-q"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "FAULTS_TEST_PID": str(tmp_path / "pid"), "FAULTS_TEST_LOG": str(log)})
    assert proc.returncode == 1, proc.stderr  # the first scenario's timeout
    statuses = {s["id"]: s["status"] for s in json.loads((tmp_path / "out" / "manifest.json").read_text())["scenarios"]}
    assert statuses == {"spared.a_leaves_a_shielded_process": "timeout", "spared.b_watches_it": "ok"}, statuses
    ended, after = log.read_text().split()
    # The grace runs from the stop, just before the second scenario started (later on a loaded machine): not killed
    # at the stop (a resource tracker would not clean up), nor left to the run's end (the watch's 30 s).
    assert ended == "True" and 1 < float(after) < 15, f"the spared process ended: {ended}, after {after} s"
