"""The soak run (nightly mode only): the whole corpus gold + candidate + compare, round after round, changes nothing."""
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
ROUNDS = int(os.environ.get("PARITY_SOAK_ROUNDS", "20"))
CANDIDATE = os.environ.get("PARITY_SOAK_CANDIDATE", "fsproxy")
# Allowed drift of a process's peak memory between the first round and any later one (allocator noise).
RSS_SLACK = 1.2, 64 << 20

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)


def parity(*args, tmp):
    """Runs the binary with its own TMPDIR; returns (exit code, peak resident bytes of it and the workers it
    waited for)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([BIN, *map(str, args)], stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, "TMPDIR": str(tmp)})
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return proc.returncode, usage.ru_maxrss * 1024


def leftovers(tmp, since):
    """What the rounds could leave on the machine: processes running this binary, anything in the runs' own TMPDIR,
    and parity or joblib segments in /dev/shm made since the soak began."""
    procs = subprocess.run(["pgrep", "-c", "-u", str(os.getuid()), "-f", BIN], capture_output=True, text=True)
    shm = [e for e in os.scandir("/dev/shm") if e.name.startswith(("parity-", "joblib_memmapping_folder"))
           and e.stat().st_mtime >= since] if os.path.isdir("/dev/shm") else []
    return int(procs.stdout.strip() or 0), len(os.listdir(tmp)), len(shm)


def one_round(root, n, tmp):
    out = root / f"round{n}"
    codes, peaks = {}, {}
    for name, backend in (("gold", "gold"), ("candidate", CANDIDATE)):
        codes[name], peaks[name] = parity("run", "--backend", backend, "--out", out / name, "-q", tmp=tmp)
    # PARITY_SOAK_CANDIDATE is named by whoever runs the soak: compare may import it (README, "Safety").
    codes["compare"], peaks["compare"] = parity("compare", out / "gold", out / "candidate", "--json",
                                                out / "report.json", "-q", "--trust-backend", CANDIDATE, tmp=tmp)
    files = {(side, p.name): p.read_bytes() for side in ("gold", "candidate") for p in (out / side / "results").iterdir()}
    report = json.loads((out / "report.json").read_text())
    verdicts = {s["id"]: (s["status"], s["message"]) for s in report["scenarios"]}
    return codes, peaks, files, verdicts


def test_the_corpus_round_after_round_gives_the_same_results_in_the_same_memory(tmp_path):
    since = time.time()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    first = one_round(tmp_path, 0, tmp)
    assert first[0]["compare"] in (0, 1) and first[0]["gold"] == 0, first[0]
    baseline_leftovers = None
    for n in range(1, ROUNDS):
        codes, peaks, files, verdicts = one_round(tmp_path, n, tmp)
        assert codes == first[0], f"round {n}: exit codes {codes}, first round {first[0]}"
        assert files == first[2], f"round {n}: result files differ from the first round's"
        assert verdicts == first[3], f"round {n}: verdicts differ from the first round's"
        for step, peak in peaks.items():
            assert peak <= first[1][step] * RSS_SLACK[0] + RSS_SLACK[1], (n, step, peak, first[1][step])
        found = leftovers(tmp, since)
        baseline_leftovers = baseline_leftovers or found
        assert all(now <= then for now, then in zip(found, baseline_leftovers)), \
            f"round {n}: (processes, TMPDIR entries, /dev/shm entries) {found}, after round 1 {baseline_leftovers}"
        for side in ("gold", "candidate"):  # keep the disk flat too: only the first round is kept to compare with
            subprocess.run(["rm", "-rf", str(tmp_path / f"round{n}" / side)], check=True)
