"""End-to-end tests of the candidate backends in fixtures/: each against gold over the bundled corpus."""
import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from e2e_test import shm_leftovers  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)

# Every candidate passes the whole corpus against gold, strict xfails counting as passing: the scenarios' own
# (parity.xfail_on) and the differences each backend declares (DIFFERENCES), every one of which must explain
# something (--strict-differences).
CANDIDATES = ["memmap", "joblib", "array_api_strict", "cudf", "masked", "dask"]
ARRAY_API_TAG = "array-api"


def parity(*args):
    """Runs the binary; returns (exit code, stderr). Output goes to a file, not a pipe: loky's resource tracker
    (joblib backend) outlives parity holding the inherited stderr, and reading a pipe would wait for it."""
    with tempfile.TemporaryFile("w+") as err:
        code = subprocess.run([BIN, *map(str, args)], stdout=subprocess.DEVNULL, stderr=err, timeout=600).returncode
        err.seek(0)
        return code, err.read()


@pytest.fixture(scope="module")
def runs(tmp_path_factory, corpus_gold):
    """Each candidate run on demand once over the bundled corpus, beside the session's gold run (tests/conftest.py);
    {name: results dir}. Two workers, against the gold run's one: a backend whose import-time state its forked
    workers share (the memmap candidate's one directory, fixed in 25cc3cc) fails only there, and the runs cost no
    more CPU than with one worker."""
    root = tmp_path_factory.mktemp("candidates")
    done = {"gold": corpus_gold}

    def get(backend):
        if backend not in done:
            code, err = parity("run", "--backend", backend, "--out", root / backend, "-j", "2", "-q")
            # 1: some scenario raised, which compare judges (dask lacks functions the corpus calls).
            assert code in (0, 1), f"run {backend}: exit {code}\n{err}"
            done[backend] = root / backend
        return done[backend]

    return get


def manifest(results):
    return {s["id"]: s for s in json.loads((results / "manifest.json").read_text())["scenarios"]}


def compare(runs, backend, tmp_path, *options):
    """Compares gold with `backend`; returns (exit code, the JSON report)."""
    report_file = tmp_path / f"{backend}.json"
    code, err = parity("compare", runs("gold"), runs(backend), "--json", report_file, *options)
    assert report_file.is_file(), err
    return code, json.loads(report_file.read_text())


@pytest.mark.parametrize("backend", CANDIDATES)
def test_candidate_passes_the_corpus_against_gold(runs, backend, tmp_path):
    code, report = compare(runs, backend, tmp_path, "--strict-differences")
    summary = report["summary"]
    assert code == 0, summary
    assert summary["fail"] == summary["error"] == summary["xpass"] == 0
    assert summary["total"] >= 100


def explained(report):
    """{declaration id: the checks it explained}, over every failed check of the report."""
    found = {}
    for s in report["scenarios"]:
        for c in s["checks"]:
            if not c["ok"] and "difference" in c["details"]:
                found.setdefault(c["details"]["difference"], set()).add(c["check"])
    return found


def test_memmap_differs_only_in_what_its_pickles_lose(runs, tmp_path):
    _, report = compare(runs, "memmap", tmp_path)
    assert set().union(*explained(report).values()) == {"pickle"}
    # The file mapping is what every memmap loses (subclasses pickle through ndarray.__reduce__, which also
    # drops big-endian order, strides and the read-only flag, where plain ndarrays keep them under protocol 5).
    assert any(c["path"].endswith(".filename") and c["details"].get("difference") == "unpickled-without-file"
               for s in report["scenarios"] for c in s["checks"] if not c["ok"])


def test_masked_and_dask_declare_what_their_failures_show(runs, tmp_path):
    """The declarations are the libraries' known differences; a run error is always the candidate's."""
    for backend, checks in (("masked", {"type", "pickle", "dtype", "values", "layout", "writeable", "error"}),
                            ("dask", {"layout", "writeable", "values", "type", "shape", "dtype", "attrs", "error"})):
        _, report = compare(runs, backend, tmp_path)
        used = explained(report)
        assert set().union(*used.values()) == checks, (backend, used)
        for s in report["scenarios"]:
            for c in s["checks"]:
                if not c["ok"] and c["check"] == "error":
                    assert c["path"] == "candidate", (backend, s["id"])


