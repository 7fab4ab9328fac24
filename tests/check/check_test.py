"""`parity check`: the gold and candidate runs side by side, then their compare, as one command (README "parity check")."""
import json
import os
import re
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from jobs_test import without_timings  # the shared test helpers (tests/conftest.py puts tests/ on the path)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
E2E = REPO / "tests" / "e2e" / "scenarios"
FSPROXY = REPO / "fixtures" / "fsproxy.py"


def parity(*args, env=None, cwd=None, check=None, environ=None):
    base = dict(os.environ) if environ is None else environ
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**base, **(env or {})})
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}\n{proc.stderr}"
    return proc


def comparable(report: Path, base: Path):
    """The compare JSON with its timings blanked and the directory the runs went under named BASE."""
    return without_timings(json.loads(report.read_text().replace(str(base), "BASE")))


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """One check of the e2e scenarios against broken.perturb (passes, failures of several checks, an error), and the
    same by hand: run, run, compare with the flags check says it passes on."""
    tmp = tmp_path_factory.mktemp("check")
    proc = parity("check", "--backend", "broken.perturb", "--scenarios", E2E, "--out", tmp / "c", "--json",
                  tmp / "c.json", "--junit", tmp / "c.xml", check=1)
    hand = tmp / "h"
    parity("run", "--backend", "gold", "--scenarios", E2E, "--out", hand / "gold", "-q", check=1)
    parity("run", "--backend", "broken.perturb", "--role", "candidate", "--scenarios", E2E, "--out",
           hand / "candidate", "-q", check=1)
    parity("compare", hand / "gold", hand / "candidate", "--scenarios", E2E, "--trust-backend", "broken.perturb",
           "--json", tmp / "h.json", "--junit", tmp / "h.xml", check=1)
    return tmp, proc


def test_check_reports_what_run_run_and_compare_report(checked):
    tmp, _ = checked
    assert comparable(tmp / "c.json", tmp / "c") == comparable(tmp / "h.json", tmp / "h")
    junit = [re.sub(r'(time|timestamp)="[^"]*"', "", (tmp / f"{w}.xml").read_text().replace(str(tmp / w), "BASE"))
             for w in ("c", "h")]
    assert junit[0] == junit[1]
    summary = json.loads((tmp / "c.json").read_text())["summary"]
    assert summary["pass"] and summary["fail"] and summary["error"], summary


def test_check_keeps_both_results_directories_under_out(checked):
    tmp, _ = checked
    for side, backend, role in (("gold", "gold", "gold"), ("candidate", "broken.perturb", "candidate")):
        manifest = json.loads((tmp / "c" / side / "manifest.json").read_text())
        assert (manifest["backend"]["name"], manifest["backend"]["role"], manifest["complete"]) == (backend, role, True)


def test_each_runs_lines_are_marked_with_its_side(checked):
    _, proc = checked
    lines = proc.stderr.splitlines()
    banners = [line for line in lines if "| backend " in line and "compare" not in line]
    assert sorted(b.split("]")[0] + "]" for b in banners) == ["[candidate]", "[gold]"], proc.stderr
    assert any(line.startswith("[candidate] parity run: ") for line in lines), proc.stderr
    # The scenario that raises is each run's failure, shown on its marked lines; the compare's own lines are unmarked.
    assert any(line.startswith("[gold] ") and "basic.raises" in line for line in lines), proc.stderr
    assert any(line.startswith("parity compare: ") for line in lines), proc.stderr


def test_a_run_that_cannot_start_ends_the_check_before_the_compare(tmp_path):
    proc = parity("check", "--backend", "no_such_backend_xyz", "--scenarios", E2E, "--out", tmp_path / "o", "--json",
                  tmp_path / "r.json", check=2)
    assert "[candidate] parity run: " in proc.stderr and "no_such_backend_xyz" in proc.stderr, proc.stderr
    assert "the candidate run exited 2: nothing compared" in proc.stderr, proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_misspelt_scenarios_path_is_named_and_nothing_is_compared(tmp_path):
    missing = tmp_path / "no_such_scenarios_dir"
    proc = parity("check", "--backend", "fsproxy", "--scenarios", missing, "--out", tmp_path / "o", "--json",
                  tmp_path / "r.json", check=2)
    for side in ("gold", "candidate"):
        assert f"[{side}] parity run: scenario path does not exist: {missing}" in proc.stderr, proc.stderr
    assert "nothing compared" in proc.stderr and not (tmp_path / "r.json").exists(), proc.stderr


