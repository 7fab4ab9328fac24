"""Outputs a TYPE_MAP wrapper backend wraps (the arrays) beside ones it leaves alone (a number, a str)."""
import numpy as np

import parity


@parity.scenario(tags=["objects"])
def arrays_and_plain_values():
    return {"a": np.arange(6.0).reshape(2, 3), "b": np.arange(4, dtype=">i4")[::2], "n": 3, "s": "x"}


@parity.scenario(tags=["objects"])
def read_only_array():
    a = np.linspace(0.0, 1.0, 5)
    a.setflags(write=False)
    return {"r": a}
