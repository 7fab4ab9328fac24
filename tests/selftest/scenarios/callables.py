"""An np.vectorize object among the outputs, and an ordinary scenario whose callable pickles by reference (bug 5)."""
import parity


def _clip(value):
    return min(value, 1.0)


@parity.scenario(tags=["selftest"])
def vectorize_output(xp):
    clip = xp.vectorize(_clip, otypes=[float])
    clipped = clip(xp.arange(3.0))  # after a call with otypes it holds a ufunc: unpicklable, even by cloudpickle
    return {"clipped": clipped, "f": clip}


@parity.scenario(tags=["selftest"])
def plain(xp, rng):
    return {"x": xp.asarray(rng.standard_normal(4))}
