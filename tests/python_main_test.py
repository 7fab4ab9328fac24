"""`python -m parity` is the whole CLI: it runs the `parity` executable with its arguments, keeps `list`, and says
clearly when no executable is found; `parity.__version__` is the executable's version (issue #19)."""
import os
import subprocess
import sys
from pathlib import Path

BIN = os.environ["PARITY_BIN"]
REPO = Path(os.environ["PARITY_REPO"])


def python_m(*args, **env):
    environ = {**os.environ, "PYTHONPATH": str(REPO / "python"), **env}
    return subprocess.run([sys.executable, "-m", "parity", *args], capture_output=True, text=True, env=environ)


def test_version_is_the_executables():
    binary = subprocess.run([BIN, "--version"], capture_output=True, text=True)
    module = python_m("--version", PARITY_BIN=BIN)
    package = subprocess.run([sys.executable, "-c", "import parity; print(parity.__version__)"], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert binary.returncode == module.returncode == package.returncode == 0, (module.stderr, package.stderr)
    assert module.stdout == binary.stdout
    assert binary.stdout.split() == [package.stdout.strip()]


def test_subcommands_reach_the_executable(tmp_path):
    """`python -m parity run` and `compare` are the executable's, exit codes included."""
    out = tmp_path / "gold"
    ran = python_m("run", "--backend", "gold", "--only", "dtypes.bool_arrays", "--out", str(out), PARITY_BIN=BIN)
    assert ran.returncode == 0, ran.stderr
    assert (out / "manifest.json").is_file()
    refused = python_m("compare", str(out), str(tmp_path / "missing"), PARITY_BIN=BIN)
    direct = subprocess.run([BIN, "compare", str(out), str(tmp_path / "missing")], capture_output=True, text=True)
    assert refused.returncode == direct.returncode != 0


def test_list_needs_no_executable():
    listed = python_m("list", str(REPO / "scenarios" / "dtypes.py"), PARITY_BIN="", PATH="/nonexistent")
    assert listed.returncode == 0 and listed.stdout.split(), listed.stderr


def test_missing_executable_is_named(tmp_path):
    """A Python with no parity beside it (a fresh virtualenv) and none on PATH: the error names where it looked."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    missing = subprocess.run([str(tmp_path / "venv/bin/python"), "-m", "parity", "--version"], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(REPO / "python"), "PARITY_BIN": "",
                                             "PATH": "/nonexistent"})
    assert missing.returncode == 2
    assert "no `parity` executable" in missing.stderr and "PARITY_BIN" in missing.stderr