def test_a_selection_of_nothing_exits_5(tmp_path):
    proc = parity("check", "--backend", "fsproxy", "--scenarios", E2E, "-k", "no_such_scenario_xyz", "--out",
                  tmp_path / "o", check=5)
    assert "nothing compared" in proc.stderr, proc.stderr


def test_without_a_candidate_backend_it_says_how_to_give_one(tmp_path):
    environ = {k: v for k, v in os.environ.items() if k != "PARITY_BACKEND"}
    proc = parity("check", "--scenarios", E2E, "--out", tmp_path / "o", environ=environ, check=2)
    assert "no candidate backend: give --backend NAME (or set PARITY_BACKEND)" in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()


def test_check_trusts_the_candidate_and_the_scenarios_it_ran(tmp_path):
    """A backend file and a scenario directory that are not built in: compare alone skips the checks that need their
    reducers until told to trust them; check ran them itself, so its compare imports them and skips nothing. The
    repro command names both as absolute paths, whatever the working directory check was given them from."""
    (tmp_path / "mine.py").write_text(FSPROXY.read_text())
    scenarios = Path(os.path.relpath(E2E, tmp_path))
    parity("check", "--backend", "mine.py", "--scenarios", scenarios, "--only", "basic.matrix", "--out", "o",
           "--json", "r.json", cwd=tmp_path, check=1)
    report = json.loads((tmp_path / "r.json").read_text())
    [scenario] = report["scenarios"]
    assert not scenario.get("skipped_checks"), scenario.get("skipped_checks")
    assert f"--trust-backend {tmp_path / 'mine.py'} --scenarios {E2E}" in scenario["repro"], scenario["repro"]
    parity("compare", "o/gold", "o/candidate", "--json", "alone.json", cwd=tmp_path, check=1)
    alone = json.loads((tmp_path / "alone.json").read_text())["scenarios"][0]
    kinds = {k["kind"] for k in alone.get("skipped_checks", [])}
    assert kinds == {"untrusted-backend", "untrusted-scenarios"}, alone.get("skipped_checks")