def test_joblib_xfails_are_only_what_its_transport_changes(runs, tmp_path):
    """joblib pickles results back from its workers: non-contiguous arrays come back as C-contiguous writeable
    copies (layout, writeable; a masked array's mask too, attrs), big-endian ones native (dtype), a masked array
    comes back holding an int64 default fill value that a second pickle casts (pickle), and a memmap without a
    file cannot come back at all (the candidate run's error). The corpus declares exactly these as
    joblib-only strict xfails (parity.xfails); anything else is a failure of this test."""
    _, report = compare(runs, "joblib", tmp_path)
    xfailed = [s for s in report["scenarios"] if s["status"] == "xfail"]
    assert xfailed, "no joblib xfail applied: parity.xfail_on or compare's xfail source is broken"
    for s in xfailed:
        failed = [c for c in s["checks"] if not c["ok"]]
        assert {c["check"] for c in failed} <= {"layout", "writeable", "dtype", "attrs", "pickle", "error"}, s["id"]
        for c in failed:
            if c["check"] == "error":
                assert c["path"] == "candidate" and "BrokenProcessPool" in c["message"], s["id"]


def test_array_api_strict_runs_only_array_api_scenarios(runs):
    scenarios = manifest(runs("array_api_strict"))
    tagged = {i for i, s in scenarios.items() if ARRAY_API_TAG in s["meta"]["tags"]}
    assert len(tagged) >= 4
    assert all(scenarios[i]["status"] == "ok" for i in tagged)
    for i in scenarios.keys() - tagged:
        assert scenarios[i]["status"] == "skip", i
        assert f"tagged '{ARRAY_API_TAG}'" in scenarios[i]["error"]["message"], i


def test_cudf_without_a_gpu_skips_everything_with_the_reason(runs):
    import importlib.util

    if importlib.util.find_spec("cudf") is not None:
        pytest.skip("cudf is installed: whether it runs depends on the GPU, not covered here")
    scenarios = manifest(runs("cudf"))
    assert len(scenarios) >= 100
    for i, s in scenarios.items():
        assert s["status"] == "skip", i
        assert "cudf backend unavailable: cudf is not importable" in s["error"]["message"], i


def _cupy_usable():
    """Whether CuPy imports and sees a GPU: then the cupy backend runs, which a CPU machine cannot check."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - not installed, no driver, no device
        return False


def test_cupy_without_a_gpu_skips_everything_with_the_reason(runs, tmp_path):
    """Without CuPy or a GPU (this machine, CI) every scenario is reported skipped saying why, and compare counts
    them as skips: a backend that ran NumPy in CuPy's place, or dropped scenarios, would pass or lose them."""
    if _cupy_usable():
        pytest.skip("cupy sees a GPU here: scripts/gpu_check.sh runs it against gold")
    scenarios = manifest(runs("cupy"))
    assert scenarios.keys() == manifest(runs("gold")).keys()
    for i, s in scenarios.items():
        assert s["status"] == "skip", i
        assert s["error"]["message"].startswith("cupy backend unavailable: cupy "), (i, s["error"]["message"])
    code, report = compare(runs, "cupy", tmp_path)
    summary = report["summary"]
    assert code == 0 and summary["skip"] == summary["total"] == len(scenarios) >= 100, summary


# Gold and cupy runs of the bundled corpus on an H200 (scripts/gpu_check.sh, 2026-12-04: CuPy 14.2.0, NumPy 2.5.2), the
# operation registry's default sample and its whole product (PARITY_OPS=full), cut to one scenario for each of
# fixtures/cupy.py's DIFFERENCES but one, whose scenario's results (the multidimensional FFTs', 140 KB) are left out.
# docs/cupy-gpu-run.md has the runs.
GPU_RUN = REPO / "tests" / "gpu_runs" / "cupy-h200"
LEFT_OUT_OF_GPU_RUN = {"fft-along-axis-0-layout"}


