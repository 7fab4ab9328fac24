"""Special-value scenarios: NaN and infinities through arithmetic and reductions, signed zeros, float limits."""
import parity


@parity.scenario(rtol=1e-12, atol=0.0, tags=["numpy", "special", "nan", "inf"])
def nan_and_inf(xp, rng):
    a = xp.asarray(rng.standard_normal((4, 6)))
    a[1, 2] = xp.nan
    a[3, 0] = xp.inf
    a[0, 5] = -xp.inf
    with xp.errstate(divide="ignore", invalid="ignore"):
        divided = xp.asarray([1.0, -1.0, 0.0]) / 0.0  # inf, -inf, nan
        logs = xp.log(xp.asarray([0.0, -1.0, 1.0]))  # -inf, nan, 0
        inf_minus_inf = xp.asarray([xp.inf]) - xp.inf
    return {
        "a": a,
        "isnan": xp.isnan(a),
        "isinf": xp.isinf(a),
        "isfinite": xp.isfinite(a),
        "max_propagates": a.max(axis=1),
        "fmax_ignores": xp.fmax(a, 0.0),
        "nanmax": xp.nanmax(a, axis=1),
        "nanmin": xp.nanmin(a),
        "nansum": xp.nansum(a[:3], axis=0),
        "nanmean_finite_rows": xp.nanmean(a[1:3], axis=1),
        "sorted": xp.sort(a, axis=None),  # NaN sorts last
        "argmax_nan": int(xp.argmax(a)),  # the first NaN
        "nan_to_num": xp.nan_to_num(a, nan=-1.0, posinf=1e300, neginf=-1e300),
        "divided": divided,
        "logs": logs,
        "inf_minus_inf": inf_minus_inf,
        "float32_nan": xp.asarray([xp.nan, xp.inf], dtype=xp.float32),
        "complex_nan": xp.asarray([complex(xp.nan, 1.0), complex(0.0, xp.inf)]),
        "python_nan": float("nan"),
        "python_inf": float("-inf"),
        "numpy_nan": xp.float64(xp.nan),
    }


@parity.scenario(rtol=0.0, signed_zeros=True, tags=["numpy", "special", "signed-zero"])
def signed_zeros(xp, rng):
    z = xp.asarray([-0.0, 0.0, -0.0])
    with xp.errstate(divide="ignore"):
        reciprocal = 1.0 / z  # -inf, inf, -inf
    return {
        "z": z,
        "signbit": xp.signbit(z),
        "negative": xp.negative(xp.zeros(3)),
        "multiply": xp.asarray([-1.0, 1.0]) * 0.0,
        "copysign": xp.copysign(xp.asarray([0.0, 0.0]), xp.asarray([-1.0, 1.0])),
        "sqrt": xp.sqrt(z),  # IEEE: sqrt(-0.0) is -0.0
        "round": xp.round(xp.asarray([-0.4, -0.0, 0.4])),
        "reciprocal": reciprocal,
        "float32": z.astype(xp.float32),
        "scalar": xp.float64(-0.0),
        "python": -0.0,
    }


@parity.scenario(rtol=0.0, params={"dtype": ["float16", "float32", "float64"]}, tags=["numpy", "special", "limits"])
def float_limits(xp, rng, dtype):
    info = xp.finfo(dtype)
    limits = xp.asarray([info.max, info.min, info.tiny, info.smallest_subnormal, info.eps], dtype=dtype)
    with xp.errstate(over="ignore", under="ignore"):
        overflowed = limits[:2] * 2  # +-inf
        underflowed = limits[3:4] / 2  # rounds to zero
    return {
        "limits": limits,
        "subnormals": limits[2:3] / xp.asarray([2, 4, 1024], dtype=dtype),
        "overflowed": overflowed,
        "underflowed": underflowed,
        "one_plus_eps": xp.asarray(1, dtype=dtype) + info.eps,
        "nextafter": xp.nextafter(xp.asarray([1.0, 0.0], dtype=dtype), xp.asarray([2.0, -1.0], dtype=dtype)),
        "spacing": xp.spacing(xp.asarray([1.0, 1000.0], dtype=dtype)),
    }
