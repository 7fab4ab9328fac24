"""Output tree scenarios: nested dicts, lists and tuples, NumPy scalars and plain Python values."""
import parity


@parity.scenario(rtol=1e-12, atol=0.0, tags=["numpy", "containers", "nested"])
def nested(xp, rng):
    a = xp.asarray(rng.standard_normal((3, 3)))
    w = xp.linalg.eigvalsh(a + a.T)
    return {
        "levels": [
            (a, {"inner": [a[0], (a.T, None)], "label": "first"}),
            (w, {"inner": [], "label": "second"}),
        ],
        "tuple_of_lists": ([1, 2.5, 3 + 4j], [True, None, b"\x00raw\xff"]),
        "deep": {"a": {"b": {"c": {"d": [xp.arange(3, dtype=xp.uint8)]}}}},
        "mixed_list": [a.sum(), float(a.sum()), "text", xp.asarray([1, 2], dtype=xp.int16)],
    }


@parity.scenario(rtol=1e-6, atol=0.0, tags=["numpy", "containers", "scalars"])
def numpy_scalars(xp, rng):
    a = xp.asarray(rng.standard_normal((4, 4)), dtype=xp.float32)
    i = xp.asarray(rng.integers(0, 1000, size=8), dtype=xp.uint32)
    return {
        "float16": xp.float16(0.1),
        "float32": xp.float32(1.5),
        "float64": xp.float64(-2.75),
        "int8": xp.int8(-128),
        "uint8": xp.uint8(255),
        "int64": xp.int64(-(2**63)),
        "uint64": xp.uint64(2**64 - 1),
        "complex64": xp.complex64(1 + 2j),
        "complex128": xp.complex128(-0.5 + 1e-300j),
        "bool": xp.bool_(True),
        "sum_f32": xp.sum(a),  # a float32 scalar, not a 0-d array
        "max_u32": i.max(),
        "argmax": xp.argmax(i),
        "element": a[1, 2],
        "any": xp.any(i > 999),
        "str": xp.str_("numpy string"),
        "bytes": xp.bytes_(b"numpy bytes"),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "containers", "scalars", "python"])
def python_scalars(xp, rng):
    a = xp.asarray(rng.integers(0, 50, size=(3, 4)), dtype=xp.int64)
    return {
        "int": int(a.sum()),
        "negative_int": -(2**62),
        "float": float(a.mean()),
        "item": a[0, 0].item(),
        "tolist": a[:2].tolist(),  # nested lists of Python ints
        "complex": complex(3, -4),
        "bool": bool(a.all()),
        "str": "σ unicode ✓",
        "bytes": b"\x00\x01binary",
        "none": None,
        "shape": a.shape,
        "ndim": a.ndim,
        "size": len(a),
        "dtype_name": str(a.dtype),
    }
