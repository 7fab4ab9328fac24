"""`--jobs` for run and compare: the same results and reports whatever the number of processes (README "Command line")."""
import json
import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from e2e_test import not_fork_safe_backend  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
E2E = REPO / "tests" / "e2e"

TIMINGS = {"seconds", "gold_seconds", "candidate_seconds", "compare_seconds", "started"}


def parity(*args, env=None, check=None):
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}\n{proc.stderr}"
    return proc


def without_timings(value):
    """The compare JSON with every timing (and when it started) blanked: all that may differ between two compares."""
    if isinstance(value, dict):
        return {k: None if k in TIMINGS else without_timings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def junit_without_timings(text: str) -> str:
    return re.sub(r'(time|timestamp)="[^"]*"', r'\1=""', text)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """gold and a perturbed candidate over the e2e scenarios: passes, failures of several checks and an error."""
    tmp = tmp_path_factory.mktemp("jobs")
    parity("run", "--backend", "gold", "--out", tmp / "gold", "-q", "--scenarios", E2E / "scenarios", check=1)
    parity("run", "--backend", "broken.perturb", "--out", tmp / "cand", "-q", "--scenarios", E2E / "scenarios", check=1)
    return tmp


@pytest.mark.parametrize("jobs", [2, 3])
def test_compare_jobs_writes_the_reports_one_process_writes_but_for_timings(runs, tmp_path, jobs):
    reports = {}
    for n in (1, jobs):
        out = tmp_path / f"j{n}"
        out.mkdir()
        proc = parity("compare", runs / "gold", runs / "cand", "--jobs", n, "--json", out / "r.json", "--junit",
                      out / "r.xml", check=1)
        reports[n] = (json.loads((out / "r.json").read_text()), (out / "r.xml").read_text(), proc.stderr)
    (one, one_xml, one_err), (many, many_xml, many_err) = reports[1], reports[jobs]
    assert len(one["scenarios"]) >= 4 and {s["status"] for s in one["scenarios"]} >= {"pass", "fail", "error"}
    assert without_timings(many) == without_timings(one)
    assert junit_without_timings(many_xml) == junit_without_timings(one_xml)
    # The terminal shows the same scenarios in the same order.
    lines = lambda err: [line.split("(")[0] for line in err.splitlines() if line.startswith("[")]  # noqa: E731
    assert lines(many_err) == lines(one_err)


def test_compare_jobs_is_checked_like_runs(runs):
    proc = parity("compare", runs / "gold", runs / "cand", "--jobs", "0", check=2)
    assert "--jobs" in proc.stderr


CRASHING_REDUCER = """
    import os

    import parity
    import parity.reducers


    class Fragile:
        def __init__(self, v):
            self.v = v


    def rebuild(state):
        if os.environ.get("JOBS_TEST_ABORT_ON_REBUILD"):
            os.abort()  # an extension crashing while compare rebuilds the object
        return Fragile(state["v"])


    parity.reducers.register(Fragile, reduce=lambda f: {"v": f.v}, rebuild=rebuild)


    @parity.scenario
    def before(xp):
        return {"a": xp.arange(4.0)}


    @parity.scenario
    def fragile(xp):
        return {"f": Fragile(3)}


    @parity.scenario
    def after(xp):
        return {"b": xp.ones((2, 2))}
"""


def test_a_compare_process_that_dies_makes_its_scenario_an_error_and_the_others_are_compared(tmp_path):
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "fragile_mod.py").write_text(textwrap.dedent(CRASHING_REDUCER))
    for side in ("gold", "cand"):
        parity("run", "--backend", "gold", "--out", tmp_path / side, "-q", "--scenarios", scenarios, check=0)
    proc = parity("compare", tmp_path / "gold", tmp_path / "cand", "--jobs", "2", "--scenarios", scenarios,
                  "--json", tmp_path / "r.json", env={"JOBS_TEST_ABORT_ON_REBUILD": "1"}, check=1)
    found = {s["id"]: s for s in json.loads((tmp_path / "r.json").read_text())["scenarios"]}
    assert found["fragile_mod.before"]["status"] == "pass" and found["fragile_mod.after"]["status"] == "pass", proc.stderr
    fragile = found["fragile_mod.fragile"]
    assert fragile["status"] == "error" and "compare process died comparing it (signal 6" in fragile["message"]
    assert fragile["repro"], fragile


