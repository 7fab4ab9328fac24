"""A native scenario, run before the suite's tests in the same worker (natives run first): what it changes is put
back before them, and their fixtures are unaffected."""
import os
import signal

import numpy as np
import parity

from seen import note


@parity.scenario
def meddles(xp, rng):
    note("native")
    os.environ.pop("SUITE_MODE", None)
    os.environ["SUITE_OFFLINE"] = "native"
    os.umask(0o077)
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    np.seterr(divide="ignore")
    return {"x": 1}
