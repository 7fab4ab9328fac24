"""Broadcasting scenarios: zero-stride read-only views from broadcast_to and friends, and broadcast ufunc results."""
import parity
from parity import xfails


@parity.scenario(rtol=0.0, tags=["numpy", "broadcasting", "zero-strides", "readonly"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def broadcast_views(xp, rng):
    row = xp.asarray(rng.integers(0, 9, size=4), dtype=xp.int64)
    col = xp.asarray(rng.standard_normal((3, 1)))
    scalar = xp.asarray(2.5, dtype=xp.float32)
    return {
        "row_to_matrix": xp.broadcast_to(row, (3, 4)),  # strides (0, 8), read-only
        "col_to_matrix": xp.broadcast_to(col, (3, 5)),
        "scalar_to_cube": xp.broadcast_to(scalar, (2, 3, 2)),  # every stride is 0
        "to_empty": xp.broadcast_to(row, (0, 4)),
        "view_of_broadcast": xp.broadcast_to(row, (5, 4))[1::2, ::-1],
        "materialized": xp.broadcast_to(col, (3, 5)).copy(),
        "shape": xp.broadcast_shapes((3, 1), (1, 4), (4,)),  # a tuple of Python ints
    }


@parity.scenario(rtol=0.0, tags=["numpy", "broadcasting", "zero-strides"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def broadcast_grids(xp, rng):
    x = xp.linspace(0.0, 1.0, 5)
    y = xp.asarray(rng.integers(0, 5, size=3), dtype=xp.int16)
    # copy=False gives broadcast views; the others are fresh arrays. NumPy marks such views "warn on
    # write" and warns even when the writeable flag is read, so the flag is settled explicitly.
    gx, gy = xp.meshgrid(x, y, copy=False)
    gx.flags.writeable = gy.flags.writeable = False
    with_copy = xp.meshgrid(x, y, indexing="ij")
    sparse = xp.meshgrid(x, y, sparse=True)
    return {
        "views": (gx, gy),
        "copied": with_copy,
        "sparse": sparse,
        "mgrid": xp.mgrid[0:3, 0:4],
        "ogrid": xp.ogrid[0:3, 0:4],
        "indices": xp.indices((2, 3), dtype=xp.int32),
    }


@parity.scenario(rtol=1e-12, atol=1e-12, params={"order": ["C", "F"]}, tags=["numpy", "broadcasting", "ufunc"])
def broadcast_arithmetic(xp, rng, order):
    a = xp.asarray(rng.standard_normal((4, 5)), order=order)
    row = xp.asarray(rng.standard_normal(5))
    col = xp.asarray(rng.standard_normal((4, 1)))
    ints = xp.asarray(rng.integers(-5, 5, size=(1, 5)), dtype=xp.int8)
    return {
        "plus_row": a + row,  # the output follows a's layout
        "times_col": a * col,
        "outer_by_broadcast": col * row,
        "outer": xp.outer(col, row),
        "with_ints": a - ints,
        "compare": a > row,
        "expand": xp.expand_dims(row, 0) + xp.expand_dims(col[:, 0], 1),
        "cube": a[:, :, None] * row[None, None, :],
        "tile": xp.tile(ints, (3, 2)),
        "repeat": xp.repeat(ints, 3, axis=0),
    }