def test_a_compare_process_that_dies_with_several_items_queued_loses_only_the_one_it_was_comparing(tmp_path):
    # Small scenarios: the parent queues several to each process (fan_out.cc, ahead()); those queued behind the one
    # that killed its process are compared by its successor, and the outcomes stay in order.
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    module = textwrap.dedent(CRASHING_REDUCER)
    for name, count in (("before", 30), ("after", 90)):  # fragile is item 30 of 121, in the first process's share
        module = module.replace(f"@parity.scenario\ndef {name}(xp):",
                                f"@parity.scenario(params={{'n': list(range({count}))}})\ndef {name}(xp, n):")
    assert module.count("params=") == 2
    (scenarios / "fragile_mod.py").write_text(module)
    for side in ("gold", "cand"):
        parity("run", "--backend", "gold", "--out", tmp_path / side, "-q", "--scenarios", scenarios, check=0)
    proc = parity("compare", tmp_path / "gold", tmp_path / "cand", "--jobs", "2", "--scenarios", scenarios,
                  "--json", tmp_path / "r.json", env={"JOBS_TEST_ABORT_ON_REBUILD": "1"}, check=1)
    found = json.loads((tmp_path / "r.json").read_text())["scenarios"]
    assert len(found) == 121
    assert [s["status"] for s in found if s["id"] != "fragile_mod.fragile"] == ["pass"] * 120, proc.stderr
    fragile = next(s for s in found if s["id"] == "fragile_mod.fragile")
    assert fragile["status"] == "error" and "compare process died comparing it (signal 6" in fragile["message"]
    assert [s["id"] for s in found].index("fragile_mod.fragile") == 30  # in order, as one process reports them


IMPORT_LOGGING = """
    import os
    import pathlib

    import parity

    with open(pathlib.Path(os.environ["JOBS_TEST_LOG"]), "a") as log:
        log.write(f"{os.getpid()} {__name__}\\n")


    @parity.scenario(params={"n": list(range(4))})
    def s(xp, n):
        return {"x": xp.arange(n + 1.0)}
"""


def imports_by_process(log: Path) -> dict:
    """{pid: [module, ...]} of the JOBS_TEST_LOG lines the scenario modules wrote when imported."""
    by_process = {}
    for line in log.read_text().splitlines():
        pid, module = line.split()
        by_process.setdefault(pid, []).append(module.rpartition(".")[2])
    return by_process


def run_logging_imports(tmp_path, scenarios, backend, jobs, *extra, check=0):
    """Runs with the import log on; returns ({pid: modules it imported}, the manifest's records, {result: bytes})."""
    out, log = tmp_path / f"{Path(str(backend)).stem}-j{jobs}", tmp_path / f"imports-{Path(str(backend)).stem}-{jobs}.log"
    proc = parity("run", "--backend", backend, "--out", out, "-q", "--scenarios", scenarios, "--jobs", jobs, *extra,
                  env={"JOBS_TEST_LOG": str(log)}, check=check)
    manifest = json.loads((out / "manifest.json").read_text())
    return (imports_by_process(log), {s["id"]: s for s in manifest["scenarios"]},
            {p.name: p.read_bytes() for p in (out / "results").iterdir()}, proc)


def logging_modules(tmp_path, count=6):
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    modules = [f"mod{i}" for i in range(count)]
    for name in modules:
        (scenarios / f"{name}.py").write_text(textwrap.dedent(IMPORT_LOGGING))
    return scenarios, modules


