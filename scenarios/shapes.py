"""Shape scenarios: empty and 0-d arrays, reshaping, stacking and splitting, and indexing that picks elements."""
import parity
from parity import xfails


# numpy.ma genuinely cannot do this: recorded as a masked-only xfail (see parity.xfail_on).
_MASKED_UNIQUE = {"masked": {"candidate": (
    "numpy.ma.unique has no return_counts: its signature is unique(ar1, return_index, return_inverse)")}}


@parity.scenario(rtol=0.0, tags=["numpy", "shapes", "empty"])
def empty_arrays(xp, rng):
    a = xp.asarray(rng.standard_normal((3, 5)))
    none_f = xp.zeros((0, 3), dtype=xp.float32)
    return {
        "zeros_0": xp.zeros((0,)),
        "ones_0x3": xp.ones((0, 3), dtype=xp.int32),
        "empty_3x0": xp.empty((3, 0)),  # nothing uninitialized to read: it has no elements
        "arange_0": xp.arange(0, dtype=xp.int64),
        "slice_rows": a[2:2],
        "slice_cols": a[:, 5:],
        "transposed": none_f.T,
        "reshaped": none_f.reshape(3, 0),
        "sum_over_empty": none_f.sum(axis=0),  # the identity, 0.0, three times
        "sum_to_empty": none_f.sum(axis=1),
        "concat_with_empty": xp.concatenate([none_f, a[:, :3].astype(xp.float32)]),
        "empty_strings": xp.asarray([], dtype="<U3"),
        "empty_complex_f": xp.zeros((0, 2), dtype=xp.complex64, order="F"),
        "empty_list": [],
        "empty_tuple": (),
        "empty_dict": {},
    }


@parity.scenario(rtol=0.0, tags=["numpy", "shapes", "0-d", "scalars"])
def zero_dim(xp, rng):
    matrix = xp.asarray(rng.standard_normal((2, 2)))
    frozen = xp.asarray(-4, dtype=xp.int16)
    frozen.flags.writeable = False
    return {
        "float": xp.asarray(3.5),
        "int8": xp.array(7, dtype=xp.int8),
        "complex": xp.asarray(1 - 2j),
        "bool": xp.asarray(True),
        "zeros": xp.zeros((), dtype=xp.float32),
        "reshaped": matrix[:1, :1].reshape(()),
        "ellipsis_view": matrix[0, 1, ...],  # a 0-d view, not a scalar
        "element": matrix[0, 1],  # a NumPy scalar
        "readonly": frozen,
        "from_0d_ufunc": xp.exp(xp.asarray(1.0)),  # ufuncs give scalars for 0-d inputs
        "string": xp.asarray("naïve"),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "shapes", "reshape"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def reshape_and_stack(xp, rng):
    a = xp.asarray(rng.integers(0, 100, size=(4, 6)), dtype=xp.int64)
    b = xp.asarray(rng.integers(0, 100, size=(4, 6)), dtype=xp.int64)
    return {
        "reshape_c": a.reshape(3, 8),
        "reshape_f": a.reshape((3, 8), order="F"),  # a copy: a is C-contiguous
        "reshape_infer": a.reshape(2, -1, 3),
        "view_reshape": a.T.reshape(6, 4),
        "squeeze": a[:, :1].squeeze(),
        "stack_0": xp.stack([a, b]),
        "stack_last": xp.stack([a, b], axis=-1),
        "concat_1": xp.concatenate([a, b], axis=1),
        "hstack": xp.hstack([a[:, :2], b]),
        "vstack": xp.vstack([a, b[:1]]),
        "column_stack": xp.column_stack([a[:, 0], b[:, 0]]),
        "split": xp.split(a, 3, axis=1),  # a list of views
        "array_split": xp.array_split(b, 3),
        "transpose_axes": xp.transpose(xp.stack([a, b]), (2, 0, 1)),
        "r_": xp.r_[a[0], -1, b[0, :2]],
    }


@parity.scenario(rtol=0.0, tags=["numpy", "shapes", "indexing"],
                 xfail=parity.xfail_on({**_MASKED_UNIQUE, "joblib": xfails.joblib("layout")}))
def indexing(xp, rng):
    a = xp.asarray(rng.integers(-20, 20, size=(6, 7)), dtype=xp.int32)
    mask = a > 0
    order = xp.asarray([5, 0, 3, 3], dtype=xp.int64)
    values, counts = xp.unique(a, return_counts=True)
    return {
        "fancy_rows": a[order],
        "fancy_pairs": a[order, order],
        "mixed": a[1:4, order],
        "masked": a[mask],
        "take": xp.take(a, order, axis=1),
        "nonzero": xp.nonzero(mask),  # a tuple of intp arrays
        "argwhere": xp.argwhere(a == a.max()),
        "where": xp.where(mask, a, -a),
        "sorted": xp.sort(a, axis=1),
        "argsort": xp.argsort(a[0], kind="stable"),
        "unique": values,
        "counts": counts,
        "searchsorted": xp.searchsorted(xp.sort(a.ravel()), order.astype(xp.int32)),
        "compress": xp.compress(mask.any(axis=1), a, axis=0),
    }
