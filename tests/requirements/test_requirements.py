"""pyproject.toml's dependencies, requirements/*.in and the hashed lock agree (scripts/check_requirements.py), and the
checker catches each way they can drift apart, on broken copies of the three (issue #19)."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(os.environ["PARITY_REPO"])
CHECKER = REPO / "scripts" / "check_requirements.py"
spec = importlib.util.spec_from_file_location("check_requirements", CHECKER)
check_requirements = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_requirements)


def copy_tree(tmp_path):
    """pyproject.toml and requirements/ of the repo, in tmp_path, to break."""
    shutil.copy2(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(REPO / "requirements", tmp_path / "requirements")
    return tmp_path


def replace(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}: the breakage below needs updating"
    path.write_text(text.replace(old, new, 1))


def test_repo_agrees():
    assert check_requirements.problems(REPO) == []


def drop_hashes(tree, name):
    """The lock's entry for name keeps its pin and loses its hash lines."""
    lock = tree / "requirements/lock.txt"
    lines, out, skipping = lock.read_text().splitlines(), [], False
    for line in lines:
        if line.startswith(f"{name}=="):
            out.append(line.rstrip(" \\"))
            skipping = True
            continue
        if skipping and line.lstrip().startswith("--hash="):
            continue
        skipping = False
        out.append(line)
    lock.write_text("\n".join(out) + "\n")


BREAKAGES = {
    "pyproject names a package runtime.in lacks": (
        lambda t: replace(t / "pyproject.toml", '"pytest>=8"]', '"pytest>=8", "pandas>=2"]'),
        "pyproject.toml [project] dependencies name pandas, requirements/runtime.in does not"),
    "runtime.in names a package pyproject lacks": (
        lambda t: replace(t / "pyproject.toml", ', "pytest>=8"]', "]"),
        "requirements/runtime.in names pytest, pyproject.toml [project] dependencies do not"),
    "the lock's pin does not satisfy pyproject": (
        lambda t: replace(t / "pyproject.toml", '"numpy>=2"', '"numpy>=3"'),
        "pyproject.toml [project] dependencies: numpy>=3 but requirements/lock.txt pins numpy==2.4.6"),
    "a .in package is missing from the lock": (
        lambda t: replace(t / "requirements/test.in", "junitparser==5.0.3", "junitparser==5.0.3\ntomli-w==1.0.0"),
        "requirements/test.in: tomli-w is not in requirements/lock.txt"),
    "a .in package is pinned differently in the lock": (
        lambda t: replace(t / "requirements/corpus.in", "scipy==1.17.1", "scipy==1.17.0"),
        "requirements/corpus.in: scipy==1.17.0 but requirements/lock.txt pins scipy==1.17.1"),
    "a lock entry has no hash": (
        lambda t: drop_hashes(t, "idna"), "lock.txt: idna==3.20 has no hash"),
    "the build backend is not the locked one": (
        lambda t: replace(t / "pyproject.toml", '"scikit-build-core==1.1.2"', '"scikit-build-core==1.1.1"'),
        "pyproject.toml [build-system] requires: scikit-build-core==1.1.1 but requirements/lock.txt pins "
        "scikit-build-core==1.1.2"),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_checker_catches(breakage, tmp_path):
    """Each breakage, made on a copy, is reported by name, and the command exits 1 saying so."""
    tree = copy_tree(tmp_path)
    assert check_requirements.problems(tree) == [], "the copy agrees before it is broken"
    breaker, expected = BREAKAGES[breakage]
    breaker(tree)
    assert expected in check_requirements.problems(tree)
    proc = subprocess.run([sys.executable, CHECKER, tree], capture_output=True, text=True)
    assert proc.returncode == 1 and expected in proc.stderr, proc.stderr
