"""NumPy sorting and searching scenarios: sort kinds, argsort, lexsort, searchsorted and partition."""
import parity
from parity import xfails

# Data with ties: stable kinds must keep the original order of equal keys; unstable kinds only the values.


@parity.scenario(rtol=0.0, params={"kind": ["quicksort", "mergesort", "heapsort", "stable"]}, tags=["numpy", "sorting"])
def sort_kinds(xp, rng, kind):
    a = xp.asarray(rng.integers(0, 12, size=(6, 20)), dtype=xp.int32)
    f = xp.asarray(rng.standard_normal(40))
    f[::7] = xp.nan  # NaNs sort to the end
    out = {
        "rows": xp.sort(a, axis=1, kind=kind),
        "cols": xp.sort(a, axis=0, kind=kind),
        "flat": xp.sort(a, axis=None, kind=kind),
        "floats": xp.sort(f, kind=kind),
        "strided": xp.sort(a[::2, ::-3], kind=kind),
    }
    if kind in ("mergesort", "stable"):
        out["argsort_stable"] = xp.argsort(a, axis=1, kind=kind)
    return out


@parity.scenario(rtol=0.0, params={"side": ["left", "right"]}, tags=["numpy", "sorting", "searching"])
def searchsorted(xp, rng, side):
    haystack = xp.sort(xp.asarray(rng.integers(0, 30, size=25), dtype=xp.int64))
    needles = xp.asarray(rng.integers(-2, 33, size=(3, 5)), dtype=xp.int64)
    order = xp.argsort(-haystack, kind="stable")
    return {
        "idx": xp.searchsorted(haystack, needles, side=side),
        "with_sorter": xp.searchsorted(-haystack, -needles[0], side=side, sorter=order),
        "digitize": xp.digitize(needles, xp.asarray([0, 10, 20, 30]), right=side == "right"),
        "method": haystack.searchsorted(15, side=side),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "sorting", "searching"])
def argsort_and_lexsort(xp, rng):
    names = xp.asarray(rng.integers(0, 4, size=15), dtype=xp.int8)
    scores = xp.asarray(rng.integers(0, 5, size=15), dtype=xp.int16)
    a = xp.asarray(rng.standard_normal((5, 4)), order="F")
    return {
        "lexsort": xp.lexsort((scores, names)),
        "argsort_desc": xp.argsort(-scores, kind="stable"),
        "argsort_axis0": xp.argsort(a, axis=0),
        "take_along": xp.take_along_axis(a, xp.argsort(a, axis=1), axis=1),
        "argmax_flat": int(xp.argmax(a)),
        "nonzero": xp.nonzero(scores > 2),
        "argwhere": xp.argwhere(a > 0.5),
        "flatnonzero": xp.flatnonzero(names == 2),
    }


@parity.scenario(rtol=0.0, params={"kth": [0, 7, -1]}, tags=["numpy", "sorting", "partition"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def partition(xp, rng, kth):
    # Only the kth element and the sets on either side are defined, so the outputs are reduced to those.
    a = xp.asarray(rng.permutation(60).reshape(4, 15), dtype=xp.int64)
    part = xp.partition(a, kth, axis=1)
    idx = xp.argpartition(a, kth, axis=1)
    k = kth % 15
    return {
        "kth_values": part[:, k],
        "left_sets": xp.sort(part[:, :k], axis=1),
        "right_sets": xp.sort(part[:, k + 1:], axis=1),
        "arg_kth_values": xp.take_along_axis(a, idx, axis=1)[:, k],
        "multi_kth": xp.partition(a.ravel(), [5, 30])[[5, 30]],
    }
