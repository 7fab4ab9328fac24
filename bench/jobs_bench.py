"""Wall and CPU seconds of parity pipelines, two builds side by side, --jobs 1 against --jobs 2 (bench/README).

python bench/jobs_bench.py OLD_BIN NEW_BIN corpus|N|runN|compareN|comparecorpus [REPEAT]: `corpus` times a gold run of
the bundled corpus, a number N gold + fsproxy + compare of N generated scenarios (pipeline_bench's), runN the gold run
of those alone, compareN (comparecorpus) `compare --jobs 1` and `--jobs 2` alone, over gold and fsproxy runs of those
(of the corpus) made once by NEW_BIN; round robin, medians. CPU is user + system of every process of a pipeline (getrusage of the waited-for children: parity's
workers and compare processes included), the figure a loaded machine distorts least.

On a loaded machine wall time says nothing about two cores against one, so it also prints, per build, the bound on
two idle cores: `-j 1` takes at least its CPU, `-j 2` at least its serial part (the run of one scenario: start-up,
backend, every module imported, which nothing overlaps with a fork server) plus half of the rest of its CPU. It
prints first what two CPU-bound processes get here against one (pipeline_bench.two_process_ceiling), the ceiling of
any -j 2."""
import json, os, resource, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import pipeline_bench as pb  # noqa: E402

OLD, NEW = sys.argv[1], sys.argv[2]
TMP = Path(tempfile.mkdtemp(prefix="parity-jobs-bench."))
CORPUS = Path(__file__).resolve().parents[1] / "scenarios"

def cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN); return u.ru_utime + u.ru_stime

def timed(cmd, ok=(0, 1)):
    c, t = cpu(), time.perf_counter()
    p = subprocess.run(list(map(str, cmd)), capture_output=True, text=True)
    if p.returncode not in ok: raise SystemExit(f"{cmd}: {p.returncode}\n{p.stderr[-3000:]}")
    return time.perf_counter() - t, cpu() - c

def pipeline(binary, scenarios, jobs, candidate="fsproxy", compare_jobs=True, stages=("gold", "candidate", "compare")):
    out = pb.fresh(TMP, "out")  # nothing removed before a timed run (pipeline_bench.fresh)
    r = {}
    for side, backend in (("gold", "gold"), ("candidate", candidate)):
        if side in stages:
            r[side] = timed([binary, "run", "-q", "--backend", backend, "--scenarios", scenarios, "--out", out / side, "--jobs", jobs])
    if "compare" in stages:
        extra = ["--jobs", jobs] if compare_jobs else []
        r["compare"] = timed([binary, "compare", "-q", out / "gold", out / "candidate", "--json", out / "r.json", "--junit", out / "j.xml", *extra])
    return {k: v for k, v in r.items()}

def first_id(binary, scenarios):
    listing = subprocess.run([str(binary), "list", "--json", "--scenarios", str(scenarios)], capture_output=True, text=True)
    return next(e["id"] for e in json.loads(listing.stdout) if "error" not in e)

def serial_cpu(binary, scenarios, one):
    """CPU of a gold run of one scenario: what -j 2 cannot share between two cores (the gold stage's)."""
    out = pb.fresh(TMP, "serial")
    return timed([binary, "run", "-q", "--backend", "gold", "--scenarios", scenarios, "--out", out, "--only", one])[1]

def summarize(runs):
    keys = runs[0].keys()
    return {k: (statistics.median(r[k][0] for r in runs), statistics.median(r[k][1] for r in runs)) for k in keys} | {
        "total": (statistics.median(sum(v[0] for v in r.values()) for r in runs), statistics.median(sum(v[1] for v in r.values()) for r in runs))}

def compare_only(binary, runs, jobs):
    """compare --jobs N of the same two runs: both builds read what NEW_BIN's runs wrote."""
    out = pb.fresh(TMP, "reports"); out.mkdir()
    return {"compare": timed([binary, "compare", "-q", runs / "gold", runs / "candidate", "--json", out / "r.json",
                              "--junit", out / "j.xml", "--jobs", jobs])}