@pytest.fixture(scope="module")
def h200_compare(tmp_path_factory):
    """compare of the kept H200 runs, once for the tests below: (exit code, stderr, the JSON report). PARITY_OPS=full
    keeps the declarations about variants the default sample lacks."""
    report_file = tmp_path_factory.mktemp("h200") / "report.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PARITY_OPS", "full")
        code, err = parity("compare", GPU_RUN / "gold", GPU_RUN / "cupy", "--json", report_file)
    return code, err, json.loads(report_file.read_text())


def test_cupy_declarations_explain_what_an_h200_run_found(h200_compare):
    """What CuPy really does, read back on a machine without a GPU: every difference fixtures/cupy.py declares (but
    the one above) explains a failure of the H200's runs, and nothing there is left unexplained. Catches a
    declaration edited or a compare detail renamed so that the declarations no longer match CuPy, which only a GPU
    run would otherwise show."""
    code, err, report = h200_compare
    assert code == 0 and report["summary"]["xfail"] == report["summary"]["total"], (report["summary"], err)
    assert not [n for n in report["notices"] if n["kind"] == "recorded-differences"], report["notices"]
    declared = {entry["id"] for entry in report["differences"]}  # fixtures/cupy.py's, as compare loaded them now
    explained = {check["details"]["difference"] for s in report["scenarios"] for check in s["checks"]
                 if not check["ok"] and "difference" in check.get("details", {})}
    assert explained == declared - LEFT_OUT_OF_GPU_RUN
    assert LEFT_OUT_OF_GPU_RUN < declared


def test_gpu_unexplained_brings_back_what_no_declaration_explains_with_its_results(h200_compare, tmp_path,
                                                                                    monkeypatch):
    """scripts/gpu_unexplained.py, which gpu_check.sh runs on the GPU machine: the failures no declaration explains,
    and the results of their scenarios, which compare reads again here once the declarations are edited."""
    monkeypatch.setenv("PARITY_OPS", "full")  # for the compare of the cut results below
    report = copy.deepcopy(h200_compare[2])
    report_file = tmp_path / "report.json"
    lost = "ops.min[layout=out,dtype=int8]"  # as the run on the GPU saw it before its declaration existed
    for s in report["scenarios"]:
        if s["id"] == lost:
            s["status"] = "error"
            for check in s["checks"]:
                check.get("details", {}).pop("difference", None)
    report_file.write_text(json.dumps(report))
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run([sys.executable, REPO / "scripts" / "gpu_unexplained.py", report_file, GPU_RUN, out], check=True)
    found = json.loads((out / "unexplained.json").read_text())
    assert {row["id"] for row in found["unexplained"]} == {lost} and found["results_kept"] == [lost]
    assert found["unexplained"][0]["type"] == "TypeError" and "min-out-fails-in-cub" not in found["explained"]
    subprocess.run(["tar", "-xzf", out / "unexplained.tar.gz", "-C", out], check=True)
    again = tmp_path / "again.json"
    assert parity("compare", out / "gold", out / "cupy", "--json", again)[0] == 0
    assert [(s["id"], s["status"]) for s in json.loads(again.read_text())["scenarios"]] == [(lost, "xfail")]


