"""Prints the nightly's per-candidate summary as a Markdown table (a terminal and $GITHUB_STEP_SUMMARY alike).

usage: nightly_summary.py OUT [CANDIDATE...]; the candidates default to every directory under OUT. Reads what
scripts/nightly.sh left there: OUT/CANDIDATE/report.json (the merged report), merge-exit-code, shard-*/exit-codes.
"""
import json
import sys
from pathlib import Path

# The table's columns: every compare status (src/parity/base/outcome.h), in reading order; a copy, as this script runs
# with the system Python and imports nothing of parity's, which tests/vocabulary holds to outcome.h.
STATUSES = ("pass", "fail", "error", "timeout", "xfail", "xpass", "skip")
VERDICTS = {"0": "passed", "1": "**FAILED**", "2": "**ERROR**"}


def shards_reported(candidate_dir):
    """'reported/present' over the shard directories: a shard reported when its compare wrote report.json."""
    shards = sorted(candidate_dir.glob("shard-*"))
    return f"{sum((s / 'report.json').is_file() for s in shards)}/{len(shards)}"


def row(candidate_dir):
    exit_file, report_file = candidate_dir / "merge-exit-code", candidate_dir / "report.json"
    merged = exit_file.is_file()
    verdict = VERDICTS.get(exit_file.read_text().strip(), "**ERROR**") if merged else "**not merged**"
    counts = json.loads(report_file.read_text())["summary"] if merged and report_file.is_file() else {}
    cells = [candidate_dir.name, verdict, shards_reported(candidate_dir)]
    # A compare JSON counts `timeout` only when some scenario timed out (docs/report-json.md): absent is 0.
    return cells + [str(counts.get(s, 0)) if counts else "" for s in ("total", *STATUSES)]


def main(argv):
    if not argv:
        sys.exit("usage: nightly_summary.py OUT [CANDIDATE...]")
    out = Path(argv[0])
    candidates = argv[1:] or sorted(p.name for p in out.iterdir() if p.is_dir())
    header = ["candidate", "verdict", "shards reported", "total", *STATUSES]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row(out / c)) + " |" for c in candidates]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
