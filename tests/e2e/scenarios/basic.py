"""End-to-end scenarios whose outputs the broken backends target at known paths."""
import parity


@parity.scenario(tags=["e2e"])
def matrix(xp, rng):
    m = xp.asarray(rng.standard_normal((4, 5)))
    return {"m": m, "v": xp.arange(3.0), "n": 7}


@parity.scenario(tags=["e2e"])
def big_endian(xp):
    return {"label": "be", "be": xp.arange(6, dtype=">f8").reshape(2, 3)}


@parity.scenario(tags=["e2e"])
def integers(xp):
    return [xp.arange(5, dtype="int32"), (True, None, b"raw")]


@parity.scenario(tags=["e2e"])
def raises(xp):
    raise RuntimeError("this scenario fails on purpose")
