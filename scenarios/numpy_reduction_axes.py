"""NumPy reduction scenarios over axis tuples with and without keepdims, on a 4-D array and NaN-aware variants."""
import parity

# Float sums depend on summation order, so they get a small tolerance; integer and arg results are exact.


@parity.scenario(rtol=1e-12, atol=1e-12,
                 params={"axis": [(0, 1), (1, 3), (0, 2, 3), (-1, -3)], "keepdims": [False, True]},
                 tags=["numpy", "reduction", "keepdims"])
def axis_tuples(xp, rng, axis, keepdims):
    a = xp.asarray(rng.standard_normal((3, 4, 5, 6)))
    i = xp.asarray(rng.integers(-9, 9, size=(3, 4, 5, 6)), dtype=xp.int32)
    return {
        "sum": a.sum(axis=axis, keepdims=keepdims),
        "mean": xp.mean(a, axis=axis, keepdims=keepdims),
        "std": xp.std(a, axis=axis, keepdims=keepdims),
        "max": xp.max(a, axis=axis, keepdims=keepdims),
        "any": xp.any(a > 2.0, axis=axis, keepdims=keepdims),
        "int_sum": i.sum(axis=axis, keepdims=keepdims),
        "int_min": i.min(axis=axis, keepdims=keepdims),
        "count_nonzero": xp.count_nonzero(i, axis=axis, keepdims=keepdims),
    }


@parity.scenario(rtol=1e-12, atol=1e-12, params={"keepdims": [False, True]},
                 tags=["numpy", "reduction", "nan", "keepdims"])
def nan_reductions(xp, rng, keepdims):
    a = xp.asarray(rng.standard_normal((5, 6, 4)))
    a[a > 1.2] = xp.nan
    axis = (0, 2)
    return {
        "nansum": xp.nansum(a, axis=axis, keepdims=keepdims),
        "nanmean": xp.nanmean(a, axis=axis, keepdims=keepdims),
        "nanmax": xp.nanmax(a, axis=axis, keepdims=keepdims),
        "nanmedian": xp.nanmedian(a, axis=axis, keepdims=keepdims),
        "nanargmin": xp.nanargmin(a[:, :, 0], axis=1, keepdims=keepdims),
        "quantile": xp.nanquantile(a, [0.25, 0.75], axis=axis, keepdims=keepdims),
        "where_sum": xp.sum(a, axis=axis, keepdims=keepdims, where=~xp.isnan(a)),
    }
