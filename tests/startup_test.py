"""What a parity process does before its first scenario (bench/README, "startup_bench"): compare and the run's
worker import only what their outputs need, and NumPy's OpenBLAS threads sleep instead of spinning, in the real
processes."""
import json
import re

import pytest

from e2e_test import parity, run, scenario_dir  # the shared e2e helpers (tests/conftest.py)

# Imported only when an output needs them (a masked array; a pytest suite; a pandas object).
ON_DEMAND = ("numpy.ma", "pluggy", "pandas")

PLAIN = """
@parity.scenario()
def plain(xp, rng):
    x = xp.asarray(rng.random(8))
    return {"exp": xp.exp(x), "n": 3}
"""

# Run after `plain` (a module's scenarios run in order): what the worker had imported once a scenario's result and
# pickle were written, and the environment the scenario sees.
RECORDER = """
@parity.scenario()
def zz_recorder(xp, rng):
    import os
    import sys
    from pathlib import Path

    Path({where!r}).write_text(json.dumps({{"modules": sorted(sys.modules),
                                           "timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}}))
    return {{"x": xp.zeros(2)}}
"""


def imported(stderr: str) -> set:
    """The modules a process imported, from its PYTHONPROFILEIMPORTTIME lines."""
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", stderr, re.M))


def on_demand_in(modules) -> set:
    return {m for m in modules for lib in ON_DEMAND if m == lib or m.startswith(lib + ".")}


def test_a_compare_of_plain_arrays_imports_no_numpy_ma_pluggy_or_pandas(tmp_path):
    scenarios = scenario_dir(tmp_path, "startup", PLAIN)
    for side in ("gold", "gold2"):
        run("gold", tmp_path / side, "--scenarios", scenarios)
    proc = parity("compare", tmp_path / "gold", tmp_path / "gold2", "--json", tmp_path / "r.json", check=0,
                  env={"PYTHONPROFILEIMPORTTIME": "1"})
    modules = imported(proc.stderr)
    assert {"numpy", "parity.probe", "parity.trust"} <= modules, proc.stderr[-2000:]  # the profile was read
    assert on_demand_in(modules) == set()
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["pass"] == 1


def test_a_run_of_plain_arrays_imports_none_of_them_and_leaves_the_environment_as_given(tmp_path):
    where = tmp_path / "recorded.json"
    scenarios = scenario_dir(tmp_path, "startup", "import json\n" + PLAIN + RECORDER.format(where=str(where)))
    run("gold", tmp_path / "gold", "--scenarios", scenarios, "--jobs", "1")
    recorded = json.loads(where.read_text())
    assert {"numpy", "parity.probe", "parity.discovery"} <= set(recorded["modules"])
    assert on_demand_in(recorded["modules"]) == set()
    assert recorded["timeout"] is None  # set for NumPy's load only
    parity("run", "--backend", "gold", "--out", tmp_path / "gold2", "-q", "--scenarios", scenarios, check=0,
           env={"OPENBLAS_THREAD_TIMEOUT": "7"})
    assert json.loads(where.read_text())["timeout"] == "7"  # the user's own setting stays


# Once every thread of this process but the calling one sleeps (10 s at most), the CPU each has used (ns, /proc's
# schedstat), in ON_CPU. OpenBLAS's threads spun on sched_yield for about 0.1 s before they slept: 20-100 ms of CPU
# each, depending on the load.
THREADS_ON_CPU = """
import os, time
from pathlib import Path

def _others():
    return [t for t in os.listdir("/proc/self/task") if int(t) != os.getpid()]

def _sleeping(t):
    return Path(f"/proc/self/task/{t}/stat").read_text().rpartition(")")[2].split()[0] in "SD"

_deadline = time.monotonic() + 10
while not all(_sleeping(t) for t in _others()) and time.monotonic() < _deadline:
    time.sleep(0.01)
ON_CPU = {t: int(Path(f"/proc/self/task/{t}/schedstat").read_text().split()[0]) for t in _others()}
"""
# At import, in `parity list`'s process (NumPy loaded just before).
THREADS = THREADS_ON_CPU + "Path(WHERE).write_text(json.dumps(ON_CPU))\n"
# At import (scipy.linalg loads SciPy's own OpenBLAS, whose threads start then), with the environment at import; the
# scenario records the environment it runs in.
SCIPY_BLAS_AT_IMPORT = "import json\nimport scipy.linalg\nimport parity\n" + THREADS_ON_CPU + """
AT_IMPORT = {"on_cpu": ON_CPU, "timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}


@parity.scenario()
def record(xp):
    where = Path(os.environ["JOBS_TEST_LOG"])
    where.write_text(json.dumps(AT_IMPORT | {"timeout_at_run": os.environ.get("OPENBLAS_THREAD_TIMEOUT")}))
    return {"x": xp.zeros(2)}
"""