def outcomes(records: dict) -> list:
    return [(i, s["status"], s["file"]) for i, s in records.items()]


def test_run_jobs_of_a_fork_safe_backend_imports_every_module_once_and_writes_what_one_worker_writes(tmp_path):
    """The workers are forks of one process that loaded the backend and imported every scenario module once (README
    "Command line"): each worker importing its share of the modules still imported the heavy libraries in each."""
    scenarios, modules = logging_modules(tmp_path)
    results = {}
    for jobs in (1, 2, 3):
        by_process, records, files, _ = run_logging_imports(tmp_path, scenarios, "gold", jobs)
        assert list(by_process.values()) == [modules], by_process
        results[jobs] = (outcomes(records), files)
    assert len(results[1][0]) == 24 and results[2] == results[1] and results[3] == results[1]


def test_run_jobs_of_a_backend_that_is_not_fork_safe_has_each_worker_import_its_share(tmp_path):
    """FORK_SAFE = False: each of N workers imports every N-th module (the first merges what they found into the
    plan), and the results are those of the forked workers."""
    scenarios, modules = logging_modules(tmp_path)
    _, _, forked, _ = run_logging_imports(tmp_path, scenarios, "gold", 2)
    backend = not_fork_safe_backend(tmp_path)
    for jobs in (1, 2, 3):
        by_process, records, files, _ = run_logging_imports(tmp_path, scenarios, backend, jobs)
        assert set().union(*by_process.values()) == set(modules)
        if jobs == 1:
            assert list(by_process.values()) == [modules]
        else:  # one whose share is done imports another's module for the last scenarios of that share
            assert len(by_process) >= jobs and min(map(len, by_process.values())) < len(modules), by_process
        assert len(records) == 24 and {s["status"] for s in records.values()} == {"ok"}
        assert files == forked


FAULTS_AMONG_IMPORTS = IMPORT_LOGGING.replace("""
    @parity.scenario(params={"n": list(range(4))})
    def s(xp, n):
        return {"x": xp.arange(n + 1.0)}
""", """
    @parity.scenario(params={"n": list(range(8))})
    def s(xp, n):
        if n == 2:
            os.abort()
        if n == 5:
            import time
            time.sleep(120)
        return {"x": xp.arange(n + 1.0)}
""")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_forked_worker_that_crashes_or_times_out_is_replaced_by_a_new_fork_without_importing_again(tmp_path, jobs):
    """The crashed and the stopped scenario are blamed, the rest runs in forks of the same server: no module is
    imported again (an exec'd replacement imported its part again)."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "faulty.py").write_text(textwrap.dedent(FAULTS_AMONG_IMPORTS))
    by_process, records, _, proc = run_logging_imports(tmp_path, scenarios, "gold", jobs, "--timeout", "3", check=1)
    assert list(by_process.values()) == [["faulty"]], by_process
    status = {i: (s["status"], s.get("error", {}).get("message", "")) for i, s in records.items()}
    assert status.pop("faulty.s[n=2]")[0] == "crash" and "signal 6" in records["faulty.s[n=2]"]["error"]["message"]
    assert status.pop("faulty.s[n=5]")[0] == "timeout", proc.stderr
    assert {s for s, _ in status.values()} == {"ok"} and len(status) == 6, status


RUN_LOGGING = """
    import os
    import time

    import parity


    @parity.scenario(params={"n": list(range(6))})
    def s(xp, n):
        if n == 0:
            time.sleep(1.0)  # a worker forked late under load still starts its run before the other reaches its end
        with open(os.environ["JOBS_TEST_LOG"], "a") as log:
            log.write(f"{__name__.rpartition('.')[2]} {n} {os.getpid()}\\n")
        return {"x": xp.arange(n + 1.0)}