def compare_main(what, repeat):
    scen = CORPUS if what == "comparecorpus" else pb.generate(TMP / "set", int(what.removeprefix("compare"))) / "parity"
    runs = TMP / "runs"
    for side, backend in (("gold", "gold"), ("candidate", "fsproxy")):
        timed([NEW, "run", "-q", "--backend", backend, "--scenarios", scen, "--out", runs / side, "--jobs", 2])
    names = ["old j1", "old j2", "new j1", "new j2"]
    got = {k: [] for k in names}
    for r in range(repeat):
        for name in names[r % 4:] + names[:r % 4]:
            got[name].append(compare_only(OLD if name.startswith("old") else NEW, runs, int(name[-1]))["compare"])
            print(name, tuple(round(x, 2) for x in got[name][-1]), flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()}
    print("load average (1, 5, 15 min) at the end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for build in ("old", "new"):
        (w1, c1), (w2, c2) = med[f"{build} j1"], med[f"{build} j2"]
        print(f"{build}: wall j1 {w1:.2f} s, j2 {w2:.2f} s: {w1 / w2:.2f}x; CPU j1 {c1:.2f} s, j2 {c2:.2f} s "
              f"(+{100 * (c2 / c1 - 1):.0f}%)")
    shutil.rmtree(TMP, ignore_errors=True)

def main():
    what, repeat = sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 3
    print("load average (1, 5, 15 min) at the start:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("two CPU-bound processes against one here: %.2fx (%.2f-%.2fx), the ceiling of any -j 2"
          % pb.two_process_ceiling())
    if what.startswith("compare"):
        return compare_main(what, repeat)
    if what == "corpus":
        scen, stages = CORPUS, ("gold",)
    else:
        n = int(what.removeprefix("run")); scen = pb.generate(TMP / f"set{n}", n) / "parity"
        stages = ("gold",) if what.startswith("run") else ("gold", "candidate", "compare")
    configs = {"old j1": (OLD, 1, False), "old j2": (OLD, 2, False), "new j1": (NEW, 1, True), "new j2": (NEW, 2, True)}
    runs = {k: [] for k in configs}
    names = list(configs)
    for r in range(repeat):
        for name in names[r % 4:] + names[:r % 4]:
            b, j, cj = configs[name]
            runs[name].append(pipeline(b, scen, j, compare_jobs=cj, stages=stages))
            print(name, {k: (round(v[0], 2), round(v[1], 2)) for k, v in runs[name][-1].items()}, flush=True)
    res = {k: summarize(v) for k, v in runs.items()}
    print(json.dumps(res, indent=1))
    print("load average (1, 5, 15 min) at the end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for build in ("old", "new"):
        w1, w2 = res[f"{build} j1"]["total"][0], res[f"{build} j2"]["total"][0]
        print(f"{build}: wall j1 {w1:.2f} s, j2 {w2:.2f} s: {w1 / w2:.2f}x")
        j1, j2 = res[f"{build} j1"]["total"][1], res[f"{build} j2"]["total"][1]
        print(f"{build}: CPU j1 {j1:.2f} s, j2 {j2:.2f} s; bound on two idle cores by CPU alone {2 * j1 / j2:.2f}x")
    if stages == ("gold",):  # the serial part: the fork server imports everything before any fork
        for build, binary in (("old", OLD), ("new", NEW)):
            serial = statistics.median(serial_cpu(binary, scen, first_id(NEW, scen)) for _ in range(repeat))
            j1, j2 = res[f"{build} j1"]["total"][1], res[f"{build} j2"]["total"][1]
            print(f"{build}: serial part {serial:.2f} s CPU; bound on two idle cores with it "
                  f"{j1 / (serial + max(0.0, j2 - serial) / 2):.2f}x")
    shutil.rmtree(TMP, ignore_errors=True)

main()
