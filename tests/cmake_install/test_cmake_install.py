"""A plain `cmake --install <build> --prefix P` gives a working parity without pip (issue #19): P/bin/parity runs and
compares a scenario folder of its own, and `import parity` from P's site-packages finds its _core and, through it,
P/share/parity (resources.h: a plain install's package file leads to its prefix)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BUILD = Path(os.environ["PARITY_BUILD_DIR"])
CMAKE = os.environ.get("PARITY_CMAKE", "cmake")
# Where a plain install puts the package (CMakeLists.txt's PARITY_INSTALL_PYTHONDIR default; README, "Installing").
PYTHONDIR = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
SCENARIO = '''\
"""One tiny scenario, outside the bundled corpus."""
import parity


@parity.scenario(tags=["install"])
def doubled(xp, rng):
    return {"twice": xp.arange(6, dtype=xp.float64).reshape(2, 3) * 2, "f": xp.asfortranarray(xp.ones((2, 2)))}
'''


def sh(*cmd, **kw):
    """Runs a command; its output is shown when it fails, so a broken install says why."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    print(f"$ {' '.join(map(str, cmd))} -> {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The build tree installed into a fresh prefix; (tmp, prefix, env) with the environment of no checkout."""
    tmp = tmp_path_factory.mktemp("cmake_install")
    prefix = tmp / "prefix"
    assert sh(CMAKE, "--install", BUILD, "--prefix", prefix).returncode == 0, "cmake --install failed"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PARITY_BIN", "PARITY_REPO", "PARITY_CORE_DIR", "PYTHONPATH") and not k.startswith("PARITY_PY")}
    scenarios = tmp / "scenarios"
    scenarios.mkdir()
    (scenarios / "tiny.py").write_text(SCENARIO)
    return tmp, prefix, env


def test_layout(installed):
    """bin/parity, share/parity/{fixtures,scenarios,templates} and the package with _core in site-packages."""
    _, prefix, _ = installed
    assert os.access(prefix / "bin/parity", os.X_OK)
    for name in ("fixtures/gold.py", "scenarios/dtypes.py", "templates/report.html.j2", "python-executable"):
        assert (prefix / "share/parity" / name).is_file(), name
    package = prefix / PYTHONDIR / "parity"
    assert (package / "__init__.py").is_file() and (package / "_version.py").is_file()
    assert list(package.glob("_core*.so")), f"no _core in {package}"


@pytest.fixture(scope="module")
def compared(installed):
    """P/bin/parity, run from outside any checkout, runs gold and fsproxy over the scenario folder and compares
    them; the JSON report."""
    tmp, prefix, env = installed
    parity = prefix / "bin/parity"
    for backend in ("gold", "fsproxy"):
        assert sh(parity, "run", "--backend", backend, "--scenarios", tmp / "scenarios", "--out", tmp / backend,
                  env=env, cwd=tmp).returncode == 0, backend
    assert sh(parity, "compare", tmp / "gold", tmp / "fsproxy", "--json", tmp / "report.json", "--html",
              tmp / "report.html", env=env, cwd=tmp).returncode == 0
    return json.loads((tmp / "report.json").read_text())


def test_the_executable_runs_and_compares(installed, compared):
    assert [(s["id"], s["status"]) for s in compared["scenarios"]] == [("tiny.doubled", "pass")]
    assert "</html>" in (installed[0] / "report.html").read_text()


def test_the_package_compares_from_its_site_packages(installed, compared):
    """PYTHONPATH=P/lib/pythonX.Y/site-packages: `import parity` is the installed one, and compare_results (its
    _core, which finds P/share/parity from its own file) agrees with the executable's report."""
    tmp, prefix, env = installed
    code = textwrap.dedent(f"""\
        import json, parity, parity._core
        report = parity.compare_results({str(tmp / 'gold')!r}, {str(tmp / 'fsproxy')!r})
        print(json.dumps([parity.__file__, parity._core.__file__, report["summary"]]))
        """)
    proc = sh(sys.executable, "-c", code, env={**env, "PYTHONPATH": str(prefix / PYTHONDIR)}, cwd=tmp)
    assert proc.returncode == 0
    package, core, summary = json.loads(proc.stdout.splitlines()[-1])
    assert Path(package).is_relative_to(prefix) and Path(core).is_relative_to(prefix), (package, core)
    assert summary == compared["summary"]