"""


def test_run_jobs_of_a_fork_server_gives_each_worker_a_contiguous_run_of_the_modules(tmp_path):
    """Neighbouring modules share what they start lazily in the process that runs them (joblib_parallel and known_bugs
    one loky pool): each of the fork server's workers takes a contiguous run of the modules, not every other one (a
    worker that is done still takes scenarios from the end of the other's run, so only each module's first scenario
    is sure to run in the worker of its run)."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    for i in range(4):
        (scenarios / f"mod{i}.py").write_text(textwrap.dedent(RUN_LOGGING))
    log = tmp_path / "ran.log"
    parity("run", "--backend", "gold", "--out", tmp_path / "out", "-q", "--scenarios", scenarios, "--jobs", 2,
           env={"JOBS_TEST_LOG": str(log)}, check=0)
    first = {module: pid for module, n, pid in map(str.split, log.read_text().splitlines()) if n == "0"}
    assert first["mod0"] == first["mod1"] != first["mod2"] == first["mod3"], log.read_text()


BLAS = """
    import parity


    @parity.scenario(params={"n": [64, 400]})
    def products(xp, rng, n):
        a = rng.standard_normal((n, n))
        return {"aat": a @ a.T, "solve": xp.linalg.solve(a + n * xp.eye(n), a[:, 0]),
                "singular": xp.linalg.svd(a, compute_uv=False)}
"""


def test_gold_runs_are_bitwise_identical_whatever_the_jobs_and_blas_threads_survive_the_fork(tmp_path):
    """Two -j 2 runs (forked workers, whose BLAS thread pool the server started when it imported NumPy) write the
    same bytes as each other and as -j 1; a BLAS that hung in a fork would time these scenarios out."""
    scenarios = tmp_path / "blas"
    scenarios.mkdir()
    (scenarios / "blas.py").write_text(textwrap.dedent(BLAS))
    results = []
    for name, jobs in (("a", 2), ("b", 2), ("one", 1)):
        out = tmp_path / name
        parity("run", "--backend", "gold", "--out", out, "-q", "--scenarios", E2E / "scenarios", scenarios, "--jobs",
               jobs, "--timeout", "120", check=1)
        manifest = json.loads((out / "manifest.json").read_text())
        assert {s["id"]: s["status"] for s in manifest["scenarios"] if s["id"].startswith("blas.")} == {
            "blas.products[n=64]": "ok", "blas.products[n=400]": "ok"}
        results.append({p.name: p.read_bytes() for p in (out / "results").iterdir()})
    assert len(results[0]) > 4 and results[0] == results[1] == results[2]


SLOW_TO_IMPORT = """
    import os
    import pathlib
    import time

    pathlib.Path(os.environ["JOBS_TEST_MARK"]).touch()
    time.sleep(60)
"""


def test_run_jobs_a_signal_while_the_first_module_imports_is_an_interruption(tmp_path):
    """SIGTERM before any scenario ran (the fork server still imports the scenario modules, before it is ready) ends
    the run as an interruption, exit 130 (README "Ctrl-C or SIGTERM"), not as a usage error (exit 2), and leaves no
    results."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "a_slow.py").write_text(textwrap.dedent(SLOW_TO_IMPORT))
    mark, out = tmp_path / "mark", tmp_path / "out"
    proc = subprocess.Popen([BIN, "run", "--backend", "gold", "--out", out, "--scenarios", scenarios, "--jobs", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JOBS_TEST_MARK": str(mark)})
    deadline = time.monotonic() + 60
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "stopped by signal 15 before any scenario ran" in err and not (out / "results").exists()


LOGS_ITS_WORKER = """
    import os
    import signal

    import parity


    def log(name):
        print(f"printed by {name}", flush=True)
        with open(os.environ["JOBS_TEST_LOG"], "a") as f:
            f.write(f"{name} {os.getpid()}\\n")


    @parity.scenario()
    def first(xp):
        log("first")
        return {"x": xp.arange(2.0)}


    @parity.scenario()
    def dies(xp):
        log("dies")
        os.kill(os.getpid(), signal.SIGKILL)


    @parity.scenario()
    def after(xp):
        log("after")
        return {"x": xp.arange(3.0)}
