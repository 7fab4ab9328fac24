"""NumPy masked-array scenarios: np.ma construction, arithmetic, reductions and fills, with masked arrays as outputs."""
import parity
from parity import xfails

# np.ma is a class hierarchy a proxy passes through unwrapped, so its results (masks, filled arrays) are plain
# ndarrays under a proxy candidate too: the type check accepts the gold type's subclasses.
MASKED_RESULTS = {"type": "subclass-ok"}


@parity.scenario(policy=MASKED_RESULTS, rtol=1e-12, atol=1e-12, params={"dtype": ["float64", "int32"]},
                 tags=["numpy", "masked", "subclass"],
                 xfail=parity.xfail_on({"joblib": {"compare": {"attrs": xfails.JOBLIB_FILL_VALUE,
                                                                              "pickle": xfails.JOBLIB_FILL_VALUE_REPICKLED}}},
                                       when={"dtype": ["int32"]}))
def arithmetic(xp, rng, dtype):
    data = xp.asarray(rng.integers(-5, 10, size=(4, 5)), dtype=dtype)
    # Default fill values (an integer array's is an int64 999999 whatever its dtype), and one set on `b` that
    # the quotient keeps as an int in a float64 array: the masked-array reducer must bring each back as it was.
    a = xp.ma.masked_less(data, 0)
    b = xp.ma.masked_equal(xp.asarray(rng.integers(0, 4, size=(4, 5)), dtype=dtype), 0)
    b.fill_value = 5
    return {
        "a": a,
        "sum": a + b,
        "quotient": b / a,  # division by a masked zero stays masked
        "filled": (a * 2).filled(-1),
        "mask": xp.ma.getmaskarray(a),
        "compressed": a.compressed(),
    }


@parity.scenario(policy=MASKED_RESULTS, rtol=1e-12, atol=1e-12, params={"axis": [None, 0, 1]},
                 tags=["numpy", "masked", "reduction", "subclass"])
def reductions(xp, rng, axis):
    data = xp.asarray(rng.standard_normal((5, 6)))
    a = xp.ma.masked_where(data > 0.8, data)
    a[0] = xp.ma.masked  # a fully masked row
    return {
        "sum": a.sum(axis=axis),
        "mean": a.mean(axis=axis),
        "std": a.std(axis=axis),
        "max": a.max(axis=axis),
        "count": a.count(axis=axis),
        "argmin": a.argmin(axis=axis),
    }


@parity.scenario(policy=MASKED_RESULTS, rtol=1e-12, atol=1e-12, tags=["numpy", "masked", "subclass", "layout"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("attrs", "layout")}))
def masked_views_and_fill_values(xp, rng):
    data = xp.asarray(rng.standard_normal((6, 4)), order="F")
    a = xp.ma.array(data, mask=data < -0.5, fill_value=-999.0)
    invalid = xp.ma.masked_invalid(xp.where(data > 1.0, xp.nan, data))
    return {
        "F_masked": a,
        "view": a[::-2, 1:],
        "transposed": a.T,
        "fill_value": a.fill_value,
        "hardmask": xp.ma.array(data[:2], mask=[[True, False, False, True]] * 2, hard_mask=True),
        "invalid": invalid,
        "sorted": xp.ma.sort(a, axis=0),
        "nomask": xp.ma.array(data[0]),
    }
