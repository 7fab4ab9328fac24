"""Ordinary scenarios the hostile-input tests start from: a few arrays of different layouts and a nested output."""
import parity


@parity.scenario()
def matrix(xp, rng):
    return {"m": xp.asarray(rng.standard_normal((4, 3)))}


@parity.scenario()
def strided(xp, rng):
    a = xp.asarray(rng.standard_normal((6, 5)))
    return {"s": a[::2, 1:], "f": xp.asfortranarray(a), "b": a.astype(">f8")}


@parity.scenario()
def nested(xp):
    return {"l": [xp.arange(3), (1, 2.5, "x", None)], "d": {"k": xp.ones((2, 2), dtype="int32")}}
