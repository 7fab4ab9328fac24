#!/usr/bin/env python3
"""What a compare left unexplained, small enough to bring back from a GPU machine (scripts/gpu_check.sh).

python3 scripts/gpu_unexplained.py REPORT.json RESULTS OUT: writes OUT/unexplained.json (the summary, each declared
difference's checks and scenarios, and every failed check no declaration explains: its scenario, check, path, message
and details) and OUT/unexplained.tar.gz (gold/ and cupy/ results directories cut to the scenarios with such a check,
smallest first up to 14 MB), which `parity compare gold cupy` reads again where the declarations are edited. A whole
corpus's report and results (PARITY_OPS=full: 57 MB of JSON) are too large to bring back; these are a few hundred KB.
"""
import collections
import json
import os
import sys
import tarfile
import tempfile

LIMIT = 14_000_000  # bytes of results kept: under the 16 MiB a returned file may hold


def unexplained(report):
    """(rows, ids): the failed checks of failed, errored or timed-out scenarios that no declared difference explains."""
    rows, ids = [], set()
    for s in report["scenarios"]:
        if s["status"] not in ("fail", "error", "timeout"):
            continue
        for c in s["checks"]:
            d = c.get("details") or {}
            if c["ok"] or d.get("difference"):
                continue
            ids.add(s["id"])
            rows.append({"id": s["id"], "check": c["check"], "path": c.get("path"),
                         "message": c["message"].split("\n")[0][:300], "type": d.get("type"),
                         "error_message": str(d.get("message") or "")[:300], "gold": str(d.get("gold"))[:300],
                         "candidate": str(d.get("candidate"))[:300], "max_rel_diff": d.get("max_rel_diff"),
                         "max_abs_diff": d.get("max_abs_diff")})
    return rows, ids


def explained(report):
    """{declaration: [checks, scenarios]} over the whole report."""
    checks, scenarios = collections.Counter(), collections.defaultdict(set)
    for s in report["scenarios"]:
        for c in s["checks"]:
            name = (c.get("details") or {}).get("difference")
            if not c["ok"] and name:
                checks[name] += 1
                scenarios[name].add(s["id"])
    return {name: [n, len(scenarios[name])] for name, n in checks.most_common()}


def files_of(record):
    """The files of the results directory a scenario's record names: its result file (which holds its pickle since
    manifest version 2) and a version 1 run's pickle file."""
    return [record[key] for key in ("file", "pickle_file") if record.get(key)]


def write_cut(results, ids, tar_path):
    """The results directories under `results` cut to `ids` (smallest first, up to LIMIT bytes); returns the ids."""
    manifests = {side: json.load(open(os.path.join(results, side, "manifest.json"))) for side in ("gold", "cupy")}
    size = collections.Counter()
    for side, manifest in manifests.items():
        for record in manifest["scenarios"]:
            if record["id"] in ids:
                size[record["id"]] += sum(os.path.getsize(os.path.join(results, side, f)) for f in files_of(record))
    kept, total = set(), 0
    for i in sorted(ids, key=lambda i: (size[i], i)):
        if total + size[i] > LIMIT:
            break
        kept.add(i)
        total += size[i]
    with tarfile.open(tar_path, "w:gz") as tar, tempfile.TemporaryDirectory() as tmp:
        for side, manifest in manifests.items():
            cut = dict(manifest, scenarios=[r for r in manifest["scenarios"] if r["id"] in kept])
            path = os.path.join(tmp, f"{side}.json")
            with open(path, "w") as f:
                json.dump(cut, f, indent=1, sort_keys=True)
            tar.add(path, f"{side}/manifest.json")
            for record in cut["scenarios"]:
                for f in files_of(record):
                    tar.add(os.path.join(results, side, f), f"{side}/{f}")
    return kept


def main():
    report_path, results, out = sys.argv[1:4]
    report = json.load(open(report_path))
    rows, ids = unexplained(report)
    kept = write_cut(results, ids, os.path.join(out, "unexplained.tar.gz"))
    summary = collections.Counter(s["status"] for s in report["scenarios"])
    with open(os.path.join(out, "unexplained.json"), "w") as f:
        json.dump({"summary": summary, "explained": explained(report), "unexplained": rows,
                   "results_kept": sorted(kept)}, f, indent=1)
    print(f"gpu_unexplained: {len(rows)} unexplained checks in {len(ids)} scenarios; the results of {len(kept)} "
          f"kept in unexplained.tar.gz")


if __name__ == "__main__":
    main()
