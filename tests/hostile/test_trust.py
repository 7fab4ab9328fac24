"""Issue #16, D1/D2/D15: code named or carried by a results directory never runs in `parity compare`."""
import json
import os
import pickle
import shutil
import stat
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REPO, SCENARIOS, parity, read_json, statuses

# A backend file whose import leaves a mark: compare must import it only when the user names it.
MARKING_BACKEND = '''
import pathlib
pathlib.Path({marker!r}).write_text("imported")
'''


class Evil:
    """Unpickling this runs a command (what a tampered *.parity.pickle can do)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def set_backend(results: Path, **fields):
    manifest = results / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["backend"].update(fields)
    manifest.write_text(json.dumps(doc))


def pickles(results: Path) -> list:
    """[(result file, offset)] of the run's pickles: each from its manifest's pickle_offset to the end of the file."""
    found = sorted((results / s["file"], s["pickle_offset"]) for s in read_json(results / "manifest.json")["scenarios"]
                   if "pickle_offset" in s)
    assert found, f"no pickles in {results}"
    return found


def set_pickle_offsets(results: Path, offset):
    """Gives every pickle of the run's manifest the byte offset offset(result file's size, recorded offset)."""
    manifest = results / "manifest.json"
    doc = json.loads(manifest.read_text())
    for s in doc["scenarios"]:
        if "pickle_offset" in s:
            s["pickle_offset"] = offset((results / s["file"]).stat().st_size, s["pickle_offset"])
    manifest.write_text(json.dumps(doc))


def skipped(report: Path) -> dict:
    """(check, side, kind) -> reason of every skipped check in a compare JSON."""
    return {(k["check"], k["side"], k["kind"]): k["reason"]
            for s in read_json(report)["scenarios"] for k in s.get("skipped_checks", [])}


# --- D1: a backend spec in a manifest is never imported ---------------------------------------------------------

@pytest.mark.parametrize("form", ["absolute", "relative", "module"])
def test_compare_never_imports_the_backend_a_manifest_names(pair_copy, tmp_path, form):
    gold, cand = pair_copy
    marker = tmp_path / "imported"
    evil = tmp_path / "evil" / "results"
    evil.mkdir(parents=True)
    (evil / "x.py").write_text(MARKING_BACKEND.format(marker=str(marker)))
    (tmp_path / "evilmod.py").write_text(MARKING_BACKEND.format(marker=str(marker)))
    spec = {"absolute": str(evil / "x.py"), "relative": "evil/results/x.py", "module": "evilmod"}[form]
    set_backend(cand, spec=spec, module="parity_backend_x")
    report = tmp_path / "r.json"
    proc = parity("compare", gold, cand, "--json", report, cwd=tmp_path,
                  env={"PYTHONPATH": str(tmp_path), "PARITY_TRUST_BACKENDS": ""})
    assert not marker.exists(), f"compare imported {spec} named by the manifest\n{proc.stderr}"
    assert proc.returncode in (0, 1), proc.stderr
    # Everything else is compared: the outputs' checks ran, and the probes that need fsproxy's reducers say why
    # they did not, naming the flag that would trust the backend.
    scenarios = statuses(report)
    assert scenarios and all(s["status"] in ("pass", "fail") for s in scenarios.values()), scenarios
    assert any(c["check"] == "values" and c["ok"] for s in scenarios.values() for c in s["checks"])
    reasons = {r for (check, side, kind), r in skipped(report).items() if kind == "untrusted-backend"}
    assert reasons and all("--trust-backend" in r for r in reasons), skipped(report)
    assert "--trust-backend" in proc.stderr and "notice" in proc.stderr
    notices = read_json(report)["notices"]
    assert any(n["kind"] == "untrusted-backend" and n["side"] == "candidate" for n in notices), notices


def test_a_backend_the_user_trusts_is_loaded(pair_copy, tmp_path):
    gold, cand = pair_copy
    marker = tmp_path / "imported"
    mine = tmp_path / "mine.py"
    mine.write_text(MARKING_BACKEND.format(marker=str(marker)))
    set_backend(cand, spec=str(mine), module="parity_backend_mine")
    for how in ({"args": ["--trust-backend", mine]}, {"env": {"PARITY_TRUST_BACKENDS": str(mine)}}):
        marker.unlink(missing_ok=True)
        report = tmp_path / "r.json"
        parity("compare", gold, cand, "--json", report, *how.get("args", []), env=how.get("env"))
        assert marker.read_text() == "imported", how
        assert not any(kind == "untrusted-backend" for _, _, kind in skipped(report)), (how, skipped(report))


def test_built_in_backends_need_no_trust(pair):
    gold, cand = pair
    proc = parity("compare", gold, cand, check=0)
    assert "notice" not in proc.stderr, proc.stderr


# --- D2: only pickles that carry the user's MAC are unpickled ---------------------------------------------------

def test_own_pickles_verify_and_are_probed(pair, tmp_path):
    gold, cand = pair
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, check=0)
    doc = read_json(report)
    assert "notices" not in doc and not skipped(report)
    assert any(c["check"] == "pickle" and c["ok"] for s in doc["scenarios"] for c in s["checks"])


def framed(stream: bytes) -> bytes:
    """A pickle stream in the frame a run stores it in (docs/format.md, "Pickles"), without its MAC line."""
    return b"parity-pickle 2\n" + stream + b"[]" + struct.pack("<QQ", len(stream), 2)


@pytest.mark.parametrize("forge", ["plain", "wrong-mac"])
def test_a_tampered_pickle_is_never_unpickled(pair_copy, tmp_path, forge):
    gold, cand = pair_copy
    marker = tmp_path / "pwned"
    payload = framed(pickle.dumps(Evil(marker), protocol=5))
    if forge == "wrong-mac":  # a well-formed trailer with a MAC made under another key
        payload += b"\nparity-mac hmac-sha256 " + b"0" * 64 + b"\n"
    for file, offset in pickles(cand):
        file.write_bytes(file.read_bytes()[:offset] + payload)
    report, junit, html = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    proc = parity("compare", gold, cand, "--json", report, "--junit", junit, "--html", html, check=0)
    assert not marker.exists(), "compare unpickled a tampered pickle"
    reasons = skipped(report)
    assert {check for check, side, kind in reasons} == {"pickle"}, reasons
    assert all(side == "candidate" and kind == "unverified-pickle" for _, side, kind in reasons), reasons
    notice = read_json(report)["notices"][0]["message"]
    assert "pickle check skipped" in notice and "notice: pickle check skipped" in proc.stderr
    props = [p.get("value") for p in ET.parse(junit).iter("property") if p.get("name") == "notice"]
    assert props == [notice]
    assert 'id="notices"' in html.read_text() and "pickle check skipped" in html.read_text()


@pytest.mark.parametrize("where", ["bare-pickle", "into-the-codec"])
def test_what_is_not_a_whole_stored_pickle_is_an_error_never_unpickled(pair_copy, tmp_path, where):
    """A result file's end that is no pickle in parity's frame (a bare pickle written there, or a manifest pointing
    pickle_offset into the codec's bytes) is a damaged result file: the scenario's error, naming it; nothing unpickled
    and no table of it parsed."""
    gold, cand = pair_copy
    marker = tmp_path / "pwned"
    if where == "bare-pickle":
        for file, offset in pickles(cand):
            file.write_bytes(file.read_bytes()[:offset] + pickle.dumps(Evil(marker), protocol=5))
    else:
        set_pickle_offsets(cand, lambda size, offset: offset // 2)
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, check=1)
    assert not marker.exists(), "compare unpickled what a result file ends with"
    scenarios = read_json(report)["scenarios"]
    assert scenarios and all(s["status"] == "error" for s in scenarios), scenarios
    assert all("is not whole" in s["checks"][0]["message"] and s["id"] for s in scenarios), scenarios


def test_a_pickle_offset_past_the_end_of_its_file_is_an_error_naming_the_file(pair_copy, tmp_path):
    gold, cand = pair_copy
    set_pickle_offsets(cand, lambda size, offset: size + 1)
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, check=1)
    scenarios = read_json(report)["scenarios"]
    assert scenarios and all(s["status"] == "error" for s in scenarios), scenarios
    message = scenarios[0]["checks"][0]["message"]
    assert "pickle_offset" in message and "past the end" in message and str(cand / "results") in message, message


@pytest.mark.parametrize("candidate", ["whole", "not-whole", "past-the-end"])
def test_golds_pickle_not_whole_is_the_error_told_whatever_the_candidates(pair_copy, tmp_path, candidate):
    """Gold's damaged result file is the scenario's error, named, before anything of the candidate's: its pickle
    whole, not whole, or its offset past its file's end."""
    gold, cand = pair_copy
    for file, _ in pickles(gold):
        file.write_bytes(file.read_bytes() + b"added")
    if candidate == "not-whole":
        for file, _ in pickles(cand):
            file.write_bytes(file.read_bytes() + b"added")
    elif candidate == "past-the-end":
        set_pickle_offsets(cand, lambda size, offset: size + 1)
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, check=1)
    scenarios = read_json(report)["scenarios"]
    damaged = [s for s in scenarios if s["status"] == "error"]
    assert damaged, scenarios
    for s in damaged:
        message = s["checks"][0]["message"]
        assert "is not whole" in message and str(gold / "results") in message, message