"""


def test_run_a_worker_killed_with_a_scenario_queued_behind_blames_its_own_and_the_queued_one_runs_elsewhere(tmp_path):
    """The supervisor queues the next scenario ahead, and a worker announces it (started) in the same write as the
    last one's done when its command is there already. A death is still the started scenario's, with its own output
    only (the restart line goes out before that write); the one queued behind it runs in the next worker."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "logs.py").write_text(textwrap.dedent(LOGS_ITS_WORKER))
    log, out = tmp_path / "log", tmp_path / "out"
    parity("run", "--backend", "gold", "--out", out, "--scenarios", scenarios, "--jobs", 1,
           env={"JOBS_TEST_LOG": str(log)}, check=1)
    records = {s["id"]: s for s in json.loads((out / "manifest.json").read_text())["scenarios"]}
    statuses = {i: r["status"] for i, r in records.items()}
    assert statuses == {"logs.first": "ok", "logs.dies": "crash", "logs.after": "ok"}
    error = records["logs.dies"]["error"]
    assert "died running it (signal 9" in error["message"]
    assert "printed by dies" in error["traceback"] and "printed by first" not in error["traceback"]
    pids = dict(line.split() for line in log.read_text().splitlines())
    assert pids["first"] == pids["dies"] != pids["after"]


SLEEPS = """
    import time

    import parity


    @parity.scenario(params={"n": list(range(3))})
    def sleeps(xp, n):
        time.sleep(2)
        return {"x": xp.arange(n + 1.0)}
"""


