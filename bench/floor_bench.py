"""The least a small scenario can cost under parity's contract, piece by piece, against target 2's 0.5 ms (bench/README).

  .venv/bin/python bench/floor_bench.py [N] [REPEAT] [--candidate fsproxy] [--dir DIR] [--quick]

Issue #20's target 2 asks for < 0.5 ms of marginal overhead per scenario over gold run + candidate run + compare. This
measures what no design that keeps parity's contract can leave out, each piece alone in a process that has already
started and warmed up, over pipeline_bench's N generated scenarios (default 500), medians of REPEAT (default 5), CPU
microseconds per scenario (time.process_time around the piece only, so the loop and the timer are left out):
  own       the scenario's own work: its function under the backend, given its seeded generator (`Scenario.call`);
            the work under test, not overhead, so left out of the floor of target 2's overhead;
  pickle    pickle protocol 5 of its outputs: the pickle probe's meaning is that the candidate's own __reduce__ runs;
  file      one file a scenario, created under its own name and written: outputs must outlive the process that made
            them so that a fresh process reloads them (parity's holds its codec's bytes and the pickle). Not renamed
            into place: a reader learns of the file only once it is whole (parity's manifest), as a run's worker
            writes it (atomic_file.h's Publish::in_place). Records appended to one file a process would cost less;
            one file a scenario is the floor of a results directory laid out as parity's is;
  reload    in a fresh process, both sides' files read and unpickled (the candidate's own reconstructors);
  compare   every leaf's type, dtype, shape, strides, contiguity, writeable flag and values (exact, else allclose);
  report    its entry in the JSON and JUnit reports (a dict of its checks dumped, a testcase element escaped);
  isolate   one round trip between two processes over pipes: a supervisor that survives the scenario's crash and blames
            it on that scenario learns at least when each one starts (parity: the supervisor and its worker).
The floor is the sum over both sides and the compare, less the scenarios' own work. It is a lower bound, not a design:
one pickle stands in for parity's codec and probe both (a pickle keeps neither strides nor a proxy's own type), no
digest, no manifest, no timeouts. Then the pieces parity's design adds to it, each timed alone with parity's own
implementation (its C++ codec through parity._core, its C++ digest walk through parity.probe):
  digests   the fidelity digests of the outputs as the scenario produced them (what compare checks its reload against);
  codec     the outputs written by parity's layout-preserving codec, the pickle appended to the same file (a run's
            worker's one file a scenario and side): it stands in for the floor's `file`, which the sum with the
            design's pieces leaves out;
  recodec   in compare, both sides' codec files read back;
  redigest  in compare, the digests of both reloads (the fidelity check).
Prints the pieces, the floor against 0.5 ms, and the floor with the design's pieces; the exit status is 1 only when a
piece fails (a scenario errs, or the two sides differ). Without parity._core (PARITY_CORE_DIR, else the build's
python/ directory beside PARITY_BIN) the design's pieces are left out, saying so. --quick: 50 scenarios, one round
(bench/all.sh --quick, CTest's bench_all_quick).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pipeline_bench as pb  # noqa: E402

TARGET_US = 500.0
DESIGN_PIECES = ("digests", "codec", "recodec", "redigest")  # what parity's design adds to the floor (the docstring)

# Both scripts' way to parity's own implementations of the design's pieces: _core None when the Python API was not built
# (main() then leaves those pieces out, saying so).
DESIGN_READY = """
try:
    from parity import _core, probe
except ImportError:
    _core = None
"""

# One side's pieces: own work, pickle, file (one process: the side's run), once pipeline_bench's SCENARIOS_READY has
# loaded the backend and warmed up.
RUN_SIDE = pb.SCENARIOS_READY + DESIGN_READY + r"""
import os, pickle
out_dir = sys.argv[5]
clock = time.process_time
spent = {"own": 0.0, "pickle": 0.0, "file": 0.0} | ({"digests": 0.0, "codec": 0.0} if _core else {})
for i, s in enumerate(found.scenarios[:5] if _core else ()):  # warmed up as the scenarios were (SCENARIOS_READY)
    outputs = s.call(b)["outputs"]
    probe.digests(outputs, "outputs", {}, {}); _core.write_result(f"{out_dir}/warm{i}.parity", outputs)
