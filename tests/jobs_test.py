"""`--jobs` for run and compare: the same results and reports whatever the number of processes (README "Command line")."""
import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

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


def test_run_jobs_has_no_worker_import_every_scenario_module_and_writes_what_one_worker_writes(tmp_path):
    """Each of N workers imports every N-th module (the first merges what they found into the plan): importing every
    module in every worker had cost each worker of the bundled corpus 1-2 s before its first scenario."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    modules = [f"mod{i}" for i in range(6)]
    for name in modules:
        (scenarios / f"{name}.py").write_text(textwrap.dedent(IMPORT_LOGGING))
    results = {}
    for jobs in (1, 2, 3):
        log = tmp_path / f"imports-{jobs}.log"
        parity("run", "--backend", "gold", "--out", tmp_path / f"j{jobs}", "-q", "--scenarios", scenarios, "--jobs",
               jobs, env={"JOBS_TEST_LOG": str(log)}, check=0)
        by_worker = {}
        for line in log.read_text().splitlines():
            pid, module = line.split()
            by_worker.setdefault(pid, set()).add(module.rpartition(".")[2])
        assert set().union(*by_worker.values()) == set(modules)
        if jobs == 1:
            assert list(by_worker.values()) == [set(modules)]
        else:
            assert len(by_worker) == jobs and min(map(len, by_worker.values())) < len(modules), by_worker
        manifest = json.loads((tmp_path / f"j{jobs}" / "manifest.json").read_text())
        results[jobs] = ([(s["id"], s["status"], s["file"]) for s in manifest["scenarios"]],
                         {p.name: p.read_bytes() for p in (tmp_path / f"j{jobs}" / "results").iterdir()})
    assert len(results[1][0]) == 24 and results[2] == results[1] and results[3] == results[1]