def test_the_same_damaged_result_file_on_both_sides_is_the_error_naming_golds(pair_copy, tmp_path):
    """Both sides wrote the same bytes (gold against a copy of itself), then both had the same bytes added: the short
    path for the same result file (probes.cc, check_pickle) still checks the pickle whole, and names gold's file, as
    the path for different files does."""
    gold, _ = pair_copy
    twin = tmp_path / "twin"
    shutil.copytree(gold, twin)
    for results in (gold, twin):
        for file, _ in pickles(results):
            file.write_bytes(file.read_bytes() + b"added")
    report = tmp_path / "r.json"
    parity("compare", gold, twin, "--json", report, check=1)
    damaged = [s for s in read_json(report)["scenarios"] if s["status"] == "error"]
    assert len(damaged) == len(pickles(gold)), read_json(report)["scenarios"]
    for s in damaged:
        message = s["checks"][0]["message"]
        assert "is not whole" in message and str(gold / "results") in message, message
        assert str(twin / "results") not in message, message


def test_a_pickle_from_another_key_is_skipped_and_the_shared_key_verifies(tmp_path):
    runs = {}
    for backend in ("gold", "fsproxy"):
        runs[backend] = tmp_path / backend
        parity("run", "--backend", backend, "--scenarios", SCENARIOS, "--out", runs[backend], "-q", check=0,
               env={"PARITY_PROBE_KEY": "the CI secret, shared by every shard"})
    other = parity("compare", runs["gold"], runs["fsproxy"], "--json", tmp_path / "a.json", check=0,
                   env={"PARITY_PROBE_KEY": "someone else's secret"})
    assert "does not verify with your key" in other.stderr
    same = parity("compare", runs["gold"], runs["fsproxy"], "--json", tmp_path / "b.json", check=0,
                  env={"PARITY_PROBE_KEY": "the CI secret, shared by every shard"})
    assert "notice" not in same.stderr and not skipped(tmp_path / "b.json")


