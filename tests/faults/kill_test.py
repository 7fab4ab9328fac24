"""The kill test: a run killed outright at random moments leaves a consistent directory that --resume finishes."""
import json
import os
import random
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from e2e_test import results_copy  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
KILLS = 8
SEED = 20261122

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)


def run(out, *extra, env=None):
    return subprocess.run([BIN, "run", "--backend", "gold", "--out", out, "-q", *extra], capture_output=True,
                          text=True, timeout=600, env=env)


def result_files(out):
    return {p.name: p.read_bytes() for p in (out / "results").iterdir()}


def assert_consistent(out):
    """The manifest parses, every file it lists is there, and compare reads them all back (an incomplete run's
    directory compared with a copy of itself passes; one killed before its first scenario finished has nothing to compare,
    which compare reports as the usage error it is)."""
    manifest = json.loads((out / "manifest.json").read_text())
    for s in manifest["scenarios"]:
        for key in ("file", "pickle_file"):
            if s.get(key):
                assert (out / s[key]).is_file(), (s["id"], s[key])
    proc = subprocess.run([BIN, "compare", out, results_copy(out, fresh=True), "-q"], capture_output=True, text=True, timeout=600)
    if manifest["scenarios"]:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 2 and "covered 0 scenarios" in proc.stderr, proc.stderr
    return manifest


def test_runs_killed_at_random_moments_resume_to_the_files_of_an_uninterrupted_run(tmp_path):
    reference = tmp_path / "reference"
    assert run(reference).returncode == 0
    rng = random.Random(SEED)
    out = tmp_path / "killed"
    finished = []
    for _ in range(KILLS):
        manifest = out / "manifest.json"
        before = manifest.stat().st_mtime_ns if manifest.is_file() else 0
        resume = ["--resume"] if before else []
        # A run killed outright leaves its scenarios' temporary directory (runner.cc) here, not in /tmp; the next removes it.
        proc = subprocess.Popen([BIN, "run", "--backend", "gold", "--out", out, "-q", *resume],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "TMPDIR": str(tmp_path)})
        # Some kills come early (while workers start); the others at a random moment after this run has written
        # its manifest, so that they land among scenarios whatever the machine's speed.
        if rng.random() < 0.25:
            time.sleep(rng.uniform(0.0, 0.5))
        else:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None and (
                    not manifest.is_file() or manifest.stat().st_mtime_ns == before):
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 1.5))
        proc.kill()
        proc.wait(timeout=60)
        if manifest.is_file():
            finished.append(len(assert_consistent(out)["scenarios"]))
    assert finished, "no kill left a manifest: the kills all came before the run started"
    assert len(set(finished)) > 1, f"the kills did not land among scenarios: finished counts {finished}"
    last = run(out, "--resume", env={**os.environ, "TMPDIR": str(tmp_path)})
    assert last.returncode == 0, last.stderr
    assert "resuming" in last.stderr
    manifest = assert_consistent(out)
    assert manifest["complete"] is True and manifest["run"]["resumed"] is True
    assert result_files(out) == result_files(reference)
    # Each kill among scenarios left its run's temporary directory; the runs after it removed them (runner.cc).
    assert not list(tmp_path.glob("parity-run-*")), list(tmp_path.glob("parity-run-*"))


def test_a_scenario_whose_worker_is_stopped_leaves_no_file_under_its_names(tmp_path):
    """A worker creates a scenario's files under their own names (atomic_file.h's Publish::in_place): one stopped
    while writing them (its timeout) would leave a partial file there that no record names and that --resume, which
    keeps the timeout's record, would never replace. The run removes them as it records the scenario; here they are
    what an earlier run wrote, cut short as a killed writer leaves them."""
    scenarios = tmp_path / "stuck.py"
    scenarios.write_text('"""Stuck when told to."""\nimport os, time\nimport parity\n\n\n'
                         "@parity.scenario(timeout=2)\ndef stuck(xp):\n"
                         "    if os.environ.get('STUCK'):\n        time.sleep(60)\n"
                         "    return {'x': xp.arange(100000.0)}\n")
    out = tmp_path / "out"
    assert run(out, "--scenarios", scenarios).returncode == 0
    [record] = json.loads((out / "manifest.json").read_text())["scenarios"]
    # The result file (its pickle at its end since manifest version 2), and a pickle file of its own as an earlier
    # parity wrote it (version 1).
    files = [out / record["file"], out / (record["file"] + ".pickle")]
    assert record["pickle_offset"] > 0, record
    for file in files:
        file.write_bytes(files[0].read_bytes()[:100])
    proc = run(out, "--scenarios", scenarios, env={**os.environ, "STUCK": "1"})
    assert proc.returncode == 1, proc.stderr
    [record] = json.loads((out / "manifest.json").read_text())["scenarios"]
    assert record["status"] == "timeout" and not record.get("file") and "pickle_offset" not in record, record
    assert [f.name for f in files if f.exists()] == []


