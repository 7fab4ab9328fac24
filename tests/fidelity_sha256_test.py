"""The fidelity digests' algorithm: runs record XXH3-128 (`xxh3:`), and runs that recorded SHA-256 are still checked
with SHA-256, their pickles' buffer tables too (tests/fidelity_sha256 holds such runs)."""
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
FIXTURE = REPO / "tests" / "fidelity_sha256"
KEY = {"PARITY_PROBE_KEY": "fidelity-sha256-fixture-key-0123456789"}  # the one the fixture's pickles are signed with
SCENARIO = "sha256_digests.arrays"


def parity(*args, check):
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, env={**os.environ, **KEY},
                          timeout=300)
    assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}\n{proc.stderr}"
    return proc


def compare(gold, cand, tmp_path, check):
    parity("compare", gold, cand, "--json", tmp_path / "r.json", check=check)
    (scenario,) = json.loads((tmp_path / "r.json").read_text())["scenarios"]
    return scenario


@pytest.fixture
def old_runs(tmp_path):
    for name in ("gold", "fsproxy"):
        shutil.copytree(FIXTURE / name, tmp_path / name)
    return tmp_path / "gold", tmp_path / "fsproxy"


def record(run_dir):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return next(s for s in manifest["scenarios"] if s["id"] == SCENARIO)


def table(run_dir):
    """The buffer table of the scenario's pickle (docs/format.md, "Pickles")."""
    entry = record(run_dir)  # a pickle file of its own (the fixture's version 1), or the result file's end (version 2)
    blob = (run_dir / entry.get("pickle_file", entry["file"])).read_bytes()[entry.get("pickle_offset", 0):-89]
    stream, size = int.from_bytes(blob[-16:-8], "little"), int.from_bytes(blob[-8:], "little")
    return json.loads(blob[16 + stream:16 + stream + size])


def passed(scenario):
    return {c["check"] for c in scenario["checks"] if c["ok"]}


def test_the_fixture_holds_sha256_digests(old_runs):
    for run_dir in old_runs:
        assert all(re.fullmatch("[0-9a-f]{16}", d) for d in record(run_dir)["fidelity"].values())
        assert table(run_dir) and all(re.fullmatch("[0-9a-f]{64}", e["digest"]) for e in table(run_dir))


def test_a_run_with_sha256_digests_still_passes_fidelity_and_pickle(old_runs, tmp_path):
    scenario = compare(*old_runs, tmp_path, check=0)
    assert {"values", "fidelity", "pickle"} <= passed(scenario), scenario
    assert not scenario.get("skipped_checks"), scenario  # the pickles' SHA-256 references resolved


def test_a_changed_array_of_a_sha256_run_still_fails_fidelity_and_is_never_unpickled(old_runs, tmp_path):
    gold, cand = old_runs
    result = cand / record(cand)["file"]
    data = bytearray(result.read_bytes())
    last = struct.pack("<d", 8191 / 3)  # the last element of outputs['be'] (the candidate writes it little-endian)
    assert data.count(last) == 1
    data[data.index(last)] ^= 0x01
    result.write_bytes(bytes(data))
    scenario = compare(gold, cand, tmp_path, check=1)
    failed = [(c["check"], c["path"]) for c in scenario["checks"] if not c["ok"]]
    assert ("fidelity", "outputs['be']") in failed, scenario
    assert "pickle" not in passed(scenario), scenario
    reasons = [k["reason"] for k in scenario.get("skipped_checks", []) if k["check"] == "pickle"]
    assert reasons and "not unpickled" in reasons[0] and "outputs['be']" in reasons[0], scenario


def test_a_changed_sha256_digest_still_fails_fidelity(old_runs, tmp_path):
    gold, cand = old_runs
    manifest = json.loads((cand / "manifest.json").read_text())
    fidelity, leaf = manifest["scenarios"][0]["fidelity"], "outputs['c']"
    fidelity[leaf] = f"{int(fidelity[leaf], 16) ^ 1:016x}"
    (cand / "manifest.json").write_text(json.dumps(manifest))
    scenario = compare(gold, cand, tmp_path, check=1)
    assert [(c["check"], c["path"]) for c in scenario["checks"] if not c["ok"]] == [("fidelity", "outputs['c']")]


def test_a_run_records_xxh3_digests_and_its_compare_passes(tmp_path):
    for name, backend in (("gold", "gold"), ("fsproxy", "fsproxy")):
        parity("run", "--backend", backend, "--scenarios", FIXTURE / "scenarios", "--out", tmp_path / name, "-q",
               check=0)
        fidelity = record(tmp_path / name)["fidelity"]
        assert set(fidelity) == set(record(FIXTURE / name)["fidelity"])  # the same leaves, digested otherwise
        assert all(re.fullmatch("xxh3:[0-9a-f]{16}", d) for d in fidelity.values()), fidelity
        entries = table(tmp_path / name)
        assert {e["leaf"] for e in entries} == {"outputs['c']", "outputs['be']"}, entries
        assert all(re.fullmatch("xxh3:[0-9a-f]{32}", e["digest"]) and e["digest"][:21] == fidelity[e["leaf"]]
                   for e in entries), entries
    scenario = compare(tmp_path / "gold", tmp_path / "fsproxy", tmp_path, check=0)
    assert {"values", "fidelity", "pickle"} <= passed(scenario) and not scenario.get("skipped_checks"), scenario