def test_a_pickle_is_signed_and_verified_with_the_key_given_each_time():
    """signature and verified_payload reuse the last key's HMAC state: a different key must never reuse it."""
    import hashlib
    import hmac

    from parity import trust
    payload = b"a pickle's bytes" * 40
    keys = [b"k" * 64, b"another key, of another length", b"k" * 64, b"x" * 200]  # one over SHA-256's block size
    for key in keys:
        expected = hmac.new(key, payload, hashlib.sha256).hexdigest().encode()
        signed = payload + trust.signature(key, payload)
        assert signed.endswith(b" " + expected + b"\n")
        assert trust.verified_payload(signed, lambda key=key: key) == (payload, None)
        for other in keys:
            if other != key:
                assert trust.verified_payload(signed, lambda other=other: other)[0] is None, (key, other)


def test_the_key_is_created_private_on_first_use(tmp_path):
    config = tmp_path / "config"
    env = {"XDG_CONFIG_HOME": str(config), "PARITY_KEY_FILE": "", "PARITY_PROBE_KEY": ""}
    parity("run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", tmp_path / "g", "-q", check=0, env=env)
    key = config / "parity" / "key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert len(key.read_text().strip()) == 64
    before = key.read_text()
    parity("run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", tmp_path / "g2", "-q", check=0, env=env)
    assert key.read_text() == before, "a second run replaced the key"


