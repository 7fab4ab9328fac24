"""PARITY_PRECOMPILE_HEADERS (CMakeLists.txt): off by default when ccache compiles, which caches nothing compiled with a
precompiled header; on otherwise, and then only for the layer files that include pybind11.h; and the default build
type's debug info, line tables only unless PARITY_FULL_DEBUG_INFO (issue #20, target 6)."""
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
    for source in ("embed/interpreter.cc", "codec/digest.cc", "report/html_report.cc"):
        assert "cmake_pch" in compile_command(ninja, source), source
    # The last two include pybind11's lighter headers only (pytypes.h through codec.h; issue #20, target 6).
    for source in ("base/text.cc", "codec/manifest.cc", "run/protocol.cc", "codec/node.cc", "report/junit.cc"):
        assert "cmake_pch" not in compile_command(ninja, source), source


INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def includes_pybind11_h(source, include_dirs, seen):
    """Whether SOURCE includes pybind11/pybind11.h, itself or through the headers it includes (parity's and
    pybind11's; the standard library's, Python's and NumPy's are not followed: none includes pybind11)."""
    for quote, name in INCLUDE.findall(source.read_text()):
        dirs = ([source.parent] if quote == '"' else []) + include_dirs
        header = next((Path(os.path.normpath(d / name)) for d in dirs if (d / name).is_file()), None)
        if header is None or header in seen or not (quote == '"' or name.startswith("pybind11/")):
            continue
        if header.parts[-2:] == ("pybind11", "pybind11.h"):
            return True
        seen.add(header)
        if includes_pybind11_h(header, include_dirs, seen):
            return True
    return False


def test_the_layers_lists_of_files_without_pybind11_h(tmp_path):
    """parity_layer's WITHOUT_PYBIND11_H lists are right: the precompiled header (pybind11.h and nlohmann/json) for
    each layer file that includes pybind11.h, and for no other, which it would cost ~9 CPU s at -O2 -g."""
    ninja = configure(tmp_path)
    cache = (tmp_path / "CMakeCache.txt").read_text()
    pybind11_dirs = re.search(r"^pybind11_INCLUDE_DIRS:INTERNAL=(.*)$", cache, re.M).group(1).split(";")
    sources = re.findall(r"^build \S*/src/parity/((?:base|embed|codec|compare|run|report)/\w+)\.cc\.o: ", ninja, re.M)
    assert len(sources) > 40, sources
    wrong = []
    for source in sources:
        flags = compile_command(ninja, source + ".cc")
        dirs = [Path(d) for d in re.findall(r"(?:-I|-isystem )(\S+)", flags)] + [Path(d) for d in pybind11_dirs]
        includes = includes_pybind11_h(REPO / "src/parity" / (source + ".cc"), dirs, set())
        if includes != ("cmake_pch" in flags):
            wrong.append(f"{source}.cc: {'includes' if includes else 'does not include'} pybind11.h")
    assert not wrong, "move these to or from WITHOUT_PYBIND11_H (CMakeLists.txt):\n" + "\n".join(wrong)


def debug_info_levels(flags):
    """The -g options of a compile command's FLAGS, in order (GCC and Clang take the last)."""
    return re.findall(r"(?<!\S)-g\d?(?!\S)", flags)


@pytest.mark.parametrize("full, last", [(None, "-g1"), ("OFF", "-g1"), ("ON", "-g")])
def test_relwithdebinfo_has_line_tables_only_unless_asked(tmp_path, full, last):
    """PARITY_FULL_DEBUG_INFO (CMakeLists.txt): the default build type keeps file and line for backtraces (-g1) and
    leaves out the locals and types (-g), about 30% of a clean build's compile CPU; ON keeps CMake's -g."""
    ninja = configure(tmp_path, *([f"-DPARITY_FULL_DEBUG_INFO={full}"] if full else []))
    assert re.search(r"^CMAKE_BUILD_TYPE:STRING=RelWithDebInfo$", (tmp_path / "CMakeCache.txt").read_text(), re.M)
    for source in ("base/text.cc", "embed/interpreter.cc", "report/html_report.cc"):
        levels = debug_info_levels(compile_command(ninja, source))
        assert levels and levels[-1] == last, (source, levels)


@pytest.mark.parametrize("value", ["maybe", "1"])
def test_build_sh_refuses_a_unity_setting_other_than_on_or_off(tmp_path, value):
    """scripts/build.sh's PARITY_UNITY_BUILD is passed to CMake, which would read a typo as OFF: refused first,
    naming the variable, before anything is installed or configured."""
    # A cmake on PATH that only says it ran: were the value let through, the test fails at once instead of building.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "cmake").write_text("#!/bin/sh\necho 'cmake ran' >&2\nexit 99\n")
    (tmp_path / "bin" / "cmake").chmod(0o755)
    env = {**os.environ, "PARITY_UNITY_BUILD": value, "PARITY_BUILD_DIR": str(tmp_path / "build"),
           "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([REPO / "scripts" / "build.sh"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"PARITY_UNITY_BUILD must be ON or OFF, got '{value}'" in proc.stderr
    assert not (tmp_path / "build").exists()
