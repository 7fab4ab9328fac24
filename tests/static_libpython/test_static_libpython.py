"""cmake/static_libpython.cmake links a static libpython only when a program links with it, and falls back to the
shared library otherwise: a Python whose sysconfig names libraries no installed Python has (Ubuntu 24.04's 3.12:
Modules/_hacl/libHacl_Hash_SHA2.a, a path in CPython's build tree) had failed parity's build at its last link."""
import os
import subprocess
import sysconfig
import textwrap
from pathlib import Path

import pytest

CMAKE = os.environ.get("PARITY_CMAKE", "cmake")
REPO = Path(__file__).resolve().parents[2]
ARCHIVE = Path(sysconfig.get_config_var("LIBPL") or "") / (sysconfig.get_config_var("LIBRARY") or "")
LIBS = " ".join(filter(None, (sysconfig.get_config_var(v) for v in ("LIBS", "SYSLIBS", "MODLIBS"))))

pytestmark = pytest.mark.skipif(not ARCHIVE.name.endswith(".a") or not ARCHIVE.is_file(),
                                reason=f"this Python has no static libpython ({ARCHIVE}) to link")

# A project that uses the function as CMakeLists.txt does, with the fake interpreter below, and builds a program that
# starts Python through the static archive when the function found one (else a program without Python).
PROJECT = textwrap.dedent("""\
    cmake_minimum_required(VERSION 3.25)
    project(static_libpython_check LANGUAGES CXX)
    option(PARITY_STATIC_LIBPYTHON "" ON)
    set(Python_INCLUDE_DIRS "@INCLUDE@")
    set(Python_EXECUTABLE "${CMAKE_CURRENT_SOURCE_DIR}/fake-python")
    include("@REPO@/cmake/static_libpython.cmake")
    parity_static_libpython(found)
    if(found)
      add_executable(starts_python starts_python.cc)
      target_include_directories(starts_python PRIVATE "${Python_INCLUDE_DIRS}")
      target_link_libraries(starts_python PRIVATE parity_static_libpython)
    else()
      add_executable(starts_python no_python.cc)
    endif()
    """)


def configure_and_build(tmp_path, libs):
    """Configures and builds the project with a Python whose sysconfig names the real archive and `libs`; returns the
    configure's output and the build's exit code."""
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(PROJECT.replace("@INCLUDE@", sysconfig.get_path("include"))
                                        .replace("@REPO@", str(REPO)))
    (src / "starts_python.cc").write_text("#include <Python.h>\nint main() { Py_Initialize(); return Py_FinalizeEx(); }\n")
    (src / "no_python.cc").write_text("int main() { return 0; }\n")
    fake = src / "fake-python"  # what the function asks sysconfig for: LIBPL;LIBRARY;LIBS SYSLIBS MODLIBS
    fake.write_text(f"#!/bin/sh\necho '{ARCHIVE.parent};{ARCHIVE.name};{libs}'\n")
    fake.chmod(0o755)
    configured = subprocess.run([CMAKE, "-S", src, "-B", build], capture_output=True, text=True, timeout=300)
    print(configured.stdout, configured.stderr)
    assert configured.returncode == 0, "configure failed"
    built = subprocess.run([CMAKE, "--build", build], capture_output=True, text=True, timeout=300)
    print(built.stdout[-3000:], built.stderr[-3000:])
    return configured.stdout, built.returncode


def test_a_build_tree_path_among_the_libraries_is_left_out(tmp_path):
    output, built = configure_and_build(tmp_path, f"{LIBS} Modules/_hacl/libHacl_Hash_SHA2.a")
    assert "left out of libpython's libraries, paths of CPython's build tree: Modules/_hacl/" in output
    assert f"parity: the parity executable links {ARCHIVE}" in output
    assert built == 0, "the program did not link: the build-tree path reached the linker"


def test_an_archive_that_does_not_link_falls_back_to_the_shared_library(tmp_path):
    # A library no machine has: whatever else this Python's archive needs, the link fails.
    output, built = configure_and_build(tmp_path, f"{LIBS} -lparity_no_such_library")
    assert f"parity: {ARCHIVE} does not link with its libraries" in output and "-lparity_no_such_library" in output
    assert "the parity executable links the shared libpython" in output
    assert built == 0


def test_the_libraries_sysconfig_names_link_as_before(tmp_path):
    output, built = configure_and_build(tmp_path, LIBS)
    assert f"parity: the parity executable links {ARCHIVE}" in output
    assert built == 0
