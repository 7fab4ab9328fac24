"""The kill test: a run killed outright at random moments leaves a consistent directory that --resume finishes."""
import json
import os
import random
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
KILLS = 8
SEED = 20261122

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)


def run(out, *extra):
    return subprocess.run([BIN, "run", "--backend", "gold", "--out", out, "-q", *extra], capture_output=True,
                          text=True, timeout=600)


def result_files(out):
    return {p.name: p.read_bytes() for p in (out / "results").iterdir()}


def assert_consistent(out):
    """The manifest parses, every file it lists is there, and compare reads them all back (an incomplete run's
    directory compared with itself passes; one killed before its first scenario finished has nothing to compare,
    which compare reports as the usage error it is)."""
    manifest = json.loads((out / "manifest.json").read_text())
    for s in manifest["scenarios"]:
        for key in ("file", "pickle_file"):
            if s.get(key):
                assert (out / s[key]).is_file(), (s["id"], s[key])
    proc = subprocess.run([BIN, "compare", out, out, "-q"], capture_output=True, text=True, timeout=600)
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
        proc = subprocess.Popen([BIN, "run", "--backend", "gold", "--out", out, "-q", *resume],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    last = run(out, "--resume")
    assert last.returncode == 0, last.stderr
    assert "resuming" in last.stderr
    manifest = assert_consistent(out)
    assert manifest["complete"] is True and manifest["run"]["resumed"] is True
    assert result_files(out) == result_files(reference)


def test_resume_refuses_a_directory_without_a_run_or_of_another_backend(tmp_path):
    proc = run(tmp_path / "nothing", "--resume")
    assert proc.returncode == 2 and "--resume: nothing to resume" in proc.stderr, proc.stderr
    out = tmp_path / "gold"
    assert run(out, "--only", "basic.matrix", "--scenarios", REPO / "tests" / "e2e" / "scenarios").returncode == 0
    proc = subprocess.run([BIN, "run", "--backend", "fsproxy", "--out", out, "--resume", "-q"], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr
    assert f"{out} holds a run of backend 'gold', not 'fsproxy': resume it with --backend gold" in proc.stderr
