"""A TYPE_MAP wrapper with a reducer but no array form (no __array__, no DLPack, no to_numpy hook): compare cannot
check its values and must say so (`uncompared`) at every wrapped output rather than pass."""
import numpy

import parity.reducers
from parity_fixtures.broken._transform import replace_leaves

__version__ = "0.1.0"


class Opaque:
    def __init__(self, data):
        self.data = data

    def __repr__(self):
        return f"Opaque(shape={self.data.shape})"


TYPE_MAP = {"numpy.ndarray": f"{__name__}.Opaque"}
parity.reducers.register(Opaque, reduce=lambda o: {"data": o.data}, rebuild=lambda state: Opaque(state["data"]))


def materialize(obj):
    plain = lambda a: type(a) is numpy.ndarray  # noqa: E731
    return replace_leaves(obj, plain, Opaque, first_only=False)[0]
