"""parity: the Python side of the harness that scenarios import (scenario decorator, skip) and the C++ runner drives,
and its Python API (parity.api: result files, compare_outputs, compare_results)."""
import os as _os

from parity._scenario import Scenario, Skip, scenario, skip, xfail_on
from parity.api import CORE_DIR_ENV as _CORE_DIR_ENV
from parity.api import compare_outputs, compare_results, read_result, write_result

try:  # an installed package: CMake wrote _version.py from CMakeLists.txt's project(VERSION)
    from parity._version import __version__
except ImportError:  # the source tree: the same line, read where it is written
    import re as _re
    from pathlib import Path as _Path

    __version__ = _re.search(r"project\(parity VERSION ([0-9.]+)",
                             (_Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()).group(1)

__all__ = ["scenario", "skip", "xfail_on", "Skip", "Scenario", "compare_outputs", "compare_results", "read_result",
           "write_result", "__version__"]

# A source checkout's build of the extension module parity._core (CMake puts it in <build>/python); an installed
# parity has it inside the package.
if _os.environ.get(_CORE_DIR_ENV):
    __path__.append(_os.path.abspath(_os.environ[_CORE_DIR_ENV]))
