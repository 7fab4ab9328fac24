"""PARITY_PRECOMPILE_HEADERS (CMakeLists.txt): off by default when ccache compiles, which caches nothing compiled with a
precompiled header; on otherwise, and then only for the layer files that include pybind11 (issue #20, target 6)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(os.environ["PARITY_REPO"])
CMAKE = os.environ.get("PARITY_CMAKE", "cmake")


def configure(build, *args):
    """Configures the library alone (no tests, benchmarks or scenarios) into BUILD; returns its build.ninja."""
    proc = subprocess.run([CMAKE, "-S", REPO, "-B", build, "-G", "Ninja", f"-DPython_EXECUTABLE={sys.executable}",
                           "-DPARITY_BUILD_TESTS=OFF", "-DPARITY_BUILD_BENCH=OFF", "-DPARITY_REGISTER_SCENARIOS=OFF",
                           *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return (build / "build.ninja").read_text()


def option(build):
    match = re.search(r"^PARITY_PRECOMPILE_HEADERS:BOOL=(\w+)$", (build / "CMakeCache.txt").read_text(), re.M)
    return match and match.group(1)


def compile_command(ninja, source):
    """The FLAGS of the object built from SOURCE (a path under src/parity)."""
    match = re.search(rf"^build \S*/src/parity/{re.escape(source)}\.o: .*\n((?:  .*\n)*)", ninja, re.M)
    assert match, source
    return match.group(1)


@pytest.mark.parametrize("launcher", ["ccache", "/usr/bin/ccache"])
def test_off_under_ccache(tmp_path, launcher):
    ninja = configure(tmp_path, f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}")
    assert option(tmp_path) == "OFF"
    assert "cmake_pch" not in ninja


def test_on_otherwise_for_the_files_that_include_pybind11(tmp_path):
    ninja = configure(tmp_path)
    assert option(tmp_path) == "ON"
    for source in ("embed/interpreter.cc", "codec/node.cc", "report/junit.cc"):
        assert "cmake_pch" in compile_command(ninja, source), source
    for source in ("base/text.cc", "codec/manifest.cc", "run/protocol.cc"):
        assert "cmake_pch" not in compile_command(ninja, source), source
