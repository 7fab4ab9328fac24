"""Elementwise scenarios: transcendental and binary ufuncs, comparisons and logic, integer arithmetic, rounding."""
import parity

# A GPU math library is within a few ulps of NumPy for these functions; atol covers results near zero.


@parity.scenario(rtol=1e-12, atol=1e-15, tags=["numpy", "ufunc", "float64"])
def transcendental_f64(xp, rng):
    x = xp.asarray(rng.uniform(-4.0, 4.0, size=(32, 32)))
    pos = xp.abs(x) + 0.01
    return {
        "exp": xp.exp(x),
        "expm1": xp.expm1(x * 1e-3),
        "log": xp.log(pos),
        "log1p": xp.log1p(pos),
        "log10": xp.log10(pos),
        "sqrt": xp.sqrt(pos),
        "cbrt": xp.cbrt(x),
        "sin": xp.sin(x),
        "cos": xp.cos(x),
        "tan": xp.tan(x * 0.3),
        "arcsin": xp.arcsin(x / 4.0),
        "arctan": xp.arctan(x),
        "sinh": xp.sinh(x),
        "tanh": xp.tanh(x),
        "power": xp.power(pos, 1.7),
    }


@parity.scenario(rtol=1e-5, atol=1e-6, tags=["numpy", "ufunc", "float32"])
def transcendental_f32(xp, rng):
    x = xp.asarray(rng.uniform(-4.0, 4.0, size=(64, 16)), dtype=xp.float32)
    pos = xp.abs(x) + xp.float32(0.01)
    return {
        "exp": xp.exp(x),
        "log": xp.log(pos),
        "sqrt": xp.sqrt(pos),
        "sin": xp.sin(x),
        "cos": xp.cos(x),
        "tanh": xp.tanh(x),
        "hypot": xp.hypot(x, pos),
        "arctan2": xp.arctan2(x, x[::-1]),
        "strided_exp": xp.exp(x[::3, ::-2]),
    }


@parity.scenario(rtol=1e-12, atol=1e-15, params={"order": ["C", "F"]}, tags=["numpy", "ufunc", "binary"])
def binary_float(xp, rng, order):
    y = xp.asarray(rng.standard_normal((16, 12)), order=order)
    x = xp.asarray(rng.standard_normal((16, 12)), order=order)
    return {
        "hypot": xp.hypot(x, y),
        "arctan2": xp.arctan2(y, x),  # all four quadrants
        "arctan2_axes": xp.arctan2(xp.asarray([0.0, 0.0, 1.0, -1.0]), xp.asarray([1.0, -1.0, 0.0, 0.0])),
        "maximum": xp.maximum(x, y),
        "minimum_reversed": xp.minimum(x, y[::-1]),
        "fmod": xp.fmod(x, 0.3),
        "remainder": xp.remainder(x, 0.3),
        "copysign": xp.copysign(x, y),
        "logaddexp": xp.logaddexp(x, y),
        "divide": x / (xp.abs(y) + 0.5),
        "floor_divide": xp.floor_divide(x, 0.25),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "ufunc", "bool"])
def comparisons(xp, rng):
    a = xp.asarray(rng.integers(0, 5, size=(6, 8)), dtype=xp.int32)
    b = xp.asarray(rng.integers(0, 5, size=(6, 8)), dtype=xp.int32)
    f = xp.asarray(rng.standard_normal((6, 8)))
    return {
        "less": a < b,
        "less_equal": a <= b,
        "equal": xp.equal(a, b),
        "not_equal": a != b,
        "greater_f": f > 0.0,
        "isclose": xp.isclose(f, f + 1e-9),
        "and": xp.logical_and(a > 1, b < 3),
        "or": (a == 0) | (b == 0),
        "xor": xp.logical_xor(a > 2, b > 2),
        "not": ~(a > b),
        "all_rows": xp.all(a < 5, axis=1),
        "any": xp.any(a > 3),  # numpy.bool, not bool
        "count": xp.count_nonzero(a == b, axis=0),
        "array_equal": bool(xp.array_equal(a, a.copy())),
    }


@parity.scenario(rtol=0.0, params={"dtype": ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]},
                 tags=["numpy", "ufunc", "integer"])
def integer_arithmetic(xp, rng, dtype):
    info = xp.iinfo(dtype)
    # The generator draws in the target dtype so that uint64 can reach its top half.
    a = xp.asarray(rng.integers(info.min, info.max, size=32, endpoint=True, dtype=dtype))
    b = xp.asarray(rng.integers(1, 100, size=32, dtype=dtype))  # positive: no division by zero
    shift = xp.asarray(rng.integers(0, info.bits, size=32, dtype=dtype))
    return {
        "a": a,
        "add": a + b,  # wraps around on overflow, as in C
        "subtract": a - b,
        "multiply": a * b,
        "floor_divide": a // b,
        "remainder": a % b,
        "and": a & b,
        "or": a | b,
        "xor": a ^ b,
        "invert": ~a,
        "left_shift": a << shift,
        "right_shift": a >> shift,
        "abs": xp.abs(a),  # abs(min) stays min for signed types
        "maximum": xp.maximum(a, b),
        "gcd": xp.gcd(a, b),
        "true_divide": a / b,  # float64
    }


@parity.scenario(rtol=1e-12, atol=0.0, tags=["numpy", "ufunc", "rounding"])
def rounding(xp, rng):
    x = xp.asarray(rng.uniform(-10.0, 10.0, size=40))
    halves = xp.arange(-5, 6, dtype=xp.float64) + 0.5
    return {
        "floor": xp.floor(x),
        "ceil": xp.ceil(x),
        "trunc": xp.trunc(x),
        "rint": xp.rint(x),
        "round_halves": xp.round(halves),  # half to even
        "round_2": xp.round(x, 2),
        "sign": xp.sign(x),
        "clip": xp.clip(x, -3.0, 4.5),
        "to_int": xp.trunc(x).astype(xp.int32),
        "modf": xp.modf(x),  # a tuple of two arrays
        "divmod": xp.divmod(x, 3.0),
    }
