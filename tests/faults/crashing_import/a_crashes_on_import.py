"""A scenario module whose import kills the process that imports it (an extension module that segfaults)."""
import ctypes

import parity

ctypes.string_at(0)


@parity.scenario
def never_collected(xp):
    return {"a": xp.zeros(1)}
