"""Hostile results directories that exhaust resources or point elsewhere (issue #16: D5, D6, D7 files, D10, D17):
shared and misaligned blobs, zero-stride broadcasts, slow compares, FIFOs and symbolic links, odd structured dtypes."""
import json
import os
import resource
import struct
import subprocess
import time

from conftest import BIN, SCENARIOS, parity, read_json, statuses

MB = 1 << 20
F8 = {"kind": "ndarray", "type": "numpy.ndarray", "dtype": {"str": "<f8"}, "writeable": False}


def write_raw_result(path, header, data=b"", apparent_size=None):
    """A result file with any header over any data (a hostile writer's); `apparent_size` makes its data sparse."""
    text = json.dumps(header).encode()
    head = b"PARITYR\n" + struct.pack("<IIQ", 1, 0, len(text)) + text
    head += b"\0" * (-len(head) % 64)
    with open(path, "wb") as out:
        out.write(head + data)
        if apparent_size:
            out.truncate(len(head) + apparent_size)


def list_of(node, count, nbytes):
    """Outputs that are `count` copies of `node` in a list, all naming blob 0 of `nbytes` bytes."""
    return {"outputs": {"kind": "list", "type": "builtins.list", "items": [node] * count},
            "blobs": [{"offset": 0, "nbytes": nbytes}]}


def record(run, scenario_id):
    manifest = read_json(run / "manifest.json")
    return next(s for s in manifest["scenarios"] if s["id"] == scenario_id)


def replace_outputs(run, scenario_id, header, data=b"", apparent_size=None):
    """Puts a crafted result file in place of a scenario's, dropping the digests and pickle made for the real one."""
    manifest = read_json(run / "manifest.json")
    entry = next(s for s in manifest["scenarios"] if s["id"] == scenario_id)
    entry.pop("fidelity", None)
    entry.pop("pickle_offset", None)
    (run / "manifest.json").write_text(json.dumps(manifest))
    write_raw_result(run / entry["file"], header, data, apparent_size)


def compare(gold, cand, tmp_path, *flags, timeout=120, check=None):
    report = tmp_path / "report.json"
    proc = parity("compare", gold, cand, "--json", report, *flags, timeout=timeout, check=check)
    assert report.is_file(), f"no report written:\n{proc.stderr}"
    return proc, statuses(report)


def error_text(scenario):
    return "\n".join(c["message"] for c in scenario["checks"] if not c["ok"])


MATRIX, NESTED, STRIDED = "plain.matrix", "plain.nested", "plain.strided"


# --- D5: what one result may expand to ---------------------------------------------------------------------------

def test_shared_str_blob_is_bounded_by_the_memory_budget(pair_copy, tmp_path):
    gold, cand = pair_copy
    replace_outputs(cand, MATRIX, list_of({"kind": "str", "blob": 0}, 50, MB), b"a" * MB)
    proc, result = compare(gold, cand, tmp_path, "--max-result-memory", 8 * MB, check=1)
    assert result[MATRIX]["status"] == "error"
    message = error_text(result[MATRIX])
    assert "--max-result-memory" in message and record(cand, MATRIX)["file"] in message
    assert result[NESTED]["status"] == "pass" and result[STRIDED]["status"] == "pass"


