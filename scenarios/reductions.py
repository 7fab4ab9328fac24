"""Reduction scenarios: sums, means, spreads, extrema and arg-extrema along axes, with keepdims, on several layouts."""
import parity

# Summation order differs between libraries (pairwise, tree, atomics), so float sums need a tolerance.


@parity.scenario(rtol=1e-12, atol=1e-12, params={"axis": [None, 0, 1, -1], "keepdims": [False, True]},
                 tags=["numpy", "reduction"])
def along_axes(xp, rng, axis, keepdims):
    a = xp.asarray(rng.standard_normal((16, 12)))
    return {
        "sum": xp.sum(a, axis=axis, keepdims=keepdims),
        "mean": xp.mean(a, axis=axis, keepdims=keepdims),
        "std": xp.std(a, axis=axis, keepdims=keepdims, ddof=1),
        "var": a.var(axis=axis, keepdims=keepdims),
        "min": xp.min(a, axis=axis, keepdims=keepdims),
        "max": a.max(axis=axis, keepdims=keepdims),
        "ptp": xp.ptp(a, axis=axis, keepdims=keepdims),
        "argmax": xp.argmax(a, axis=axis, keepdims=keepdims),
        "argmin": a.argmin(axis=axis, keepdims=keepdims),
        "prod": xp.prod(1.0 + a / 16.0, axis=axis, keepdims=keepdims),
    }


@parity.scenario(rtol=1e-12, atol=1e-12, params={"layout": ["F", "strided", "reversed"]},
                 tags=["numpy", "reduction", "layout"])
def input_layouts(xp, rng, layout):
    base = xp.asarray(rng.standard_normal((10, 8, 6)), order="F" if layout == "F" else "C")
    a = {"F": base, "strided": base[::2, 1:, ::3], "reversed": base[::-1, :, ::-1]}[layout]
    return {
        "sum_0": a.sum(axis=0),
        "sum_02": a.sum(axis=(0, 2)),
        "sum_all": a.sum(),
        "mean_keep": a.mean(axis=(1, 2), keepdims=True),
        "max_1": a.max(axis=1),
        "argmax_2": a.argmax(axis=2),
        "median": xp.median(a, axis=0),
        "percentile": xp.percentile(a, [10.0, 50.0, 90.0], axis=1),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "reduction", "integer"])
def integer_reductions(xp, rng):
    i8 = xp.asarray(rng.integers(-128, 128, size=(20, 30)), dtype=xp.int8)
    u8 = xp.asarray(rng.integers(0, 256, size=(20, 30)), dtype=xp.uint8)
    u64 = xp.asarray(rng.integers(0, 2**63, size=10), dtype=xp.uint64) * xp.uint64(2)
    flags = i8 > 0
    return {
        "sum_int8": i8.sum(axis=0),  # accumulates in int64
        "sum_uint8": u8.sum(),  # uint64
        "sum_int8_as_int16": i8.sum(axis=1, dtype=xp.int16),
        "sum_bool": flags.sum(axis=1),
        "max_uint64": u64.max(),
        "min_int8": i8.min(axis=1),
        "mean_int8": i8.mean(axis=0),  # float64
        "cumsum": xp.cumsum(i8[:3], axis=1),
        "prod_small": xp.prod(xp.asarray([[1, 2, 3], [-4, 5, 6]], dtype=xp.int32), axis=1),
        "all": flags.all(axis=0),
        "any_keep": flags.any(axis=1, keepdims=True),
    }


@parity.scenario(rtol=1e-5, atol=1e-4, tags=["numpy", "reduction", "float32"])
def float32_reductions(xp, rng):
    a = xp.asarray(rng.standard_normal((256, 128)), dtype=xp.float32)
    return {
        "sum": a.sum(),
        "sum_0": a.sum(axis=0),
        "mean_1": a.mean(axis=1),
        "std_0": a.std(axis=0),
        "max_1": a.max(axis=1),
        "argmax_0": a.argmax(axis=0),
        "norm_rows": xp.sqrt((a * a).sum(axis=1)),
        "sum_as_f64": a.sum(axis=0, dtype=xp.float64),
    }


@parity.scenario(rtol=1e-12, atol=1e-12, tags=["numpy", "reduction", "cumulative"])
def cumulative(xp, rng):
    a = xp.asarray(rng.standard_normal((8, 6)), order="F")
    return {
        "cumsum_0": xp.cumsum(a, axis=0),
        "cumsum_flat": a.cumsum(),
        "cumprod_1": xp.cumprod(1.0 + a / 8.0, axis=1),
        "diff_1": xp.diff(a, axis=1),
        "diff_2": xp.diff(a, n=2, axis=0),
        "trapezoid": xp.trapezoid(a, dx=0.5, axis=0),
    }