def test_its_compare_loads_the_backends_while_the_slower_run_finishes_and_decides_as_compare_does(tmp_path):
    """Once the gold run has ended, check loads what its compare loads first (the backends' reducers) on the core that
    run left idle while the candidate run goes on (the candidate's install sleeps here, so the gold run ends first);
    the compare then decides exactly as `compare` does by hand with the same trust."""
    marks = tmp_path / "marks"
    (tmp_path / "slow.py").write_text(FSPROXY.read_text() + textwrap.dedent(f"""
        import os as _os, time as _time
        def _mark(what):
            with open({str(marks)!r}, "a") as f:
                f.write(f"{{what}} {{_os.getpid()}} {{_time.time()}}\\n")
        _mark("import")
        _install = install
        def install():
            _time.sleep(1.5)
            _mark("installed")
            _install()
    """))
    proc = subprocess.Popen([BIN, "check", "--backend", "slow.py", "--scenarios", E2E, "--only", "basic.matrix",
                             "--only", "basic.raises", "--out", "o", "--json", "r.json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1, err
    marks = [(what, int(pid), float(at)) for what, pid, at in map(str.split, marks.read_text().splitlines())]
    loaded = [at for what, pid, at in marks if what == "import" and pid == proc.pid]
    installed = [at for what, pid, at in marks if what == "installed" and pid != proc.pid]
    assert loaded and installed and loaded[0] < min(installed), marks
    parity("compare", "o/gold", "o/candidate", "--trust-backend", tmp_path / "slow.py", "--scenarios", E2E, "--json",
           "hand.json", cwd=tmp_path, check=1)
    assert comparable(tmp_path / "r.json", tmp_path) == comparable(tmp_path / "hand.json", tmp_path)


def test_the_run_still_going_when_the_other_ends_is_given_its_workers_and_decides_as_before(tmp_path):
    """When one run ends, the other gets as many more workers as each run had (forks of its fork server) for what it has
    not yet sent: here the candidate, 50 ms slower a scenario, runs 40 scenarios with -j 1 in two processes after the
    gold run ended. Every scenario still has its one record, in order, and compare decides as it does by hand."""
    (tmp_path / "s.py").write_text(textwrap.dedent("""
        import os
        import parity

        @parity.scenario(params={"k": list(range(40))})
        def pid(xp, k):
            with open(os.environ["PIDS"], "a") as f:
                f.write(f"{os.environ.get('SIDE', 'gold')} {k} {os.getpid()}\\n")
            return {"k": xp.arange(k + 1) * 0.5}
    """))
    (tmp_path / "slow.py").write_text(textwrap.dedent("""
        import os, time
        import numpy
        __version__ = "1.0"
        def namespace():
            return numpy
        def execute(fn, *args, **kwargs):
            os.environ["SIDE"] = "candidate"
            time.sleep(0.05)
            return fn(*args, **kwargs)
    """))
    pids = tmp_path / "pids"
    parity("check", "--backend", "slow.py", "--scenarios", "s.py", "--out", "o", "--json", "r.json", "-j", "1",
           cwd=tmp_path, env={"PIDS": str(pids)}, check=0)
    seen = {}
    for side, k, pid in map(str.split, pids.read_text().splitlines()):
        seen.setdefault(side, []).append((int(k), int(pid)))
    assert sorted(k for k, _ in seen["candidate"]) == list(range(40)), seen  # each once
    assert len({pid for _, pid in seen["gold"]}) == 1, seen
    assert len({pid for _, pid in seen["candidate"]}) == 2, seen
    manifest = json.loads((tmp_path / "o" / "candidate" / "manifest.json").read_text())
    assert [s["id"] for s in manifest["scenarios"]] == [f"s.pid[k={k}]" for k in range(40)]
    parity("compare", "o/gold", "o/candidate", "--trust-backend", tmp_path / "slow.py", "--scenarios",
           tmp_path / "s.py", "--json", "hand.json", cwd=tmp_path, check=0)
    assert comparable(tmp_path / "r.json", tmp_path) == comparable(tmp_path / "hand.json", tmp_path)


def test_the_configuration_file_gives_checks_defaults(tmp_path):
    (tmp_path / "parity.toml").write_text(f'backend = "broken.perturb"\nscenarios = ["{E2E}"]\njson = "r.json"\n')
    proc = parity("check", "--only", "basic.matrix", "--out", "o", cwd=tmp_path, check=1)
    assert f"parity check: configuration: {tmp_path / 'parity.toml'}" in proc.stderr, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in report["scenarios"]] == ["basic.matrix"]
    assert json.loads((tmp_path / "o" / "candidate" / "manifest.json").read_text())["backend"]["name"] == \
        "broken.perturb"


SLOW = """
    import os
    import pathlib

    import parity


    @parity.scenario()
    def sleeps(xp):
        pathlib.Path(os.environ["CHECK_TEST_MARKS"], str(os.getpid())).touch()
        import time
        time.sleep(60)
        return {"x": xp.arange(2.0)}
"""


def test_sigterm_stops_both_runs_and_compares_nothing(tmp_path):
    """SIGTERM to `parity check` alone (a CI job's timeout) reaches both runs, which stop as `parity run` does; the
    check exits 130 without comparing."""
    scenarios, marks = tmp_path / "scen", tmp_path / "marks"
    scenarios.mkdir()
    marks.mkdir()
    (scenarios / "slow.py").write_text(textwrap.dedent(SLOW))
    proc = subprocess.Popen([BIN, "check", "--backend", "fsproxy", "--scenarios", scenarios, "--out", tmp_path / "o",
                             "--json", tmp_path / "r.json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "CHECK_TEST_MARKS": str(marks)})
    deadline = time.monotonic() + 120
    while len(list(marks.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(marks.iterdir())) == 2, "both runs' scenarios should have started"
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 30, "the runs should stop at once, not when their scenarios end"
    for side in ("gold", "candidate"):
        assert f"[{side}] parity run: stopped by signal 15" in err, err
        assert json.loads((tmp_path / "o" / side / "manifest.json").read_text())["complete"] is False
    assert "nothing compared" in err and not (tmp_path / "r.json").exists()


RESUMABLE = """
    import os
    import pathlib

    import parity


    def mark(name):
        with open(os.environ["CHECK_TEST_LOG"], "a") as f:
            f.write(name + "\\n")


    @parity.scenario()
    def a_quick(xp):
        mark("a_quick")
        return {"x": xp.arange(3.0)}


    @parity.scenario()
    def b_slow_once(xp):
        mark("b_slow_once")
        if not os.environ.get("CHECK_TEST_QUICK"):
            import time
            time.sleep(60)
        return {"y": xp.ones((2, 2))}
"""


def test_resume_finishes_an_interrupted_check_running_only_what_did_not_finish(tmp_path):
    """A check stopped by SIGTERM (a CI job's timeout) and resumed into the same --out: each run keeps what finished,
    runs only the rest, and the compare judges every scenario as an uninterrupted check's does."""
    scenarios, log = tmp_path / "scen", tmp_path / "log"
    scenarios.mkdir()
    (scenarios / "resumable.py").write_text(textwrap.dedent(RESUMABLE))
    argv = ["check", "--backend", "fsproxy", "--scenarios", scenarios, "--out", tmp_path / "o", "--json",
            tmp_path / "r.json"]
    proc = subprocess.Popen([BIN, *map(str, argv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "CHECK_TEST_LOG": str(log)})
    deadline = time.monotonic() + 120
    while (not log.exists() or log.read_text().split().count("b_slow_once") < 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert sorted(log.read_text().split()) == ["a_quick", "a_quick", "b_slow_once", "b_slow_once"]
    resumed = parity(*argv, "--resume", env={"CHECK_TEST_LOG": str(log), "CHECK_TEST_QUICK": "1"}, check=0)
    assert sorted(log.read_text().split()) == ["a_quick", "a_quick", *["b_slow_once"] * 4], resumed.stderr
    for side in ("gold", "candidate"):
        said = f"[{side}] parity run: resuming {tmp_path / 'o' / side}: 1 of 2 scenarios already finished"
        assert said in resumed.stderr, resumed.stderr
        manifest = json.loads((tmp_path / "o" / side / "manifest.json").read_text())
        assert manifest["complete"] is True and manifest["run"]["resumed"] is True
    statuses = {s["id"]: s["status"] for s in json.loads((tmp_path / "r.json").read_text())["scenarios"]}
    assert statuses == {"resumable.a_quick": "pass", "resumable.b_slow_once": "pass"}, statuses


def test_resume_of_a_check_that_never_ran_is_refused_naming_the_run(tmp_path):
    proc = parity("check", "--backend", "fsproxy", "--scenarios", E2E, "--out", tmp_path / "never", "--resume",
                  "--json", tmp_path / "r.json", check=2)
    assert "[gold] parity run: --resume: nothing to resume" in proc.stderr, proc.stderr
    assert "nothing compared" in proc.stderr and not (tmp_path / "r.json").exists()


def test_a_run_that_ends_the_check_stops_the_other_instead_of_leaving_it_running(tmp_path):
    """A candidate backend that cannot load ends the check (exit 2) at once: the gold run, a scenario of a minute in
    progress, is stopped a moment later as SIGTERM would stop it (its manifest incomplete), not left to finish for
    nothing; the check's code is the refusal's, not the stopped run's 130."""
    scenarios, marks = tmp_path / "scen", tmp_path / "marks"
    scenarios.mkdir()
    marks.mkdir()
    (scenarios / "slow.py").write_text(textwrap.dedent(SLOW))
    started = time.monotonic()
    proc = parity("check", "--backend", "no_such_backend_xyz", "--scenarios", scenarios, "--out", tmp_path / "o",
                  "--json", tmp_path / "r.json", env={"CHECK_TEST_MARKS": str(marks)}, check=2)
    assert time.monotonic() - started < 30, "the gold run should have been stopped, not waited for"
    assert "parity check: the candidate run exited 2: stopping the gold run" in proc.stderr, proc.stderr
    assert "[gold] parity run: stopped by signal 15" in proc.stderr, proc.stderr
    assert "the gold run exited 130, the candidate run exited 2: nothing compared" in proc.stderr, proc.stderr
    assert json.loads((tmp_path / "o" / "gold" / "manifest.json").read_text())["complete"] is False
    assert not (tmp_path / "r.json").exists()


FORKED = """
    import ctypes
    import os
    import pathlib

    import parity


    @parity.scenario()
    def a_argv(xp):
        with open(os.environ["CHECK_TEST_ARGV"], "a") as f:
            f.write(pathlib.Path("/proc/self/cmdline").read_bytes().split(b"\\0")[1].decode() + "\\n")
        return {"x": xp.arange(3.0)}


    @parity.scenario()
    def b_crashes(xp):
        ctypes.string_at(0)


    @parity.scenario()
    def c_after(xp):
        return {"y": xp.ones((2, 2))}


    @parity.scenario()
    def d_interrupts_itself(xp):
        import signal
        import time
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            seen = "no KeyboardInterrupt"
        except KeyboardInterrupt:
            seen = "KeyboardInterrupt"
        with open(os.environ["CHECK_TEST_ARGV"], "a") as f:
            f.write(seen.replace(" ", "_") + "\\n")
        return {"z": xp.zeros(1)}
"""


def test_the_runs_workers_are_forks_of_the_check_and_a_crash_is_still_one_scenarios(tmp_path):
    """The workers begin as copies of the check's process, its interpreter and NumPy loaded (no `parity _worker`
    executed: their command line is the check's); a scenario that kills its worker is still that scenario's crash,
    and the next worker runs the rest."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "forked.py").write_text(textwrap.dedent(FORKED))
    argv = tmp_path / "argv"
    parity("check", "--backend", "fsproxy", "--scenarios", scenarios, "--out", tmp_path / "o", "--json",
           tmp_path / "r.json", env={"CHECK_TEST_ARGV": str(argv)}, check=1)
    # Each worker's signals are an executed worker's, not its run's supervisor's: a SIGINT is a KeyboardInterrupt.
    assert sorted(argv.read_text().split()) == ["KeyboardInterrupt", "KeyboardInterrupt", "check", "check"]
    statuses = {s["id"]: s["status"] for s in json.loads((tmp_path / "r.json").read_text())["scenarios"]}
    assert statuses == {"forked.a_argv": "pass", "forked.b_crashes": "error", "forked.c_after": "pass",
                        "forked.d_interrupts_itself": "pass"}, statuses
    argv.unlink()
    parity("run", "--backend", "gold", "--scenarios", scenarios, "--only", "forked.a_argv", "--out", tmp_path / "r",
           env={"CHECK_TEST_ARGV": str(argv)}, check=0)
    assert argv.read_text().split() == ["_worker"]  # what `parity run` starts: the program executed again


def test_the_bundled_corpus_is_trusted_without_being_named_in_the_repro(tmp_path):
    parity("check", "--backend", "fsproxy", "--only", "array_api.reductions", "--out", tmp_path / "o", "--json",
           tmp_path / "r.json", check=0)
    [scenario] = json.loads((tmp_path / "r.json").read_text())["scenarios"]
    assert scenario["repro"].endswith(" --trust-backend fsproxy"), scenario["repro"]
