"""parity: the Python side of the harness that scenarios import (scenario decorator, skip) and the C++ runner drives."""
from parity._scenario import Scenario, Skip, scenario, skip, xfail_on

__version__ = "0.1.0"
__all__ = ["scenario", "skip", "xfail_on", "Skip", "Scenario", "__version__"]