def test_cupy_host_copy_keeps_strides_of_every_layout():
    """materialize copies CuPy arrays to the host with their own strides: cupy.asnumpy's C-ordered copy would make
    an F-ordered, transposed, reversed or broadcast result look C-contiguous, a difference of the backend's copy.
    Checked with NumPy arrays standing in for device memory (the copy reads raw bytes around element 0)."""
    import ctypes

    import numpy

    import parity.backend

    parity.backend.register_fixtures(str(REPO / "fixtures"))
    from parity_fixtures import cupy as cupy_backend

    def read_span(array):
        return lambda low, nbytes: bytearray(ctypes.string_at(array.ctypes.data + low, nbytes))

    cube = numpy.arange(60.0).reshape(3, 4, 5)
    layouts = [cube, numpy.asfortranarray(cube), cube.transpose(2, 0, 1), cube[::-1, ::2, 1:], cube[:, 1],
               numpy.broadcast_to(numpy.arange(3, dtype=numpy.int16), (4, 3)), numpy.array(2.5, numpy.float32),
               numpy.arange(10, dtype=">i4")[::-3], numpy.empty((0, 3), order="F")]
    for array in layouts:
        host = cupy_backend.host_copy(array.shape, array.dtype, array.strides, read_span(array))
        assert (host.shape, host.dtype, host.strides) == (array.shape, array.dtype, array.strides), array.strides
        assert numpy.array_equal(host, array)
        # CuPy arrays have no read-only flag: every one is writeable, and so is its copy.
        assert host.flags.writeable


def test_cupy_skips_the_misaligned_layout_saying_why(monkeypatch):
    """On a GPU, a CuPy kernel over a misaligned view left the worker's CUDA context unusable and every later
    scenario errored (scripts/gpu_check.sh, H200): the cupy backend skips that layout with the reason, and runs the
    others. Checked with the GPU check bypassed, NumPy standing in for CuPy."""
    import parity.backend
    from parity._scenario import Skip

    parity.backend.register_fixtures(str(REPO / "fixtures"))
    from parity_fixtures import cupy as cupy_backend

    monkeypatch.setattr(cupy_backend, "_UNAVAILABLE", None)
    called = []

    def generated(xp, rng, layout, dtype):
        called.append(layout)
        return {}

    with pytest.raises(Skip, match="cudaErrorMisalignedAddress"):
        cupy_backend.execute(generated, xp=None, rng=None, layout="misaligned", dtype="float64")
    assert called == []
    cupy_backend.execute(generated, xp=None, rng=None, layout="stepped", dtype="float64")
    assert called == ["stepped"]



