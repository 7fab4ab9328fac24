"""parity: the Python side of the harness that scenarios import (scenario decorator, skip) and the C++ runner drives,
and its Python API (parity.api: result files, compare_outputs, compare_results)."""
import os as _os

from parity._scenario import Scenario, Skip, scenario, skip, xfail_on
from parity.api import CORE_DIR_ENV as _CORE_DIR_ENV
from parity.api import compare_outputs, compare_results, read_result, write_result

__version__ = "0.1.0"
__all__ = ["scenario", "skip", "xfail_on", "Skip", "Scenario", "compare_outputs", "compare_results", "read_result",
           "write_result", "__version__"]

# A source checkout's build of the extension module parity._core (CMake puts it in <build>/python); an installed
# parity has it inside the package.
if _os.environ.get(_CORE_DIR_ENV):
    __path__.append(_os.path.abspath(_os.environ[_CORE_DIR_ENV]))