def test_a_key_file_others_can_write_is_refused(tmp_path):
    key = tmp_path / "key"
    key.write_text("k" * 64)
    key.chmod(0o666)
    code = ("from parity import trust\n"
            "try:\n    trust.key()\nexcept trust.NoKey as e:\n    print('refused:', e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python"),
                                   PARITY_KEY_FILE=str(key), PARITY_PROBE_KEY=""))
    assert "refused:" in proc.stdout and "writable by others" in proc.stdout, proc.stdout


def test_the_key_file_is_read_once_while_it_is_unchanged_and_checked_again_when_it_changes(tmp_path, monkeypatch):
    from parity import trust
    key = tmp_path / "key"
    key.write_text("a" * 64)
    key.chmod(0o600)
    monkeypatch.setenv(trust.KEY_FILE_ENV, str(key))
    monkeypatch.delenv(trust.KEY_ENV, raising=False)
    reads = []
    real = trust._read_key_and_identity
    monkeypatch.setattr(trust, "_read_key_and_identity", lambda path: reads.append(path) or real(path))
    monkeypatch.setattr(trust, "_clock", lambda: time.time_ns() + 10 * 10**9)  # its times older than a tick: reused
    assert trust.key() == trust.key() == b"a" * 64 and len(reads) == 1  # a run asks once per scenario
    key.write_text("b" * 64)  # rewritten (mtime, ctime): read again
    assert trust.key() == b"b" * 64 and len(reads) == 2
    key.chmod(0o666)  # made writable by others after it was read: refused, never the key read before
    with pytest.raises(trust.NoKey, match="writable by others"):
        trust.key()
    key.chmod(0o600)
    assert trust.key() == b"b" * 64
    key.unlink()
    (tmp_path / "planted").write_text("c" * 64)
    key.symlink_to(tmp_path / "planted")  # a symlink in its place: refused (O_NOFOLLOW), never followed
    with pytest.raises(trust.NoKey):
        trust.key()


def test_a_key_rewritten_in_place_on_a_filesystem_with_coarse_times_is_read_again(tmp_path, monkeypatch):
    """The key file's identity holds its times; on a filesystem whose times are coarse (ext3 and HFS+ keep seconds,
    FAT two), a key rewritten in place, at the same size, within a tick of its last change keeps every field of
    it. A key read that close to its file's last change is not reused: the rotated key is read, never the old one."""
    from parity import trust
    coarse = trust._identity
    # Times truncated to whole seconds, as such a filesystem records them.
    monkeypatch.setattr(trust, "_identity", lambda info: (*coarse(info)[:4], *(t - t % 10**9 for t in coarse(info)[4:])))
    key = tmp_path / "key"
    key.write_text("a" * 64)
    key.chmod(0o600)
    monkeypatch.setenv(trust.KEY_FILE_ENV, str(key))
    monkeypatch.delenv(trust.KEY_ENV, raising=False)
    assert trust.key() == b"a" * 64
    key.write_text("b" * 64)  # the same inode, size and (coarse) times
    assert trust.key() == b"b" * 64


