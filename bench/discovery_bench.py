"""What bounds `parity run -j 2` of a corpus whose scenario modules share heavy libraries (issue #20, target 3).

  .venv/bin/python bench/discovery_bench.py [--scenarios DIR] [--repeat 3] [--quick]   # the bundled corpus by default

A run makes its plan (every selected id, in order) before its first scenario: the shard partition, the selection of
nothing (exit 5), the ids admitted as one process importing the modules in order would, and the progress total are
decisions over all of them. So every scenario waits until every module has been imported by some process. This times,
in processes that have started Python, NumPy and parity and loaded the gold backend (medians of --repeat):
  one        the discovery in one process (discovery.discover_part of all: what the fork server does);
  alone      each module imported by itself in a fresh such process, and the pytest suites' collection by itself: the
             largest is the least any split of the modules between processes can import its part in, as that module's
             libraries come with it;
  modulo     two forked processes, each importing every other module (the exec mode's parts), their wall;
  contiguous two forked processes, each importing one contiguous half in name order, their wall;
  run -j 1   `parity run --backend gold -j 1` of the corpus, wall;
  ceiling    two processes' ceiling here (pipeline_bench.ceiling_ratio), each measure taken in turn with the others.
It prints any design's bound for a run that plans before it runs: T / (s + (T - s) / c), with s the start (`python -c
"import numpy"`) plus the largest module alone, T the `-j 1` wall and c the ceiling.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pipeline_bench as pb  # noqa: E402  (the binary, the timer, the ceiling)

REPO = pb.REPO

# A process ready to discover: parity on the path, NumPy imported, the gold backend loaded and installed as a run's
# worker has it. argv: parity's python/, fixtures/, the scenarios, the mode, the module's index (mode "alone").
READY = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
from parity import backend, discovery, pytest_suite
backend.register_fixtures(sys.argv[2])
b = backend.load("gold"); b.install()
paths, mode, arg = [sys.argv[3]], sys.argv[4], sys.argv[5]
files = list(discovery._module_files(paths, pytest_suite.plan(paths).owned))
if mode == "names":
    print(" ".join(file.name for _, file in files))
    sys.exit(0)

def share(indexes, pytest):
    if pytest:
        pytest_suite.collect(paths, "gold", b, None, {}, discovery.ModuleError)
    for i in indexes:
        root, file = files[i]
        discovery._load_module(i, discovery._module_name(root, file), file)

start, n = time.perf_counter(), len(files)
if mode == "one":
    discovery.discover_part(paths, 0, 1, backend=b)
elif mode == "alone":
    share([] if arg == "pytest" else [int(arg)], arg == "pytest")
else:  # two forked processes, each importing its part; the first also collects the pytest suites, as part 0 does
    children = []
    for p in range(2):
        indexes = [i for i in range(n) if (i % 2 if mode == "modulo" else i * 2 // n) == p]
        pid = os.fork()
        if pid == 0:
            share(indexes, p == 0)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
print(time.perf_counter() - start)
"""


def in_ready_process(scenarios: Path, mode: str, arg: str = "-") -> str:
    return subprocess.run([sys.executable, "-c", READY, str(REPO / "python"), str(REPO / "fixtures"), str(scenarios),
                           mode, arg], check=True, capture_output=True, text=True).stdout


def seconds(scenarios: Path, mode: str, arg: str = "-") -> float:
    return float(in_ready_process(scenarios, mode, arg).split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=Path, default=REPO / "scenarios")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="the smoke test (bench/all.sh --quick): one repetition over one module, no module alone")
    args = parser.parse_args()
    if args.quick:
        args.scenarios = REPO / "scenarios" / "plain_numpy.py"
    repeat = 1 if args.quick else args.repeat
    names = in_ready_process(args.scenarios, "names").split()
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"parity-discovery-bench-{os.getpid()}"

    def run_j1() -> float:
        shutil.rmtree(out, ignore_errors=True)
        return pb.timed(pb.run_command("gold", args.scenarios, out), ok=(0, 1))[0]

    measures = {
        "start": lambda: pb.timed([sys.executable, "-c", "import numpy"])[0],
        "one": lambda: seconds(args.scenarios, "one"),
        "modulo": lambda: seconds(args.scenarios, "modulo"),
        "contiguous": lambda: seconds(args.scenarios, "contiguous"),
        "run": run_j1,
        "ceiling": (lambda: pb.ceiling_ratio(1_000_000)) if args.quick else pb.ceiling_ratio,
    }
    runs = {name: [] for name in measures}
    for _ in range(repeat):  # in turn, so that each measure sees the machine's same stretch
        for name, measure in measures.items():
            runs[name].append(measure())
    shutil.rmtree(out, ignore_errors=True)
    m = {name: statistics.median(values) for name, values in runs.items()}
    print(f"parity discovery benchmark: {args.scenarios} ({len(names)} scenario modules and its pytest suites), "
          f"{os.cpu_count()} CPUs, medians of {repeat}, seconds")
    print(f"   python -c 'import numpy'           {m['start']:7.3f}")
    print(f"   one process imports every module   {m['one']:7.3f}")
    for mode in ("modulo", "contiguous"):
        print(f"   two processes, {mode:<10} halves   {m[mode]:7.3f}  ({m['one'] / m[mode]:.2f}x one)")
    print(f"   parity run --backend gold -j 1     {m['run']:7.3f}; two processes' ceiling {m['ceiling']:.2f}x")
    if args.quick:
        return
    alone = {name: statistics.median(seconds(args.scenarios, "alone", arg) for _ in range(repeat))
             for name, arg in [*((name, str(i)) for i, name in enumerate(names)),
                               ("(pytest suites' collection)", "pytest")]}
    for name in sorted(alone, key=alone.get, reverse=True)[:5]:
        print(f"   alone: {name:<30} {alone[name]:7.3f}")
    largest = max(alone.values())
    serial = m["start"] + largest
    bound = pb.any_design_bound(m["run"], 1, serial, m["ceiling"])  # one "start": Python's, NumPy's and the import
    print(f"   the largest alone is {largest / m['one']:.0%} of one process's discovery: no split of the modules "
          f"imports its parts in less")
    print(f"   any design that plans before it runs: at most {bound:.2f}x at -j 2 (serial {serial:.3f} s: the start "
          f"and the largest module alone; the rest divided by the ceiling)")


if __name__ == "__main__":
    main()