for i, s in enumerate(found.scenarios):
    t0 = clock(); result = s.call(b); t1 = clock()
    if result["status"] != "ok": raise SystemExit(f"{s.id}: {result}")
    blob = pickle.dumps(result["outputs"], protocol=5); t2 = clock()
    fd = os.open(f"{out_dir}/{i}.pkl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600); os.write(fd, blob); os.close(fd)
    t3 = clock()
    spent["own"] += t1 - t0; spent["pickle"] += t2 - t1; spent["file"] += t3 - t2
    if _core:
        # As the worker digests (worker.cc's record_probes): with the short descriptions the manifest keeps beside them.
        probe.digests(result["outputs"], "outputs", {}, {}); t4 = clock()
        # As the worker: the codec's file, then the pickle appended to it (one file a scenario and side).
        _core.write_result(f"{out_dir}/{i}.parity", result["outputs"], in_place=True)
        fd = os.open(f"{out_dir}/{i}.parity", os.O_WRONLY | os.O_APPEND); os.write(fd, blob); os.close(fd); t5 = clock()
        spent["digests"] += t4 - t3; spent["codec"] += t5 - t4
print(json.dumps({k: v / len(found.scenarios) * 1e6 for k, v in spent.items()}))
"""

# The compare's pieces: reload, compare and report (a fresh process, the candidate's module installed for its reconstructors).
COMPARE = r"""
import json, os, pickle, sys, time
from xml.sax.saxutils import quoteattr
sys.path.insert(0, sys.argv[1])
from parity import backend
backend.register_fixtures(sys.argv[2])
b = backend.load(sys.argv[3]); b.install()
import numpy as np
gold_dir, cand_dir, count = sys.argv[4], sys.argv[5], int(sys.argv[6])
clock = time.process_time
""" + DESIGN_READY + r"""
def read(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)

def leaf_equal(g, c):
    if isinstance(g, dict):
        return type(c) is dict and g.keys() == c.keys() and all(leaf_equal(g[k], c[k]) for k in g)
    if not isinstance(g, np.ndarray):
        return type(g) is type(c) and (g == c or (g != g and c != c))
    c = np.asarray(c)
    if (g.dtype != c.dtype or g.shape != c.shape or g.strides != c.strides or g.flags.c_contiguous != c.flags.c_contiguous
            or g.flags.f_contiguous != c.flags.f_contiguous or g.flags.writeable != c.flags.writeable):
        return False
    return np.array_equal(g, c) or (g.dtype.kind in "fc" and np.allclose(g, c, equal_nan=True))

for i in range(5): leaf_equal(pickle.loads(read(f"{gold_dir}/{i}.pkl")), pickle.loads(read(f"{cand_dir}/{i}.pkl")))
def report(i, g):
    checks = [{"check": check, "ok": True, "path": key} for key in g for check in ("type", "dtype", "layout", "values")]
    entry = json.dumps({"id": f"m{i // 50}.s{i}", "status": "pass", "checks": checks, "repro": f"parity run -k s{i}"})
    case = f'<testcase classname={quoteattr(f"m{i // 50}")} name={quoteattr(f"s{i}")} time="0.001"/>'
    return len(entry) + len(case)

spent = {"reload": 0.0, "compare": 0.0, "report": 0.0} | ({"recodec": 0.0, "redigest": 0.0} if _core else {})
for i in range(5 if _core else 0):  # warmed up as the pickles were
    for side in (gold_dir, cand_dir): probe.digests(_core.read_result(f"{side}/warm{i}.parity"), "outputs", None, {})
for i in range(count):
    t0 = clock()
    g = pickle.loads(read(f"{gold_dir}/{i}.pkl")); c = pickle.loads(read(f"{cand_dir}/{i}.pkl")); t1 = clock()
    same = leaf_equal(g, c); t2 = clock()
    report(i, g); t3 = clock()
    if not same: raise SystemExit(f"scenario {i}: the two sides differ")
    spent["reload"] += t1 - t0; spent["compare"] += t2 - t1; spent["report"] += t3 - t2
    if _core:
        g = _core.read_result(f"{gold_dir}/{i}.parity"); c = _core.read_result(f"{cand_dir}/{i}.parity"); t4 = clock()
        # As compare digests a reload: no descriptions (probes.cc's begin_digests; made only for a failure's message).
        probe.digests(g, "outputs", None, {}); probe.digests(c, "outputs", None, {}); t5 = clock()
        spent["recodec"] += t4 - t3; spent["redigest"] += t5 - t4
print(json.dumps({k: v / count * 1e6 for k, v in spent.items()}))
"""

# A round trip a scenario between two processes over two pipes: both processes' CPU, as a supervisor and its worker.
ISOLATE = r"""
import json, os, resource, sys, time
count = int(sys.argv[1])
down_r, down_w = os.pipe(); up_r, up_w = os.pipe()
pid = os.fork()
if pid == 0:
    while os.read(down_r, 64) != b"e": os.write(up_w, b"d")
    os._exit(0)
for _ in range(50): os.write(down_w, b"s"); os.read(up_r, 64)
mine, theirs = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
for _ in range(count): os.write(down_w, b"s"); os.read(up_r, 64)
os.write(down_w, b"e"); os.waitpid(pid, 0)
child = resource.getrusage(resource.RUSAGE_CHILDREN)
spent = time.process_time() - mine + (child.ru_utime + child.ru_stime)  # the child's whole life: its start is tiny
print(json.dumps({"isolate": spent / count * 1e6}))
"""


# parity._core, the Python API's extension module, for the design's pieces: where the build put it (CMake's
# <build>/python), as tests/CMakeLists.txt tells the Python tests.
CORE_DIR = os.environ.get("PARITY_CORE_DIR") or str(Path(pb.BIN).resolve().parent / "python")


def python(code: str, *args) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env=os.environ | {"PARITY_CORE_DIR": CORE_DIR})
    if done.returncode:
        raise SystemExit(f"floor_bench: a piece failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def one_round(scenarios: Path, work: Path, candidate: str, count: int) -> dict:
    """Every piece once: {(side, piece): microseconds per scenario}, its files in `work`, a new directory
    (pipeline_bench's `fresh`: removing the last round's files right before would time the file system's clean-up)."""
    common = (pb.REPO / "python", pb.REPO / "fixtures")
    figures = {}
    for side, backend_name in (("gold", "gold"), ("candidate", candidate)):
        (work / side).mkdir(parents=True)
        for piece, us in python(RUN_SIDE, *common, backend_name, scenarios, work / side).items():
            figures[(side, piece)] = us
    for piece, us in python(COMPARE, *common, candidate, work / "gold", work / "candidate", count).items():
        figures[("compare", piece)] = us
    figures[("both", "isolate")] = 2 * python(ISOLATE, count)["isolate"]  # a supervisor for each side's run
    return figures


def main() -> int:
    base, argv = pb.take_dir(sys.argv[1:])
    candidate, quick = "fsproxy", "--quick" in argv
    argv = [a for a in argv if a != "--quick"]
    if "--candidate" in argv:
        at = argv.index("--candidate")
        candidate = argv[at + 1]
        del argv[at:at + 2]
    count = int(argv[0]) if argv else 50 if quick else 500
    repeat = int(argv[1]) if len(argv) > 1 else 1 if quick else 5
    tmp = Path(tempfile.mkdtemp(prefix="parity-floor-bench.", dir=base))
    try:
        scenarios = pb.generate(tmp / "set", count) / "parity"
        rounds = [one_round(scenarios, pb.fresh(tmp, "work"), candidate, count) for _ in range(repeat)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    medians = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    print(f"floor_bench: {count} generated scenarios, gold and {candidate}, medians of {repeat}, CPU µs a scenario, "
          f"in {tmp.parent}, load average {os.getloadavg()[0]:.1f}")
    for (where, piece), us in medians.items():
        print(f"  {where:10s} {piece:8s} {us:8.1f}")
    own = medians[("gold", "own")] + medians[("candidate", "own")]
    design = sum(us for (_, piece), us in medians.items() if piece in DESIGN_PIECES)
    floor = sum(medians.values()) - own - design
    if design:  # the codec's file holds the pickle too: it replaces the floor's file, not adds to it
        design -= medians[("gold", "file")] + medians[("candidate", "file")]
    verdict = "below" if floor < TARGET_US else "at or above"
    print(f"  {'floor':19s} {floor:8.1f}  (overhead, the scenarios' own {own:.1f} left out: {verdict} target 2's "
          f"{TARGET_US:.0f} µs a scenario; the marginal with their own work {floor + own:.1f})")
    if not design:
        print(f"  the design's pieces left out: no parity._core in {CORE_DIR} (build the Python API, or set "
              "PARITY_CORE_DIR)")
        return 0
    verdict = "below" if floor + design < TARGET_US else "at or above"
    print(f"  {'with the design':19s} {floor + design:8.1f}  (the floor with parity's codec file holding the pickle in "
          f"place of its file, the codec's reload and the fidelity digests on both sides, {design:+.1f}: {verdict} "
          f"target 2's {TARGET_US:.0f} µs a scenario)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