def test_the_key_lookup_reads_the_environment_as_it_is_at_each_lookup(tmp_path, monkeypatch):
    """trust's environment reads (_getenv, os.environ's own mapping read without os.environ.get's costs) see every
    change made through os.environ, set or removed, as os.environ.get does, and os.environ replaced by a plain
    mapping (its get)."""
    from parity import trust
    for name, value in (("PARITY_TEST_GETENV", "a value"), ("PARITY_TEST_GETENV", "é, \udcff"), ("HOME", "/h")):
        monkeypatch.setenv(name, value)
        assert trust._getenv(name) == os.environ.get(name) == value
        monkeypatch.delenv(name)
        assert trust._getenv(name) is None is os.environ.get(name)
    key = tmp_path / "key"
    key.write_text("a" * 64)
    key.chmod(0o600)
    monkeypatch.delenv(trust.KEY_ENV, raising=False)
    monkeypatch.setenv(trust.KEY_FILE_ENV, str(key))
    assert trust.key() == b"a" * 64
    monkeypatch.setenv(trust.KEY_ENV, "k" * 40)  # set after the last lookup: the next one uses it
    assert trust.key() == b"k" * 40
    monkeypatch.setattr(os, "environ", {trust.KEY_ENV: "g" * 40})  # replaced, by a plain mapping: its get
    assert trust.key() == b"g" * 40
    monkeypatch.setattr(os, "environ", {})
    assert trust._getenv(trust.KEY_ENV) is None


# --- D15: a type name in a file never makes compare import a module ---------------------------------------------

def test_rebuilding_a_type_never_imports_its_module():
    code = ("import sys, numpy as np\n"
            "from parity import reducers\n"
            "try:\n"
            "    reducers.rebuild('ndarray-subclass', 'numpy.f2py.__main__.X', np.zeros(1), {})\n"
            "except reducers.RebuildError as e:\n"
            "    print('refused:', e)\n"
            "reducers.is_subclass('numpy.matlib.X', 'numpy.ndarray')\n"
            "named = ('numpy.f2py', 'numpy.f2py.__main__', 'numpy.matlib')\n"
            "print('imported' if any(m in sys.modules for m in named) else 'not imported')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert proc.stdout.strip().splitlines()[-2:] == [
        "refused: type numpy.f2py.__main__.X is not rebuilt: no module already imported here defines it (compare "
        "never imports a module a file names)", "not imported"], proc.stdout + proc.stderr


def test_rebuilding_still_finds_types_already_imported():
    code = ("import numpy as np\n"
            "from parity import reducers\n"
            "print(type(reducers.rebuild('ndarray-subclass', 'numpy.matrix', np.zeros((1, 1)), {})).__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python")))
    assert proc.stdout.strip() == "matrix"


# --- Issue #18: a pytest suite's asserter is read from the trusted directory, and nothing above it is imported ----

# A conftest outside the trusted suite whose import leaves a mark; the suite under it has an assert_eq asserter.
OUTER_CONFTEST = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\n"
MARKED_TEST = ("import numpy as np, pytest\n"
               "pytestmark = pytest.mark.assert_eq(fn=np.testing.assert_allclose)\n"
               "def test_a():\n"
               "    return np.arange(3.0)\n")


def outer_and_suite(tmp_path, ini=False):
    """tmp/outer/conftest.py (marks tmp/imported when imported), tmp/outer/suite/test_x.py; gold and fsproxy runs of
    the suite. With `ini`, outer holds a pytest.ini: pytest's default confcutdir is then outer."""
    outer, marker = tmp_path / "outer", tmp_path / "imported"
    (outer / "suite").mkdir(parents=True)
    (outer / "conftest.py").write_text(OUTER_CONFTEST.format(marker=str(marker)))
    (outer / "suite" / "test_x.py").write_text(MARKED_TEST)
    if ini:
        (outer / "pytest.ini").write_text("[pytest]\n")
    for backend in ("gold", "fsproxy"):
        parity("run", "--backend", backend, "--scenarios", outer / "suite", "--out", tmp_path / backend, "-q",
               check=0)
    marker.unlink(missing_ok=True)  # what `run` imported, the user ran; compare must not import it
    return outer / "suite", marker


