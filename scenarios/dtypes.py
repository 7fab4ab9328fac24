"""Numeric dtype scenarios: every integer width, bool, float16/32/64, complex64/128, casts and type promotion."""
import parity
from parity import xfails


@parity.scenario(rtol=0.0, params={"dtype": ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]},
                 tags=["numpy", "dtype", "integer"])
def integer_types(xp, rng, dtype):
    info = xp.iinfo(dtype)
    a = xp.asarray(rng.integers(0, 100, size=(3, 4)), dtype=dtype)
    return {
        "arange": xp.arange(10, dtype=dtype),
        "limits": xp.asarray([info.min, info.max], dtype=dtype),
        "limit_scalars": (info.min, info.max, info.bits),  # Python ints
        "wrapped_cast": xp.arange(-3, 3, dtype=xp.int64).astype(dtype),  # modulo 2**bits for unsigned
        "full": xp.full((2, 2), info.max, dtype=dtype),
        "from_float": xp.asarray([0.9, 1.5, 99.99]).astype(dtype),  # truncation toward zero
        "to_float32": a.astype(xp.float32),
        "to_bool": (a % 3).astype(bool),
        "view_f": xp.asfortranarray(a),
        "max_scalar": a.max(),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "dtype", "bool"])
def bool_arrays(xp, rng):
    a = xp.asarray(rng.integers(0, 2, size=(5, 6)), dtype=bool)
    return {
        "a": a,
        "not": ~a,
        "and_column": a & a[:, :1],
        "sum_is_int": a.sum(axis=0),
        "plus_is_or": a + a,  # stays bool
        "as_int8": a.astype(xp.int8),
        "from_ints": xp.asarray([0, 2, -1], dtype=xp.int64).astype(bool),
        "ones": xp.ones(3, dtype=xp.bool_),
    }


@parity.scenario(rtol=1e-3, atol=1e-3, tags=["numpy", "dtype", "float16", "float32"])
def small_floats(xp, rng):
    x = xp.asarray(rng.uniform(-8.0, 8.0, size=24))
    with xp.errstate(over="ignore"):
        overflowed = xp.asarray([65504.0, 70000.0, -1e6]).astype(xp.float16)  # the last two become +-inf
    h = x.astype(xp.float16)
    s = x.astype(xp.float32)
    return {
        "half": h,
        "half_tenth": xp.asarray(0.1, dtype=xp.float16),
        "half_sum": h + h[::-1],
        "half_product": h * xp.float16(0.5),
        "half_exp": xp.exp(h / 4),
        "half_overflow": overflowed,
        "half_to_single": h.astype(xp.float32),
        "single": s,
        "single_linspace": xp.linspace(0, 1, 7, dtype=xp.float32),
        "single_sqrt": xp.sqrt(xp.abs(s)),
        "eps": (xp.finfo(xp.float16).eps, xp.finfo(xp.float32).eps, xp.finfo(xp.float64).eps),
    }


@parity.scenario(rtol=1e-5, atol=1e-6, params={"dtype": ["complex64", "complex128"]}, tags=["numpy", "dtype", "complex"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def complex_types(xp, rng, dtype):
    z = xp.asarray(rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5)), dtype=dtype)
    return {
        "z": z,
        "real": z.real,  # a strided view into the interleaved storage
        "imag": z.imag,
        "conj": xp.conj(z),
        "abs": xp.abs(z),  # float32 for complex64
        "angle": xp.angle(z),
        "product": z * z[::-1],
        "quotient": z / (z + 3),
        "exp": xp.exp(z / 4),
        "sqrt": xp.sqrt(z),
        "from_real": xp.asarray([1.0, -2.0]).astype(dtype),
        "sum": z.sum(),
        "scalar": z[0, 0],
    }


@parity.scenario(rtol=1e-6, atol=0.0, tags=["numpy", "dtype", "promotion"])
def promotion(xp, rng):
    i8 = xp.asarray([-3, 7], dtype=xp.int8)
    u8 = xp.asarray([200, 5], dtype=xp.uint8)
    i64 = xp.asarray([-1, 2], dtype=xp.int64)
    u64 = xp.asarray([2**63, 1], dtype=xp.uint64)
    f16 = xp.asarray([0.5, 1.25], dtype=xp.float16)
    f32 = xp.asarray([1.5, -2.5], dtype=xp.float32)
    c64 = xp.asarray([1j, 2.0], dtype=xp.complex64)
    return {
        "int8_uint8": i8 + u8,  # int16
        "int64_uint64": i64 + u64,  # float64
        "int32_float32": xp.asarray([1, 2], dtype=xp.int32) * f32,  # float64
        "float16_float32": f16 + f32,  # float32
        "int8_python_int": i8 * 3,  # Python ints are weak: stays int8 (NEP 50)
        "float32_python_float": f32 * 0.1,  # stays float32
        "float32_float64_scalar": f32 * xp.float64(0.1),  # float64: NumPy scalars are strong
        "complex64_float64": c64 + xp.asarray([1.0, 2.0]),  # complex128
        "bool_int8": xp.asarray([True, False]) + i8,
        "result_type": str(xp.result_type(xp.int16, xp.uint16)),
        "promote_types": str(xp.promote_types("f2", "i2")),
        "can_cast": bool(xp.can_cast(xp.int64, xp.float64, "safe")),
    }