def test_resume_refuses_a_directory_without_a_run_or_of_another_backend(tmp_path):
    proc = run(tmp_path / "nothing", "--resume")
    assert proc.returncode == 2 and "--resume: nothing to resume" in proc.stderr, proc.stderr
    out = tmp_path / "gold"
    assert run(out, "--only", "basic.matrix", "--scenarios", REPO / "tests" / "e2e" / "scenarios").returncode == 0
    proc = subprocess.run([BIN, "run", "--backend", "fsproxy", "--out", out, "--resume", "-q"], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert f"{out} holds a run of backend 'gold', not 'fsproxy': resume it with --backend gold" in proc.stderr


@pytest.mark.parametrize("changed,said", [
    ([], 'paths: ["E2E"], now ['),  # the bundled corpus's path
    (["--only", "basic.integers", "--scenarios", "E2E"], 'only: ["basic.matrix"], now ["basic.integers"]'),
    (["--only", "basic.matrix", "--scenarios", "E2E", "-k", "matrix"], 'keyword: "", now "matrix"'),
], ids=["without its --scenarios", "another --only", "a -k added"])
def test_resume_refuses_another_selection(tmp_path, changed, said):
    """A resume with another selection (forgetting --scenarios ran the bundled corpus) ended 'complete' and exit 0,
    the first selection's finished scenarios dropped from the manifest and their result files left behind."""
    e2e, out = REPO / "tests" / "e2e" / "scenarios", tmp_path / "gold"
    assert run(out, "--only", "basic.matrix", "--scenarios", e2e).returncode == 0
    before = (out / "manifest.json").read_bytes()
    changed = [str(e2e) if a == "E2E" else a for a in changed]
    proc = run(out, "--resume", *changed)
    assert proc.returncode == 2, proc.stderr
    said = said.replace("E2E", str(e2e))
    assert f"{out} holds a run of another selection ({said}" in proc.stderr, proc.stderr
    assert (out / "manifest.json").read_bytes() == before


def test_resume_takes_the_same_selection_however_it_is_spelled(tmp_path):
    """The selection was compared as typed: a config file's absolute --scenarios against the command line's relative
    one, "./scen/" against "scen", or --only in another order, were "another selection" and the resume refused (a
    relative path is taken from where the command runs, as it always is)."""
    out = tmp_path / "gold"
    first = subprocess.run([BIN, "run", "--backend", "gold", "--out", out, "-q", "--scenarios", "./tests/e2e/scenarios/",
                            "--only", "basic.matrix", "--only", "basic.integers"],
                           capture_output=True, text=True, timeout=600, cwd=REPO)
    assert first.returncode == 0, first.stderr
    proc = subprocess.run([BIN, "run", "--backend", "gold", "--out", out, "-q", "--resume", "--scenarios",
                           REPO / "tests" / "e2e" / "scenarios", "--only", "basic.integers", "--only", "basic.matrix"],
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "2 of 2 scenarios already finished" in proc.stderr, proc.stderr
    (tmp_path / "link").symlink_to(REPO / "tests" / "e2e" / "scenarios")  # the same place through a link
    proc = run(out, "--resume", "--scenarios", tmp_path / "link", "--only", "basic.matrix", "--only", "basic.integers")
    assert proc.returncode == 0, proc.stderr


def test_resume_refuses_a_path_spelled_alike_that_leads_elsewhere(tmp_path):
    """"a/link/../scenarios" leads where the link leads, not to "a/scenarios": compared lexically, one was taken for
    the other."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "link").symlink_to(REPO / "tests" / "e2e" / "scenarios")
    (tmp_path / "a" / "scenarios").mkdir()  # another directory, which the lexical spelling names
    (tmp_path / "a" / "scenarios" / "basic.py").write_text(
        "import parity\n\n\n@parity.scenario\ndef matrix(xp):\n    return {'x': xp.arange(2)}\n")
    out = tmp_path / "gold"
    first = run(out, "--only", "basic.matrix", "--scenarios", f"{tmp_path}/a/link/../scenarios")
    assert first.returncode == 0, first.stderr
    proc = run(out, "--resume", "--only", "basic.matrix", "--scenarios", tmp_path / "a" / "scenarios")
    assert proc.returncode == 2 and f"{out} holds a run of another selection" in proc.stderr, proc.stderr


def test_resume_takes_a_recorded_relative_path_from_where_its_run_ran(tmp_path):
    """A relative --scenarios was resolved against the resuming command's directory: from another one, the same place
    ("../A/s") was refused and another directory spelled "s" accepted. The manifest records where the run ran."""
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "s").symlink_to(REPO / "tests" / "e2e" / "scenarios")
    (tmp_path / "B" / "s").mkdir(parents=True)  # another directory of that name, with a scenario of that id
    (tmp_path / "B" / "s" / "basic.py").write_text(
        "import parity\n\n\n@parity.scenario\ndef matrix(xp):\n    return {'x': xp.arange(2)}\n")
    out = tmp_path / "res"

    def run_in(cwd, scenarios, *extra):
        return subprocess.run([BIN, "run", "--backend", "gold", "--out", out, "-q", "--only", "basic.matrix",
                               "--scenarios", scenarios, *extra], capture_output=True, text=True, timeout=600, cwd=cwd)

    assert run_in(tmp_path / "A", "s").returncode == 0
    proc = run_in(tmp_path / "B", "../A/s", "--resume")
    assert proc.returncode == 0, proc.stderr
    proc = run_in(tmp_path / "B", "s", "--resume")
    assert proc.returncode == 2 and f"{out} holds a run of another selection" in proc.stderr, proc.stderr


def test_resume_takes_the_run_commands_directory_though_a_module_changed_it(tmp_path):
    """The recorded directory was the worker's, read after the scenario modules were imported: one that changed
    directory at import made the same command, resumed from the same place, "another selection"."""
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "moves.py").write_text(
        "import os\nimport parity\n\nos.chdir('/')\n\n\n@parity.scenario\ndef one(xp):\n"
        "    return {'x': xp.arange(2)}\n")
    out = tmp_path / "res"
    command = [BIN, "run", "--backend", "gold", "--out", out, "-q", "--scenarios", "s"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    proc = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def gone_within(pidfd, seconds):
    """Whether the process of `pidfd` has ended within `seconds` (a pidfd reads as ready once it has; never another
    process that reused its pid)."""
    return bool(select.select([pidfd], [], [], seconds)[0])


@pytest.mark.parametrize("command,backend_fork_safe", [("run", True), ("run", False), ("check", True)],
                         ids=["run, forked worker", "run, exec'd worker", "check"])
def test_a_run_killed_outright_takes_what_its_scenarios_started_with_it(tmp_path, command, backend_fork_safe):
    """A supervisor killed outright (a CI job's timeout) took its workers with it, but not what they had started: a
    joblib scenario's loky workers were still waiting on their queue 30 minutes after this file's kill test. Now the
    worker's group gets SIGTERM, spared what ignores it (a resource tracker, which then cleans up and ends); `parity
    check` killed outright stops its two runs as a SIGTERM does."""
    scenarios = tmp_path / "starts_children.py"
    scenarios.write_text(
        '"""A scenario that starts two processes, one ignoring SIGTERM, names them, and waits."""\n'
        "import os, subprocess, time\nimport parity\n\n\n"
        "@parity.scenario(timeout=600)\n"
        "def starts_children(xp):\n"
        "    plain = subprocess.Popen(['sleep', '300'])\n"
        "    shielded = subprocess.Popen(['sh', '-c', 'trap \"\" TERM; exec sleep 300'])\n"
        "    while not int(open(f'/proc/{shielded.pid}/status').read().split('SigIgn:')[1].split()[0], 16) & 1 << 14:\n"
        "        time.sleep(0.01)  # named once it ignores SIGTERM\n"
        "    named = os.path.join(os.environ['CHILDREN_DIR'], str(os.getpid()))\n"
        "    with open(named + '.partial', 'w') as f:\n"
        "        f.write(f'{plain.pid} {shielded.pid}')\n"
        "    os.rename(named + '.partial', named)\n"
        "    time.sleep(300)\n"
        "    return {'x': xp.arange(3)}\n")
    backend = tmp_path / "gold_backend.py"
    backend.write_text(f'"""gold, FORK_SAFE = {backend_fork_safe}."""\nimport numpy\n__version__ = numpy.__version__\n'
                       f"FORK_SAFE = {backend_fork_safe}\n")
    children = tmp_path / "children"
    children.mkdir()
    sides = 2 if command == "check" else 1
    proc = subprocess.Popen([BIN, command, "--backend", backend, "--scenarios", scenarios, "--out", tmp_path / "out",
                             "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "CHILDREN_DIR": str(children), "TMPDIR": str(tmp_path)})
    pidfds, workers = [], []
    try:
        deadline = time.monotonic() + 120
        while len(named := [f for f in children.iterdir() if not f.name.endswith(".partial")]) < sides and (
                proc.poll() is None and time.monotonic() < deadline):
            time.sleep(0.05)
        assert len(named) == sides, f"{len(named)} of {sides} scenarios named their processes (exit {proc.poll()})"
        for f in named:
            plain, shielded = map(int, f.read_text().split())
            pidfds += [("plain", os.pidfd_open(plain)), ("shielded", os.pidfd_open(shielded))]
            # The worker that ran the scenario: only the finally below needs it, so that a failure here leaves no
            # run behind waiting out the scenario's 300 s (check's runs outlive the check they were started by).
            workers.append(os.pidfd_open(int(f.name)))
        proc.kill()
        proc.wait(timeout=60)
        for kind, pidfd in pidfds:
            if kind == "plain" or command == "check":  # check's runs stop as at a SIGTERM: kill_children ends
                # everything, what shields itself from SIGTERM 2 s after the rest
                assert gone_within(pidfd, 20), f"a scenario's {kind} process outlived the killed {command}"
            else:  # spared, as a resource tracker must be; this one does not end on its own
                assert not gone_within(pidfd, 0.5), "the process that ignores SIGTERM was killed: a tracker would be"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pidfd in [p for _, p in pidfds] + workers:
            if not gone_within(pidfd, 0):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            os.close(pidfd)


def test_a_resumed_run_of_manifest_version_1_leaves_no_pickle_file_behind(tmp_path):
    """A run that an older parity began (manifest version 1: each pickle in a file of its own, pickle_file) and this
    one finishes: a scenario run again appends its pickle to its result file, and the old pickle file goes, so the
    directory holds what the manifest names and compares as an uninterrupted run's."""
    scenarios = tmp_path / "three.py"
    scenarios.write_text('"""Three small scenarios."""\nimport parity\n\n\n' + "".join(
        f"@parity.scenario()\ndef s{k}(xp):\n    return {{'x': xp.arange({k + 3}.0)}}\n\n\n" for k in range(3)))
    out, reference = tmp_path / "out", tmp_path / "reference"
    for directory in (out, reference):
        assert run(directory, "--scenarios", scenarios).returncode == 0
    doc = json.loads((out / "manifest.json").read_text())
    doc["version"], doc["complete"] = 1, False
    for s in doc["scenarios"]:  # as version 1 wrote them
        data = (out / s["file"]).read_bytes()
        (out / s["file"]).write_bytes(data[:s["pickle_offset"]])
        s["pickle_file"] = s["file"] + ".pickle"
        (out / s["pickle_file"]).write_bytes(data[s.pop("pickle_offset"):])
    (out / "manifest.json").write_text(json.dumps(doc))
    rerun = doc["scenarios"][1]
    (out / rerun["file"]).unlink()  # its run was cut short before it was whole
    proc = run(out, "--scenarios", scenarios, "--resume")
    assert proc.returncode == 0, proc.stderr
    manifest = assert_consistent(out)
    named = {s[key] for s in manifest["scenarios"] for key in ("file", "pickle_file") if s.get(key)}
    assert {f"results/{p.name}" for p in (out / "results").iterdir()} == named
    records = {s["id"]: s for s in manifest["scenarios"]}
    assert "pickle_offset" in records[rerun["id"]] and "pickle_file" not in records[rerun["id"]], records
    assert sum("pickle_file" in s for s in manifest["scenarios"]) == 2, records  # the adopted keep theirs
    proc = subprocess.run([BIN, "compare", reference, out, "-q"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "pickle check skipped" not in proc.stderr, proc.stderr