def test_numpys_blas_threads_sleep_at_once_in_a_parity_process(tmp_path):
    where = tmp_path / "threads.json"
    scenarios = scenario_dir(tmp_path, "startup", "import json\n" + THREADS.replace("WHERE", repr(str(where))) + PLAIN)
    parity("list", "--scenarios", scenarios, check=0)
    on_cpu = json.loads(where.read_text())
    assert all(ns < 5_000_000 for ns in on_cpu.values()), on_cpu  # CPU used, not time waited: load cannot raise it


def test_a_run_names_its_platform_without_starting_uname(tmp_path):
    # platform.platform() starts `uname -p` (2-3 ms); a `uname` first on PATH would show that it ran.
    import os
    import platform

    fake, called = tmp_path / "bin", tmp_path / "uname-ran"
    fake.mkdir()
    (fake / "uname").write_text(f"#!/bin/sh\necho \"$@\" >> {called}\necho unknown\n")
    (fake / "uname").chmod(0o755)
    scenarios = scenario_dir(tmp_path, "startup", PLAIN)
    parity("run", "--backend", "gold", "--scenarios", scenarios, "--out", tmp_path / "gold", "-q", check=0,
           env={"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"})
    assert not called.exists(), called.read_text()
    manifest = json.loads((tmp_path / "gold" / "manifest.json").read_text())
    assert manifest["environment"]["platform"] == platform.platform()


def test_the_built_in_backends_folder_is_walked_once_per_process(monkeypatch):
    from pathlib import Path

    from parity import backend

    backend.register_fixtures(str(Path(__file__).resolve().parents[1] / "fixtures"))
    walks = []
    walk = Path.rglob
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: walks.append(self) or walk(self, pattern))
    first = backend.builtin_names()
    assert "gold" in first and "fsproxy" in first and backend.builtin_names() == first
    assert len(walks) <= 1  # none when an earlier test of this process walked it


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_the_blas_that_a_scenario_module_loads_sleeps_at_once_and_scenarios_see_the_environment_given(tmp_path,
                                                                                                         jobs):
    """A library's OpenBLAS loaded while the scenario modules import (SciPy's own: scipy_interpolate, scipy_linalg,
    sklearn) has its idle threads sleep at once instead of spinning on a core, as NumPy's do (bench/README, target 3);
    the scenario still runs with the environment as given, and a user's own setting stays."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "scipy_blas.py").write_text(SCIPY_BLAS_AT_IMPORT)
    where = tmp_path / "recorded.json"
    parity("run", "--backend", "gold", "--out", tmp_path / "out", "-q", "--scenarios", scenarios, "--jobs", jobs,
           env={"JOBS_TEST_LOG": str(where)}, check=0)
    recorded = json.loads(where.read_text())
    assert recorded["on_cpu"] and all(ns < 5_000_000 for ns in recorded["on_cpu"].values()), recorded
    assert recorded["timeout"] == "4" and recorded["timeout_at_run"] is None, recorded
    parity("run", "--backend", "gold", "--out", tmp_path / "out2", "-q", "--scenarios", scenarios, "--jobs", jobs,
           env={"JOBS_TEST_LOG": str(where), "OPENBLAS_THREAD_TIMEOUT": "7"}, check=0)
    recorded = json.loads(where.read_text())
    assert recorded["timeout"] == "7" and recorded["timeout_at_run"] == "7", recorded


# At import, in `parity list`'s process: each extension module of the standard library's lib-dynload, imported; those
# that fail for a symbol they do not find, and whether the interpreter's own entry points resolve in the process.
EXTENSIONS = """
import ctypes, importlib, json, os, sysconfig
from pathlib import Path

unresolved = {}
for file in sorted(os.listdir(sysconfig.get_config_var("DESTSHARED"))):
    name = file.partition(".")[0]
    if name == "readline":  # writes terminal control sequences when loaded
        continue
    try:
        importlib.import_module(name)
    except ImportError as error:  # a library the machine lacks (Tk) is not what this looks for
        if "undefined symbol" in str(error):
            unresolved[name] = str(error)
entry_points = {name: hasattr(ctypes.pythonapi, name) for name in ("Py_Main", "Py_BytesMain", "PyRun_SimpleString")}
Path(WHERE).write_text(json.dumps({"unresolved": unresolved, "entry_points": entry_points}))
"""


def test_every_standard_extension_module_finds_pythons_c_api_in_a_parity_process(tmp_path):
    """The executable may carry libpython itself (CMake's PARITY_STATIC_LIBPYTHON): it must then export all of
    Python's C API, as the shared library does, for NumPy's, a candidate's and the standard library's modules."""
    where = tmp_path / "extensions.json"
    scenarios = scenario_dir(tmp_path, "startup", EXTENSIONS.replace("WHERE", repr(str(where))) + PLAIN)
    parity("list", "--scenarios", scenarios, check=0)
    found = json.loads(where.read_text())
    assert found["unresolved"] == {}
    assert all(found["entry_points"].values()), found["entry_points"]
