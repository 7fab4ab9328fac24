"""NumPy view scenarios: steps, negative strides, transposes, broadcasting and as_strided windows as outputs."""
import parity
from parity import xfails

# Views are returned as they are (not copied), so the candidate must carry every stride pattern exactly.


@parity.scenario(rtol=0.0, params={"step": [2, 3, -1, -2]}, tags=["numpy", "layout", "views"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def stepped_slices(xp, rng, step):
    a = xp.asarray(rng.integers(-99, 99, size=(9, 10)), dtype=xp.int64)
    return {
        "rows": a[::step],
        "cols": a[:, ::step],
        "both": a[::step, ::step],
        "column": a[:, 1],
        "row_reversed": a[2, ::-1],
    }


@parity.scenario(rtol=0.0, params={"order": ["C", "F"]}, tags=["numpy", "layout", "views", "transpose"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def transposes(xp, rng, order):
    a = xp.asarray(rng.standard_normal((3, 4, 5)), order=order)
    return {
        "T": a.T,
        "swap": xp.swapaxes(a, 0, 2),
        "moved": xp.moveaxis(a, 0, -1),
        "permuted": xp.transpose(a, (1, 0, 2)),
        "transposed_slice": a[:, ::2, 1:].T,
    }


@parity.scenario(rtol=0.0, params={"dtype": ["float32", "int16", "complex128"]},
                 tags=["numpy", "layout", "views", "broadcasting"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def broadcast_views(xp, rng, dtype):
    row = xp.asarray(rng.integers(0, 50, size=5), dtype=dtype)
    col = xp.asarray(rng.integers(0, 50, size=(3, 1)), dtype=dtype)
    b_row, b_col = xp.broadcast_arrays(row, col)
    for b in (b_row, b_col):
        b.flags.writeable = False  # NumPy warns on writes to these; say read-only as broadcast_to does
    return {
        "broadcast_to": xp.broadcast_to(row, (4, 5)),
        "b_row": b_row,
        "b_col": b_col,
        "newaxis": row[None, :, None],
        "expanded": xp.expand_dims(col, 0),
    }


@parity.scenario(rtol=0.0, params={"window": [2, 4]}, tags=["numpy", "layout", "views", "as_strided"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def as_strided_windows(xp, rng, window):
    x = xp.asarray(rng.standard_normal(12))
    step = x.strides[0]
    n = x.shape[0] - window + 1
    windows = xp.lib.stride_tricks.as_strided(x, shape=(n, window), strides=(step, step), writeable=False)
    blocks = xp.lib.stride_tricks.as_strided(x, shape=(3, 2), strides=(4 * step, 2 * step), writeable=False)
    zero = xp.lib.stride_tricks.as_strided(x[:1], shape=(3, 4), strides=(0, 0), writeable=False)
    return {
        "windows": windows,
        "blocks": blocks,
        "zero_strides": zero,
        "sliding": xp.lib.stride_tricks.sliding_window_view(x.reshape(3, 4), (2, window // 2 + 1)),
        "window_sums": windows.sum(axis=1),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "layout", "views", "negative-strides"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def negative_stride_chains(xp, rng):
    a = xp.asarray(rng.standard_normal((6, 7, 2)), order="F")
    return {
        "flipped": xp.flip(a),
        "flip_axis1": xp.flip(a, axis=1),
        "rot90": xp.rot90(a[:, :, 0]),
        "reversed_T": a[::-1, ::-2].T,
        "diag": xp.diagonal(a[::-1, ::-1, 0]),
        "real_view": (a[..., 0] + 1j * a[..., 1])[::-1].real,
    }
