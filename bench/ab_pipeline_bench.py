"""Two parity builds beside the pytest-and-pickle reference over pipeline_bench's generated scenarios (bench/README).

python bench/ab_pipeline_bench.py OLD_BIN NEW_BIN [N] [REPEAT] [--fresh] [--check] [--dir DIR]: gold + fsproxy + compare
(probe on, --jobs 1) of N generated scenarios (default 500) and of one, by each build and by the reference pipeline,
round robin, medians of REPEAT (default 3); with --check also NEW_BIN's `parity check --jobs 1` (the two runs side by
side, the compare in two processes) as the row "new check". Each pipeline writes where the last one of its kind
wrote, removed just before; with --fresh (pipeline_bench's way, its `fresh`) into a new directory each time, all
removed at the end: on ext4 without a journal (this machine's) a file created in a block group that has just freed
thousands of inodes skips each of them, so deleting the last run's results right before costs parity, which creates
one file a scenario and side, far more than the reference, which creates three in all. --dir: where the sets and
outputs go (default the system's temporary directory; /dev/shm, a tmpfs, leaves the file system out). Prints wall and CPU
seconds (user + system of every process of a pipeline), each pipeline's ratio to the reference, and the marginal CPU
per scenario, (cpu(N) - cpu(1)) / (N - 1), the scenarios' own work included (on a loaded machine it cannot be timed
apart). For ratios measured in one run on a shared machine."""
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pipeline_bench as pb  # noqa: E402


def main():
    base, argv = pb.take_dir(sys.argv[1:])
    fresh, with_check = "--fresh" in argv, "--check" in argv
    args = [a for a in argv if a not in ("--fresh", "--check")]
    old, new = args[0], args[1]
    count = int(args[2]) if len(args) > 2 else 500
    repeat = int(args[3]) if len(args) > 3 else 3
    tmp = Path(tempfile.mkdtemp(prefix="parity-ab-bench.", dir=base))
    sets = {n: pb.generate(tmp / f"set{n}", n) for n in (1, count)}

    def out(kind):
        return pb.fresh(tmp, kind) if fresh else tmp / kind

    def parity(binary):
        def run(n):
            pb.BIN = binary
            return pb.parity_pipeline(sets[n] / "parity", out("p-out"), "fsproxy", 1, n)
        return run

    def check(binary):
        def run(n):
            pb.BIN = binary
            return pb.check_pipeline(sets[n] / "parity", out("c-out"), "fsproxy", 1, n)
        return run

    pipelines = {"old": parity(old), "new": parity(new),
                 "reference": lambda n: pb.reference_pipeline(sets[n] / "pytest", out("r-out"), "fsproxy", n)}
    if with_check:
        pipelines["new check"] = check(new)
    result = {}
    for n in (1, count):
        result[n] = pb.interleaved({name: (lambda run=run, n=n: run(n)) for name, run in pipelines.items()}, repeat)
    print(f"{count} scenarios, gold + fsproxy + compare, medians of {repeat} (seconds; marginal: CPU ms per scenario); "
          f"{'a fresh directory per pipeline' if fresh else 'the last output removed just before'}, in {tmp.parent}, "
          f"load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"   {'pipeline':<10} {'gold':>7} {'cand':>7} {'compare':>8} {'wall':>7} {'cpu':>7} {'wall x':>7} "
          f"{'cpu x':>7} {'marginal':>9}")
    ref = result[count]["reference"]
    for name in pipelines:
        m, one = result[count][name], result[1][name]
        marginal = (m["cpu"] - one["cpu"]) / (count - 1) * 1e3
        stages = [f"{m[k]:{w}.2f}" if k in m else f"{'-':>{w}}" for k, w in (("gold", 7), ("candidate", 7),
                                                                           ("compare", 8))]
        print(f"   {name:<10} {' '.join(stages)} {m['total']:7.2f} "
              f"{m['cpu']:7.2f} {ref['total'] / m['total']:6.2f}x {ref['cpu'] / m['cpu']:6.2f}x {marginal:7.2f} ms")
    print("   wall x, cpu x: the reference's over the pipeline's (above 1: faster than the reference)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
