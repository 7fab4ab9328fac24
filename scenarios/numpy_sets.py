"""NumPy set-operation scenarios: unique with counts/index/inverse, intersect1d, union1d, setdiff1d, setxor1d, isin."""
import parity


def _values(xp, rng, dtype, size):
    ints = rng.integers(0, 9, size=size)
    if dtype == "str":
        return xp.asarray([f"k{v}" for v in ints.ravel()]).reshape(size)
    return xp.asarray(ints, dtype=dtype)


@parity.scenario(rtol=0.0, params={"dtype": ["int64", "float32", "str"]}, tags=["numpy", "sets", "unique"])
def unique_all(xp, rng, dtype):
    a = _values(xp, rng, dtype, (4, 6))
    values, index, inverse, counts = xp.unique(a, return_index=True, return_inverse=True, return_counts=True)
    return {
        "values": values,
        "index": index,
        "inverse": inverse,  # NumPy 2 keeps the input's shape for axis=None
        "counts": counts,
        "rows": xp.unique(a[:, :2], axis=0),
        "unique_values": xp.unique_values(a),
    }


@parity.scenario(rtol=0.0, params={"dtype": ["int64", "str"]}, tags=["numpy", "sets"])
def binary_set_ops(xp, rng, dtype):
    a = _values(xp, rng, dtype, 12)
    b = _values(xp, rng, dtype, 10)
    common, ia, ib = xp.intersect1d(a, b, return_indices=True)
    return {
        "intersect": common,
        "intersect_idx_a": ia,
        "intersect_idx_b": ib,
        "union": xp.union1d(a, b),
        "setdiff": xp.setdiff1d(a, b),
        "setxor": xp.setxor1d(a, b),
        "isin": xp.isin(a.reshape(3, 4), b),
        "isin_invert": xp.isin(a, b, invert=True),
    }