def test_run_a_scenario_queued_behind_others_times_out_from_its_own_start(tmp_path):
    """With -j 1 each scenario waits queued behind the one before (2 s each) before it starts: --timeout 3 is measured
    from its start, so none times out; measured from when it was queued, the second and third would."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "slow.py").write_text(textwrap.dedent(SLEEPS))
    out = tmp_path / "out"
    parity("run", "--backend", "gold", "--out", out, "--scenarios", scenarios, "--jobs", 1, "--timeout", 3, check=0)
    records = json.loads((out / "manifest.json").read_text())["scenarios"]
    assert [(s["id"], s["status"]) for s in records] == [(f"slow.sleeps[n={n}]", "ok") for n in range(3)]


SHORT_WITH_FAULTS = """
    import os
    import signal
    import time

    import parity


    @parity.scenario(params={"n": list(range(60))})
    def short(xp, n):
        if n == 20:
            os.kill(os.getpid(), signal.SIGKILL)
        if n == 40:
            time.sleep(60)
        return {"x": xp.arange(n + 1.0)}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_of_short_scenarios_sent_ahead_in_batches_blames_each_fault_on_its_own(tmp_path, jobs):
    """Scenarios that take under a millisecond are sent ahead several at a time and their replies taken in batches
    (runner.cc, kNapSeconds): a worker that dies or hangs still has only the scenario it ran blamed, with the right
    status, and every scenario queued behind it runs in the next worker."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "short.py").write_text(textwrap.dedent(SHORT_WITH_FAULTS))
    out = tmp_path / "out"
    parity("run", "--backend", "gold", "--out", out, "--scenarios", scenarios, "--jobs", jobs, "--timeout", 3,
           "-q", check=1)
    records = json.loads((out / "manifest.json").read_text())["scenarios"]
    faults = {20: "crash", 40: "timeout"}
    assert [(s["id"], s["status"]) for s in records] == [
        (f"short.short[n={n}]", faults.get(n, "ok")) for n in range(60)]
    assert all((out / s["file"]).is_file() for s in records if s["status"] == "ok")


SLOW_REDUCER = """
    import os
    import time

    import parity
    import parity.reducers


    class Slow:
        def __init__(self, v):
            self.v = v


    def rebuild(state):
        mark = os.environ.get("JOBS_TEST_MARK")
        if mark and not os.path.exists(mark):  # the first rebuild of this compare: the test signals, then says so
            open(mark, "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(mark + ".signalled") and time.monotonic() < deadline:
                time.sleep(0.01)
        if os.environ.get("JOBS_TEST_FOREVER"):  # a reducer that never returns: no check of the compare's is reached
            while True:
                time.sleep(0.01)
        return Slow(state["v"])


    parity.reducers.register(Slow, reduce=lambda s: {"v": s.v}, rebuild=rebuild)


    @parity.scenario(params={"i": list(range(4))})
    def slow(xp, i):
        return {"s": Slow(i), "a": xp.arange(4.0) + i}
"""


@pytest.mark.parametrize("command", ["compare", "check"])
@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("how", ["SIGINT to the group", "SIGTERM to parity"])
def test_compare_stopped_by_a_signal_writes_no_report_and_exits_130(tmp_path, command, jobs, how):
    """Ctrl-C (SIGINT to the whole group) or a CI job's cancel (SIGTERM to parity) during a compare, `check`'s too: it
    was each compare process's current scenario's 'internal error: KeyboardInterrupt', the rest compared on and the
    reports written (exit 1), which a later --baseline took for new failures; SIGTERM killed it (143)."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "slow_mod.py").write_text(textwrap.dedent(SLOW_REDUCER))
    if command == "compare":
        for side in ("gold", "cand"):
            parity("run", "--backend", "gold", "--out", tmp_path / side, "-q", "--scenarios", scenarios, check=0)
        args = ["compare", tmp_path / "gold", tmp_path / "cand"]
    else:
        args = ["check", "--backend", "fsproxy", "--out", tmp_path / "check"]
    mark, report = tmp_path / "rebuilding", tmp_path / "r.json"
    proc = subprocess.Popen([BIN, *args, "--jobs", str(jobs), "--scenarios", scenarios, "--json", report],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "JOBS_TEST_MARK": str(mark)}, start_new_session=True)
    deadline = time.monotonic() + 120
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert mark.exists(), "no rebuild began"
    sig = signal.SIGINT if how == "SIGINT to the group" else signal.SIGTERM
    if how == "SIGINT to the group":
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    Path(f"{mark}.signalled").touch()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert re.search(rf"parity compare: stopped by signal {int(sig)} after \d of 4 scenarios; no report written", err), err
    assert not report.exists() and "KeyboardInterrupt" not in out + err


def test_a_second_ctrl_c_ends_a_compare_whose_reducer_never_returns(tmp_path):
    """The first Ctrl-C waits for the compare's next check; Python code that never reaches one (a scenario's reducer
    in an endless loop, under --jobs 1) had left no way to stop it but SIGKILL. The second ends it by SIGINT."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "slow_mod.py").write_text(textwrap.dedent(SLOW_REDUCER))
    for side in ("gold", "cand"):
        parity("run", "--backend", "gold", "--out", tmp_path / side, "-q", "--scenarios", scenarios, check=0)
    mark = tmp_path / "rebuilding"
    Path(f"{mark}.signalled").touch()  # the reducer goes on at once, into its endless loop
    proc = subprocess.Popen([BIN, "compare", tmp_path / "gold", tmp_path / "cand", "--jobs", "1", "--scenarios",
                             scenarios],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "JOBS_TEST_MARK": str(mark), "JOBS_TEST_FOREVER": "1"})
    try:
        deadline = time.monotonic() + 120
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert mark.exists(), "no rebuild began"
        os.killpg(proc.pid, signal.SIGINT)
        with pytest.raises(subprocess.TimeoutExpired):  # the first waits for a check that never comes
            proc.wait(timeout=0.5)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGINT
