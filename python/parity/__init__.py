"""parity: the Python side of the harness that scenarios import (scenario decorator, skip) and the C++ runner drives."""
from parity._scenario import Scenario, Skip, scenario, skip, xfail_on

try:  # an installed package: CMake wrote _version.py from CMakeLists.txt's project(VERSION)
    from parity._version import __version__
except ImportError:  # the source tree: the same line, read where it is written
    import re as _re
    from pathlib import Path as _Path

    __version__ = _re.search(r"project\(parity VERSION ([0-9.]+)",
                             (_Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()).group(1)

__all__ = ["scenario", "skip", "xfail_on", "Skip", "Scenario", "__version__"]
