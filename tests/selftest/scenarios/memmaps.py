"""A memmap made 1-D and reshaped to (5, 3), and one made 2-D directly (bug 4)."""
import os
import tempfile

import numpy as np

import parity


def _memmap(shape):
    """A memmap holding 0..14; its file is unlinked at once (the mapping stays valid), so runs leave nothing."""
    directory = tempfile.mkdtemp(prefix="parity-selftest-")
    path = os.path.join(directory, "data.f8")
    mapped = np.memmap(path, dtype="<f8", mode="w+", shape=shape)
    mapped[...] = np.arange(15.0).reshape(shape)
    os.unlink(path)
    os.rmdir(directory)
    return mapped


@parity.scenario(tags=["selftest"])
def reshaped_from_1d():
    return {"m": _memmap((15,)).reshape(5, 3)}


@parity.scenario(tags=["selftest"])
def made_2d():
    return {"m": _memmap((5, 3))}