def test_joblib_leaves_nothing_in_dev_shm(tmp_path):
    """The joblib candidate runs each scenario in a loky worker; the corpus's joblib scenarios make pools of their own
    there, and joblib kills those workers when a task fails (abort_everything). What their pools had made stayed in
    /dev/shm, run after run (~28 entries a corpus run), until the run's worker ended its pools and loky's resource
    tracker itself (parity._scenario.stop_process_pools) instead of having them killed with its process group."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here: joblib and loky keep their folders and semaphores elsewhere")
    before = os.listdir("/dev/shm")
    code, err = parity("run", "--backend", "joblib", "-k", "joblib_parallel or known_bugs", "--out", tmp_path / "out",
                       "-j", "1", "-q")
    assert code in (0, 1) and len(manifest(tmp_path / "out")) >= 10, f"exit {code}\n{err}"
    left = shm_leftovers(before)
    assert not left, f"left in /dev/shm by the run's loky workers: {sorted(left)}"


def test_memmap_forked_workers_write_their_own_files(tmp_path, monkeypatch):
    """`parity run` forks its workers from a process that imported the backend: the memmap backend's directory and
    file counter, made at import, were every worker's, so two workers wrote the same "0.dat" and one's output changed
    under the other (numpy_strings.unicode_ops failed values or fidelity under -j 2, a different check from run to
    run). Each process now writes into a directory of its own."""
    import numpy

    import parity.backend

    # Both directories under tmp_path: the forked child ends with os._exit, which runs no exit handler to remove its.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    parity.backend.register_fixtures(str(REPO / "fixtures"))
    from parity_fixtures import memmap as memmap_backend

    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # a forked worker: its first output, then the parent's is written
        try:
            os.close(read)
            out = memmap_backend.materialize(numpy.full(4, 7.0))
            os.write(write, json.dumps([out.filename, out.tolist()]).encode())
        finally:
            os._exit(0)
    os.close(write)
    mine = memmap_backend.materialize(numpy.arange(4.0))
    with os.fdopen(read) as pipe:
        theirs_file, theirs = json.loads(pipe.read())
    os.waitpid(child, 0)
    assert Path(mine.filename).parent != Path(theirs_file).parent, (mine.filename, theirs_file)
    assert Path(theirs_file).parent.parent == tmp_path, theirs_file
    assert mine.tolist() == [0.0, 1.0, 2.0, 3.0] and theirs == [7.0] * 4


def test_memmap_run_and_compare_leave_no_directory_behind(tmp_path):
    """The memmap backend made its directory when imported, and only a worker's exit handlers removed it: `parity
    compare`, which loads the candidate's backend for its declarations and never runs exit handlers, left an empty
    /tmp/parity-memmap-* behind every time (forty had gathered here). Now a process makes one only when it writes."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp))

    def run(*args):
        done = subprocess.run([BIN, *map(str, args)], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stderr}"
        left = sorted(p.name for p in temp.glob("parity-memmap-*"))
        assert not left, f"{args[0]} left {left}"

    selection = ("-k", "layouts or shapes", "-j", "2", "-q")
    run("run", "--backend", "gold", "--out", tmp_path / "gold", *selection)
    run("run", "--backend", "memmap", "--out", tmp_path / "memmap", *selection)
    assert len(manifest(tmp_path / "memmap")) >= 10
    run("compare", tmp_path / "gold", tmp_path / "memmap", "-q")


def test_a_workers_end_leaves_its_pools_resource_tracker_running(tmp_path):
    """stop_process_pools stopped loky's resource tracker, and joblib's exit handler, run right after it, started a
    new one: a process to start up (~0.2 s) that the end of every run using a pool waited for. The tracker now goes
    on, and a worker's group kill spares it (tests/faults: it still leaves nothing in /dev/shm)."""
    script = tmp_path / "pools.py"
    script.write_text(
        "import atexit, joblib, numpy\n"
        "from joblib.externals.loky.backend import resource_tracker\n"
        "from parity._scenario import stop_process_pools\n"
        "with joblib.Parallel(n_jobs=2, backend='loky', max_nbytes='1K') as pool:\n"
        "    pool(joblib.delayed(numpy.sum)(numpy.ones(10_000)) for _ in range(2))\n"
        "before = resource_tracker._resource_tracker._pid\n"
        "stop_process_pools()\n"
        "atexit._run_exitfuncs()\n"
        "print(before, resource_tracker._resource_tracker._pid)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    done = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.split()
    assert before.isdigit() and after == before, f"tracker {before}, then {after}\n{done.stderr}"


THREADS_FIRST_WRITE = """
import sys, threading
import numpy
import parity.backend
parity.backend.register_fixtures(sys.argv[1])
from parity_fixtures import memmap
barrier = threading.Barrier(8)
made = []

def first_write():
    barrier.wait()
    made.append(memmap.materialize(numpy.arange(3.0)).filename)

threads = [threading.Thread(target=first_write) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len({m.rsplit("/", 1)[0] for m in made}))
"""


def test_memmap_threads_writing_their_processs_first_file_at_once_share_one_directory(tmp_path):
    """Review finding: two threads of one process writing its first memmap at once could each make a directory; the
    first was then never removed, and the second exit handler raised KeyError at exit."""
    for attempt in range(5):
        temp = tmp_path / f"tmp{attempt}"
        temp.mkdir()
        done = subprocess.run([sys.executable, "-c", THREADS_FIRST_WRITE, str(REPO / "fixtures")], capture_output=True,
                              text=True, timeout=120, env=dict(os.environ, TMPDIR=str(temp),
                                                               PYTHONPATH=str(REPO / "python")))
        assert done.returncode == 0 and done.stdout.split() == ["1"], done.stdout + done.stderr
        assert "Error" not in done.stderr, done.stderr
        assert not list(temp.glob("parity-memmap-*")), "a directory outlived its process"