def set_module(results: Path, module: str):
    manifest = results / "manifest.json"
    doc = json.loads(manifest.read_text())
    for scenario in doc["scenarios"]:
        scenario["meta"]["module"] = module
    manifest.write_text(json.dumps(doc))


@pytest.mark.parametrize("form", ["filesystem-root", "parent"])
def test_a_recorded_module_cannot_move_the_suite_base_out_of_the_trusted_directory(tmp_path, form):
    suite, marker = outer_and_suite(tmp_path)
    test_file = suite / "test_x.py"
    # The id's file part names more folders than the run was given: taken off the file, the base is / or outer.
    module = {"filesystem-root": str(test_file)[1:], "parent": "suite/test_x.py"}[form]
    for backend in ("gold", "fsproxy"):
        set_module(tmp_path / backend, module)
    report = tmp_path / "r.json"
    proc = parity("compare", tmp_path / "gold", tmp_path / "fsproxy", "--scenarios", suite, "--json", report,
                  cwd=tmp_path)
    assert not marker.exists(), "compare imported a conftest.py outside the trusted directory"
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [scenario] = statuses(report).values()
    [check] = [c for c in scenario["checks"] if c["check"] == "assert_eq"]
    assert not check["ok"] and "was not run" in check["message"], check
    assert f"outside the trusted directory {suite}" in check["message"], check


def test_compare_loads_no_conftest_above_the_trusted_directory(tmp_path):
    """An ini above the suite makes pytest load conftests from the ini's folder down (as `run` did); compare, told to
    trust the suite only, stops at it, and the asserter still runs."""
    suite, marker = outer_and_suite(tmp_path, ini=True)
    report = tmp_path / "r.json"
    proc = parity("compare", tmp_path / "gold", tmp_path / "fsproxy", "--scenarios", suite, "--json", report)
    assert not marker.exists(), "compare imported the conftest.py above the trusted directory"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [scenario] = statuses(report).values()
    assert [c["ok"] for c in scenario["checks"] if c["check"] == "assert_eq"] == [True], scenario


def test_a_pickle_whose_mac_line_ends_otherwise_does_not_verify():
    """The MAC line's closing newline is part of it: a stored pickle is the end of its result file, and a byte changed
    there (a flipped bit, a file cut and padded) must not verify as if the file were as written."""
    from parity import trust
    key, payload = b"k" * 64, b"a pickle's bytes" * 40
    signed = payload + trust.signature(key, payload)
    assert trust.verified_payload(signed, lambda: key) == (payload, None)
    for last in (b"\x0b", b" ", b"0"):
        payload_out, why = trust.verified_payload(signed[:-1] + last, lambda: key)
        assert payload_out is None and "carries no MAC" in why, why


def test_a_recorded_module_the_file_system_cannot_name_is_in_no_trusted_directory(tmp_path):
    """A record's module name longer than a file name may be (ENAMETOOLONG) or a source with a NUL (ValueError) had
    escaped the lookup of which trusted directory holds the module, as an error instead of the answer: none."""
    code = ("from parity import trust\n"
            "for meta in [{'module': 'a' * 300}, {'module': 'pkg.' + 'b' * 300}, {'source': 'x\\0y', 'module': 'x'}]:\n"
            f"    why = trust.load_scenario_reducers(meta, [{str(tmp_path)!r}], {str(tmp_path / 'no-corpus')!r})\n"
            "    print(why.startswith('the scenario module'))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert proc.returncode == 0 and proc.stdout.split() == ["True"] * 3, proc.stdout + proc.stderr
