"""NumPy ufunc scenarios with out= and where=: results written into preallocated, strided and masked targets."""
import parity
from parity import xfails


def _target(xp, shape, dtype, layout):
    # The output buffer itself has a layout: C, F, or a strided view into a larger array.
    if layout == "strided":
        return xp.zeros((shape[0] * 2, shape[1] * 3), dtype=dtype)[::2, ::3]
    return xp.zeros(shape, dtype=dtype, order=layout)


@parity.scenario(rtol=1e-12, atol=1e-14, params={"layout": ["C", "F", "strided"]},
                 tags=["numpy", "ufunc", "out", "layout"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}, when={"layout": ["strided"]}))
def out_buffers(xp, rng, layout):
    a = xp.asarray(rng.uniform(0.5, 4.0, size=(5, 6)))
    b = xp.asarray(rng.uniform(0.5, 4.0, size=(5, 6)))
    add_out = _target(xp, a.shape, a.dtype, layout)
    xp.add(a, b, out=add_out)
    log_out = _target(xp, a.shape, a.dtype, layout)
    xp.log(a, out=log_out)
    q, r = _target(xp, a.shape, a.dtype, layout), _target(xp, a.shape, a.dtype, layout)
    xp.divmod(a, b, out=(q, r))
    return {"add": add_out, "log": log_out, "quotient": q, "remainder": r}


@parity.scenario(rtol=1e-6, atol=1e-7, params={"dtype": ["float64", "float32", "int64"]},
                 tags=["numpy", "ufunc", "where"])
def where_masks(xp, rng, dtype):
    a = xp.asarray(rng.integers(-20, 20, size=(4, 7)), dtype=dtype)
    b = xp.asarray(rng.integers(1, 9, size=(4, 7)), dtype=dtype)
    mask = a > 0
    out = xp.full(a.shape, -1, dtype=dtype)
    xp.multiply(a, b, out=out, where=mask)
    row_mask = xp.asarray([True, False, True, False, True, False, True])
    out_bcast = xp.full(a.shape, 7, dtype=dtype)
    xp.subtract(a, b, out=out_bcast, where=row_mask)  # the mask broadcasts over rows
    return {"masked_product": out, "broadcast_where": out_bcast, "mask": mask}


@parity.scenario(rtol=1e-12, atol=1e-14, tags=["numpy", "ufunc", "out", "reduction"])
def reduce_and_accumulate_out(xp, rng):
    a = xp.asarray(rng.standard_normal((6, 5)))
    col_sum = xp.empty(5)
    xp.add.reduce(a, axis=0, out=col_sum)
    row_max = xp.empty((6, 1))
    xp.maximum.reduce(a, axis=1, keepdims=True, out=row_max)
    cum = xp.empty((6, 5), order="F")
    xp.multiply.accumulate(1.0 + a / 10.0, axis=0, out=cum)
    positive_sum = xp.add.reduce(a, axis=1, where=a > 0, initial=0.0)
    outer = xp.subtract.outer(a[0], a[:3, 0])
    in_place = a.copy()
    xp.sqrt(xp.abs(in_place, out=in_place), out=in_place)
    return {"col_sum": col_sum, "row_max": row_max, "cumprod": cum, "positive_sum": positive_sum,
            "outer": outer, "in_place": in_place}


@parity.scenario(rtol=0.0, tags=["numpy", "ufunc", "out", "integer"])
def integer_out_casting(xp, rng):
    a = xp.asarray(rng.integers(0, 200, size=(3, 8)), dtype=xp.uint8)
    b = xp.asarray(rng.integers(0, 200, size=(3, 8)), dtype=xp.uint8)
    wide = xp.empty((3, 8), dtype=xp.uint16)
    xp.add(a, b, out=wide, dtype=xp.uint16)
    wrapped = xp.empty_like(a)
    xp.add(a, b, out=wrapped)  # wraps modulo 256
    shifted = xp.empty((3, 8), dtype=xp.int32)
    xp.left_shift(a, 2, out=shifted, casting="unsafe")
    return {"widened": wide, "wrapped": wrapped, "shifted": shifted, "bitand": xp.bitwise_and(a, b, out=xp.empty_like(a))}
