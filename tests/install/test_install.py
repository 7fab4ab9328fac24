"""An sdist of the source tree (`python -m build --sdist`) holds what a build needs and no build output, and `pip
install` of that sdist into a fresh virtualenv, with the source tree gone, gives a working parity: run, compare and
report over part of the bundled corpus, `python -m parity`, and one version everywhere (issue #19)."""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

REPO = Path(os.environ["PARITY_REPO"])
# Scenarios of the bundled corpus the installed parity runs: a few modules, so the test's time is the build.
KEYWORD = "broadcasting or dtypes or byteorder"
# CMake's Release flags but -O1 (the install's build below).
RELEASE_FLAGS = "-O1 -DNDEBUG"


def sh(*cmd, **kw):
    """Runs a command; its output is shown when it fails, so a broken install says why."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    print(f"$ {' '.join(map(str, cmd))} -> {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


# What a build from the sdist needs, and what must never travel in it (pyproject.toml's sdist.include/exclude).
SDIST_HOLDS = ("pyproject.toml", "PKG-INFO", "CMakeLists.txt", "README.md", "cmake/ParityScenarioTests.cmake",
               "src/parity/base/config.h.in", "src/parity/api/core_module.cc", "python/parity/__init__.py",
               "fixtures/gold.py", "scenarios/dtypes.py", "reports/templates/report.html.j2", "requirements/lock.txt")
# Planted in the copied tree before the sdist is made: build output, a virtualenv, run output and caches.
JUNK = ("build/CMakeCache.txt", "build-sanitize/parity", ".venv/pyvenv.cfg", "parity-out/results/x.json",
        "python/parity/__pycache__/api.cpython-311.pyc", "scenarios/__pycache__/dtypes.cpython-311.pyc",
        "python/parity/_version.py", ".pytest_cache/README.md")


def copy_source(source):
    """The files git knows in the working tree (tracked and untracked, not ignored), copied to source."""
    listed = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():  # a file deleted in the working tree but not yet in the index is skipped
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)


def make_sdist(source, dist, env):
    """`python -m build --sdist` of the source tree (with junk planted in it) into dist; the sdist's path."""
    for name in JUNK:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text("junk planted by tests/install\n")
    proc = sh(sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", dist, source, env=env, cwd=dist)
    assert proc.returncode == 0, "python -m build --sdist failed"
    made = list(dist.glob("parity-*.tar.gz"))
    assert len(made) == 1, made
    return made[0]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtualenv with parity pip-installed from an sdist of a copy of the source tree, the copy deleted
    before the install: the sdist alone must build. Returns (tmp, venv, env, sdist)."""
    for module in ("scikit_build_core", "build"):  # the build backend and frontend, used without build isolation
        try:
            __import__(module)
        except ImportError:
            pytest.fail(f"{module} is not importable by {sys.executable}: scripts/setup.sh installs it from "
                        "requirements/lock.txt")
    tmp = tmp_path_factory.mktemp("install")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for name in ("PARITY_BIN", "PARITY_REPO", "PARITY_CORE_DIR", "PYTHONPATH"):
        env.pop(name, None)
    source, dist = tmp / "source", tmp / "dist"
    dist.mkdir()
    copy_source(source)
    sdist = make_sdist(source, dist, env)
    shutil.rmtree(source)
    venv = tmp / "venv"
    assert sh(sys.executable, "-m", "venv", venv).returncode == 0
    # The packages come from this test's own virtualenv (the lock's numpy, jinja2, scikit-build-core, ...), seen
    # through a .pth file, so the test builds offline: what is under test is parity's packaging, not pip's resolver.
    purelib = Path(sh(venv / "bin/python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))").stdout.strip())
    (purelib / "parity-test-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # The Release build pyproject.toml asks for (NDEBUG, a unity build), optimized at -O1 rather than -O3: the same
    # sources, targets, definitions and install, at 221 rather than 348 CPU s here (issue #20, target 6). What the
    # optimizer makes of them is the checkout's own build's to test (scripts/build.sh, -O2), not the packaging's.
    proc = sh(venv / "bin/python", "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
              "--config-settings", f"cmake.define.CMAKE_CXX_FLAGS_RELEASE={RELEASE_FLAGS}", sdist, env=env, cwd=tmp)
    assert proc.returncode == 0, "pip install of the sdist failed"
    return tmp, venv, env, sdist


def test_sdist_holds_the_build_and_no_junk(installed):
    """The sdist carries what a build needs (it just built without the source tree) and none of the planted junk."""
    sdist = installed[3]
    with tarfile.open(sdist) as archive:
        root = archive.getnames()[0].split("/")[0]
        names = {name.partition("/")[2] for name in archive.getnames()}
    assert root == sdist.name.removesuffix(".tar.gz")
    assert set(SDIST_HOLDS) <= names, sorted(set(SDIST_HOLDS) - names)
    assert not names & set(JUNK), sorted(names & set(JUNK))
    caught = [n for n in names if n.split("/")[0] in ("build", ".venv", "parity-out", "tests", "bench")
              or "__pycache__" in n or n.endswith(".pyc")]
    assert not caught, caught


def test_installed_layout(installed):
    """The executable in the virtualenv's bin/, its resources in share/parity/, the package in site-packages."""
    _, venv, _, _ = installed
    assert os.access(venv / "bin/parity", os.X_OK)
    for name in ("fixtures/gold.py", "fixtures/fsproxy.py", "scenarios/dtypes.py", "templates/report.html.j2"):
        assert (venv / "share/parity" / name).is_file(), name
    assert not (venv / "share/parity/python-executable").exists(), "the build tree's locator was installed"


def test_versions_agree(installed):
    """`parity --version`, `python -m parity --version`, parity.__version__ and the distribution's version: one."""
    tmp, venv, env, _ = installed
    binary = sh(venv / "bin/parity", "--version", env=env, cwd=tmp)
    module = sh(venv / "bin/python", "-m", "parity", "--version", env=env, cwd=tmp)
    package = sh(venv / "bin/python", "-c", "import importlib.metadata as m, parity;"
                 "print(parity.__version__, m.version('parity'), parity.__file__)", env=env, cwd=tmp)
    assert binary.returncode == module.returncode == package.returncode == 0
    version, distribution, where = package.stdout.split()
    assert binary.stdout.split() == module.stdout.split() == [version]
    assert distribution == version
    assert Path(where).is_relative_to(venv), f"parity imported from {where}, not the installed package"


def test_run_compare_report(installed):
    """The installed parity runs gold and fsproxy over part of the bundled corpus, compares and reports."""
    tmp, venv, env, _ = installed
    parity = venv / "bin/parity"
    out = tmp / "out"
    for backend in ("gold", "fsproxy"):
        assert sh(parity, "run", "--backend", backend, "-k", KEYWORD, "--out", out / backend, env=env,
                  cwd=tmp).returncode == 0, backend
    reports = out / "reports"
    reports.mkdir()
    compared = sh(venv / "bin/python", "-m", "parity", "compare", out / "gold", out / "fsproxy",
                  "--json", reports / "report.json", "--junit", reports / "junit.xml", "--html", reports / "report.html",
                  env=env, cwd=tmp)
    assert compared.returncode == 0
    report = json.loads((reports / "report.json").read_text())
    scenarios = report["scenarios"]
    assert scenarios and all(s["status"] in ("pass", "xfail", "skip") for s in scenarios), scenarios
    assert {s["module"] for s in scenarios} >= {"broadcasting", "dtypes", "byteorder"}
    version = sh(parity, "--version", env=env).stdout.split()
    assert [report["parity"]] == version
    assert "<testsuite" in (reports / "junit.xml").read_text()
    assert "</html>" in (reports / "report.html").read_text()
    rendered = sh(parity, "report", reports / "report.json", "--html", reports / "again.html", env=env, cwd=tmp)
    assert rendered.returncode == 0 and "</html>" in (reports / "again.html").read_text()
