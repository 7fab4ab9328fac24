"""A scenario NumPy cannot allocate for: numpy's _ArrayMemoryError is a MemoryError, so a crash, and the next
scenario runs in a fresh worker."""
import numpy

import parity


@parity.scenario
def allocates_four_exbibytes(xp):
    return {"a": numpy.empty(1 << 62, dtype=numpy.uint8)}


@parity.scenario
def runs_after(xp):
    return {"a": xp.arange(4)}
