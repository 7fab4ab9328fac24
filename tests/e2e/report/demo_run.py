"""The report tests' run: gold against mixed.py over scenarios/, compared with every report written.

Shared by tests/report_command_test.py and tests/browser/html_report_browser_test.py (and bench/html_report_bench.py).
"""
import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("PARITY_CHROMIUM", "/usr/bin/chromium")
# The flags Chromium needs here: no sandbox as root, and no background connections on a machine without a network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def parity(binary, *args, check=None):
    """Runs the parity binary; asserts its exit code when `check` is given."""
    proc = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, timeout=600)
    if check is not None:
        assert proc.returncode == check, f"parity {args}: exit {proc.returncode}, expected {check}\n{proc.stderr}"
    return proc


def compare_demo(binary, out: Path) -> Path:
    """Runs both sides into `out` and writes out/report.{json,html} and out/junit.xml; returns `out`."""
    scenarios = HERE / "scenarios"
    parity(binary, "run", "--backend", "gold", "--out", out / "gold", "--scenarios", scenarios, "-q", check=0)
    parity(binary, "run", "--backend", HERE / "mixed.py", "--out", out / "mixed", "--scenarios", scenarios, "-q",
           check=1)
    parity(binary, "compare", out / "gold", out / "mixed", "--json", out / "report.json", "--html",
           out / "report.html", "--junit", out / "junit.xml", check=1)
    return out