def test_misaligned_arrays_sharing_a_blob_are_copied_once(pair_copy, tmp_path):
    gold, cand = pair_copy
    node = dict(F8, shape=[MB // 8], strides=[8], blob=0, offset=0, misalign=8)
    header = list_of(node, 40, MB)
    for run in (gold, cand):
        replace_outputs(run, MATRIX, header, b"\1" * MB)
    # One copy (1 MB) fits in 3 MB; a copy per array (40 MB) would not.
    _, result = compare(gold, cand, tmp_path, "--max-result-memory", 3 * MB, "--type-policy", "ignore")
    assert result[MATRIX]["status"] == "pass", error_text(result[MATRIX])


def test_misaligned_array_over_a_sparse_file_is_refused_before_copying(pair_copy, tmp_path):
    gold, cand = pair_copy
    size = 512 * MB  # 4 KB on disk
    replace_outputs(cand, MATRIX, list_of(dict(F8, shape=[size // 8], strides=[8], blob=0, offset=0, misalign=8),
                                          1, size), apparent_size=size)
    assert os.stat(cand / record(cand, MATRIX)["file"]).st_blocks * 512 < MB  # sparse: nothing large on disk
    started = time.monotonic()
    _, result = compare(gold, cand, tmp_path, "--max-result-memory", 64 * MB, check=1)
    assert result[MATRIX]["status"] == "error" and "--max-result-memory" in error_text(result[MATRIX])
    assert time.monotonic() - started < 60
    assert result[NESTED]["status"] == "pass"


def _limit_address_space(limit):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_running_out_of_memory_is_that_scenarios_error(pair_copy, tmp_path):
    """A budget set past what the machine has: the allocation that fails (std::bad_alloc, under an address-space
    limit here so nothing large is ever touched) ends that scenario only, and the report is still written."""
    gold, cand = pair_copy
    blob = 16 * MB
    replace_outputs(cand, MATRIX, list_of({"kind": "bytes", "blob": 0}, 64, blob), apparent_size=blob)
    report = tmp_path / "report.json"
    # A compare of these runs needs under 300 MB of address space (measured); 64 copies of 16 MB (1 GB) do not fit.
    limit = 512 * MB
    proc = subprocess.run([BIN, "compare", gold, cand, "--json", report, "--max-result-memory", str(1 << 40)],
                          capture_output=True, text=True, timeout=120, preexec_fn=_limit_address_space(limit),
                          env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"))
    assert report.is_file(), f"exit {proc.returncode}, no report:\n{proc.stderr}"
    result = statuses(report)
    assert result[MATRIX]["status"] == "error" and "out of memory" in error_text(result[MATRIX])
    assert result[NESTED]["status"] == "pass"


# --- D6: zero strides, and a time limit per scenario ---------------------------------------------------------------

def test_zero_stride_broadcast_is_compared_by_its_distinct_elements(pair_copy, tmp_path):
    gold, cand = pair_copy
    node = dict(F8, shape=[10**6, 10**6], strides=[0, 0], blob=0, offset=0, misalign=0)
    for run, value in ((gold, 1.5), (cand, 2.5)):
        replace_outputs(run, MATRIX, list_of(node, 1, 8), struct.pack("<d", value))
    started = time.monotonic()
    _, result = compare(gold, cand, tmp_path, "--timeout", 0, timeout=60, check=1)
    assert time.monotonic() - started < 60
    values = next(c for c in result[MATRIX]["checks"] if c["check"] == "values" and not c["ok"])
    assert values["details"]["total"] == 10**12 and values["details"]["mismatched"] == 10**12


def test_broadcast_outputs_run_and_compare(tmp_path):
    (tmp_path / "scen").mkdir()
    (tmp_path / "scen" / "broadcast.py").write_text(
        "import numpy as np\nimport parity\n\n\n@parity.scenario()\ndef big(xp):\n"
        "    return {'b': np.broadcast_to(np.arange(3.0), (10**6, 10**6, 3))}\n")
    for backend in ("gold", "fsproxy"):
        parity("run", "--backend", backend, "--scenarios", tmp_path / "scen", "--out", tmp_path / backend,
               "--no-pickle-probe", "-q", timeout=60, check=0)
    _, result = compare(tmp_path / "gold", tmp_path / "fsproxy", tmp_path, timeout=60, check=0)
    assert result["broadcast.big"]["status"] == "pass"


def test_slow_compare_is_a_timeout_and_the_rest_is_compared(pair_copy, tmp_path):
    gold, cand = pair_copy
    n = 10**6  # 8 MB each side, 10^12 elements that no axis lets compare skip
    replace_outputs(gold, MATRIX, list_of(dict(F8, shape=[n, n], strides=[0, 8], blob=0, offset=0, misalign=0),
                                          1, 8 * n), b"\0" * (8 * n))
    replace_outputs(cand, MATRIX, list_of(dict(F8, shape=[n, n], strides=[8, 0], blob=0, offset=0, misalign=0),
                                          1, 8 * n), b"\0" * (8 * n))
    started = time.monotonic()
    _, result = compare(gold, cand, tmp_path, "--timeout", 2, timeout=60, check=1)
    assert time.monotonic() - started < 30
    assert result[MATRIX]["status"] == "timeout", result[MATRIX]
    assert "--timeout 2" in error_text(result[MATRIX])
    assert result[NESTED]["status"] == "pass" and result[STRIDED]["status"] == "pass"
    assert read_json(tmp_path / "report.json")["summary"]["timeout"] == 1


def test_compare_timeout_defaults_to_the_runs(pair_copy, tmp_path):
    gold, cand = pair_copy
    assert read_json(gold / "manifest.json")["run"]["timeout"] == 300  # parity run's default, recorded
    n = 10**6
    for run, strides in ((gold, [0, 8]), (cand, [8, 0])):
        replace_outputs(run, MATRIX, list_of(dict(F8, shape=[n, n], strides=strides, blob=0, offset=0, misalign=0),
                                             1, 8 * n), b"\0" * (8 * n))
        manifest = read_json(run / "manifest.json")
        manifest["run"]["timeout"] = 1
        (run / "manifest.json").write_text(json.dumps(manifest))
    _, result = compare(gold, cand, tmp_path, timeout=60, check=1)
    assert result[MATRIX]["status"] == "timeout"


# --- D7 (files) and D10: only regular files, no symbolic links ----------------------------------------------------

def become_fifo(path):
    """Replaces a file of a results directory with a FIFO, which blocks a reader that opens it plainly."""
    path.unlink()
    os.mkfifo(path)


def test_fifo_result_file_is_refused_without_blocking(pair_copy, tmp_path):
    gold, cand = pair_copy
    file = cand / record(cand, MATRIX)["file"]
    become_fifo(file)
    _, result = compare(gold, cand, tmp_path, timeout=60, check=1)
    assert result[MATRIX]["status"] == "error"
    assert "is a FIFO" in error_text(result[MATRIX]) and file.name in error_text(result[MATRIX])
    assert result[NESTED]["status"] == "pass"


def test_fifo_pickle_and_manifest_do_not_block(pair_copy, tmp_path):
    """A pickle file of its own (manifest version 1: pickle_file) that is a FIFO; version 2 keeps it in the result
    file, which test_fifo_result_file_is_refused_without_blocking makes one."""
    gold, cand = pair_copy
    manifest = read_json(cand / "manifest.json")
    entry = next(s for s in manifest["scenarios"] if s["id"] == MATRIX)
    entry["pickle_file"] = entry.pop("pickle_offset") and entry["file"] + ".pickle"
    (cand / "manifest.json").write_text(json.dumps(manifest))
    os.mkfifo(cand / entry["pickle_file"])
    _, result = compare(gold, cand, tmp_path, timeout=60)
    assert "is a FIFO" in error_text(result[MATRIX])
    become_fifo(gold / "manifest.json")
    proc = parity("compare", gold, cand, timeout=60, check=2)
    assert "manifest.json" in proc.stderr and "is a FIFO" in proc.stderr


def test_symlinked_result_file_and_results_directory_are_refused(pair_copy, tmp_path):
    gold, cand = pair_copy
    file = cand / record(cand, MATRIX)["file"]
    outside = tmp_path / "outside.parity"
    file.rename(outside)
    file.symlink_to(outside)
    _, result = compare(gold, cand, tmp_path, check=1)
    assert result[MATRIX]["status"] == "error" and "is a symbolic link" in error_text(result[MATRIX])
    assert result[NESTED]["status"] == "pass"
    (gold / "results").rename(tmp_path / "gold-results")
    (gold / "results").symlink_to(tmp_path / "gold-results")
    _, result = compare(gold, cand, tmp_path, check=1)
    assert all(s["status"] == "error" and "symbolic link" in error_text(s) for s in result.values())


def _shards(tmp_path):
    shards = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        parity("run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", out, "--shard", f"{i}/2", "-q", check=0)
        shards.append(out)
    return shards


def test_merge_refuses_a_symlink_in_a_shard(tmp_path):
    shards = _shards(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("do not upload")
    entry = next(s for s in read_json(shards[0] / "manifest.json")["scenarios"] if s.get("file"))
    victim = shards[0] / entry["file"]
    victim.unlink()
    victim.symlink_to(secret)
    proc = parity("merge", *shards, "--out", tmp_path / "merged", check=2)
    assert victim.name in proc.stderr and "symbolic link" in proc.stderr
    merged = tmp_path / "merged"
    assert not (merged / "manifest.json").exists()
    leaked = [p for p in merged.rglob("*") if p.is_file() and p.read_bytes() == secret.read_bytes()]
    assert not leaked, f"the symlink's target was copied: {leaked}"


def test_resume_refuses_a_symlink_among_the_results(tmp_path):
    out = tmp_path / "run"
    parity("run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", out, "-q", check=0)
    entry = record(out, MATRIX)
    victim = out / entry["file"]
    victim.unlink()
    victim.symlink_to(tmp_path / "elsewhere.parity")
    proc = parity("run", "--backend", "gold", "--scenarios", SCENARIOS, "--out", out, "--resume", "-q")
    assert proc.returncode == 2 and victim.name in proc.stderr and "symbolic link" in proc.stderr


# --- D17: structured dtypes NumPy cannot describe with dtype.descr ------------------------------------------------

def test_overlapping_and_out_of_order_fields_round_trip(tmp_path):
    (tmp_path / "scen").mkdir()
    (tmp_path / "scen" / "fields.py").write_text(
        "import numpy as np\nimport parity\n\n\n@parity.scenario()\ndef odd(xp):\n"
        "    swapped = np.dtype({'names': ['a', 'b'], 'formats': ['<i4', '<i2'], 'offsets': [4, 0], 'itemsize': 8})\n"
        "    overlap = np.dtype({'names': ['x', 'lo'], 'formats': ['<i4', '<i2'], 'offsets': [0, 0], 'itemsize': 4})\n"
        "    s = np.zeros(3, swapped)\n    s['a'] = [1, 2, 3]\n    s['b'] = [-1, -2, -3]\n"
        "    o = np.zeros(2, overlap)\n    o['x'] = [0x10002, 0x30004]\n"
        "    return {'swapped': s, 'overlap': o}\n")
    for backend in ("gold", "fsproxy"):
        parity("run", "--backend", backend, "--scenarios", tmp_path / "scen", "--out", tmp_path / backend, "-q",
               check=0)
    _, result = compare(tmp_path / "gold", tmp_path / "fsproxy", tmp_path, check=0)
    scenario = result["fields.odd"]
    assert scenario["status"] == "pass", scenario
    fidelity = next(c for c in scenario["checks"] if c["check"] == "fidelity")
    assert fidelity["ok"]
