"""Memory layout scenarios: C and F order, strided and negative-stride views, copies of views, read-only arrays."""
import parity
from parity import xfails


@parity.scenario(rtol=0.0, params={"order": ["C", "F"]}, tags=["numpy", "layout"])
def orders(xp, rng, order):
    a = xp.asarray(rng.standard_normal((6, 5)), order=order)
    return {
        "a": a,
        "transposed": a.T,  # the transpose of a C array is F-contiguous and vice versa
        "zeros": xp.zeros((3, 4), dtype=xp.float32, order=order),
        "full": xp.full((2, 3, 4), 7, dtype=xp.int16, order=order),
        "ones_like": xp.ones_like(a),  # order="K" by default: must follow a
        "reshaped": xp.reshape(xp.arange(12, dtype=xp.int64), (3, 4), order=order),
        "ravel_k": a.ravel(order="K"),
        "copy_a": a.copy(order="A"),
        "as_c": xp.ascontiguousarray(a),
        "as_f": xp.asfortranarray(a),
        "sum_with": a + a,  # ufunc outputs follow the input layout
    }


@parity.scenario(rtol=0.0, params={"order": ["C", "F"]}, tags=["numpy", "layout", "views"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def strided_views(xp, rng, order):
    a = xp.asarray(rng.standard_normal((8, 9)), order=order)
    cube = xp.asarray(rng.integers(0, 100, size=(4, 5, 6)), dtype=xp.int32, order=order)
    return {
        "step_rows": a[::2, 1:],
        "step_cols": a[:, ::3],
        "corner": a[1:5, 2:7],
        "column": a[:, 4],
        "row": a[3],
        "transposed_step": a.T[::2],
        "newaxis": a[:, None, 2],
        "cube_slab": cube[1:3, :, ::2],
        "cube_moved": xp.moveaxis(cube, 0, -1),
        "cube_swapped": xp.swapaxes(cube, 0, 1)[::2],
        "diagonal": xp.diagonal(a),  # a read-only strided view since NumPy 1.9
    }


@parity.scenario(rtol=0.0, tags=["numpy", "layout", "views", "negative-strides"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def negative_strides(xp, rng):
    a = xp.asarray(rng.standard_normal((7, 6)))
    v = xp.arange(10, dtype=xp.int64)
    return {
        "rows_reversed": a[::-1],
        "both_reversed": a[::-1, ::-2],
        "flip_cols": xp.flip(a, axis=1),
        "flipud": xp.flipud(a),
        "rot90": xp.rot90(a),
        "vector_reversed": v[::-1],
        "vector_stepped": v[-2::-3],
        "reversed_sum": a[::-1] + v[:6],  # the output is freshly allocated, C-contiguous
        "reversed_copy": a[::-1].copy(),
    }


@parity.scenario(rtol=0.0, params={"order": ["C", "F", "A", "K"]}, tags=["numpy", "layout", "copies"])
def copies_of_views(xp, rng, order):
    a = xp.asarray(rng.standard_normal((6, 8)), order="F")
    v = a[::2, ::-1]  # neither C nor F contiguous
    return {
        "array": xp.array(v, order=order),
        "copy": v.copy(order=order),
        "astype": v.astype(xp.float32, order=order),
        "from_f": xp.array(a, order=order),
        "flatten": a.flatten(order=order),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "layout", "readonly"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def readonly(xp, rng):
    a = xp.asarray(rng.integers(-50, 50, size=(5, 4)), dtype=xp.int64)
    a.flags.writeable = False
    frozen_f = xp.asfortranarray(rng.standard_normal((3, 4)))
    frozen_f.flags.writeable = False
    return {
        "a": a,
        "view": a[1:, ::2],  # views of read-only arrays are read-only
        "transposed": a.T,
        "asarray": xp.asarray(a),
        "copy": a.copy(),  # copies are writeable again
        "doubled": a * 2,
        "frozen_f": frozen_f,
        "from_bytes": xp.frombuffer(bytes(range(16)), dtype=xp.uint16),  # read-only: bytes is immutable
    }


@parity.scenario(rtol=0.0, tags=["numpy", "layout", "views", "overlapping"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def sliding_windows(xp, rng):
    x = xp.asarray(rng.integers(0, 10, size=12), dtype=xp.int32)
    grid = xp.asarray(rng.standard_normal((5, 6)))
    windows = xp.lib.stride_tricks.sliding_window_view(x, 4)
    return {
        "windows": windows,  # overlapping rows: strides (4, 4), read-only
        "window_sums": windows.sum(axis=1),
        "patches": xp.lib.stride_tricks.sliding_window_view(grid, (2, 3)),
    }
