"""Byte-order scenarios: big-endian arrays as outputs and as inputs mixed with native ones."""
import parity
from parity import xfails

MASKED_MATMUL = {"masked": {"candidate": xfails.MASKED_MATMUL}}  # numpy.ma only (see parity.xfail_on)


# Bare type codes keep '>' out of scenario ids (test names, shell patterns).
@parity.scenario(rtol=0.0, params={"code": ["f8", "f4", "i4", "i8", "u2", "c16"]}, tags=["numpy", "byteorder"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("dtype", "layout")}))
def big_endian_arrays(xp, rng, code):
    dtype = xp.dtype(">" + code)
    a = xp.asarray(rng.integers(0, 1000, size=(4, 6)), dtype=xp.int64)
    if dtype.kind == "c":
        a = a + 1j * xp.asarray(rng.integers(-9, 9, size=(4, 6)), dtype=xp.int64)
    a = a.astype(dtype)  # last, since arithmetic would give native results
    native = a.dtype.newbyteorder("=")
    return {
        "big": a,
        "big_f": xp.asfortranarray(a),
        "big_view": a[::-1, 1::2],
        "big_zeros": xp.zeros((2, 3), dtype=dtype),
        "to_native": a.astype(native),
        # The usual idiom for native order without a cast: swap the bytes, then relabel the dtype.
        "swapped_view": a.byteswap().view(native),
        "sum_axis0": a.sum(axis=0),
        "doubled": a * 2,  # ufunc outputs are native
        "equal_native": a == a.astype(native),
    }


@parity.scenario(rtol=1e-12, atol=1e-12, tags=["numpy", "byteorder", "mixed"],
                 xfail=parity.xfail_on({**MASKED_MATMUL, "joblib": xfails.joblib("dtype")}))
def mixed_byte_orders(xp, rng):
    big = xp.asarray(rng.standard_normal((5, 4)), dtype=">f8")
    little = xp.asarray(rng.standard_normal((5, 4)), dtype="<f8")
    big_i = xp.asarray(rng.integers(-100, 100, size=(5, 4)), dtype=">i4")
    little_i = xp.asarray(rng.integers(-100, 100, size=(5, 4)), dtype="<i2")
    return {
        "sum": big + little,
        "product": big_i * little_i,
        "less": big < little,
        "where": xp.where(big_i > 0, big, little),
        "concatenated": xp.concatenate([big, little]),
        "stacked_ints": xp.stack([big_i, big_i.astype("<i4")]),
        "matmul": big @ little.T,
        "exp": xp.exp(big),
        "by_dtype": [
            xp.arange(4, dtype=">i8"),
            xp.asarray([1.5, -2.25], dtype=">f2"),
            xp.asarray([1 + 2j, -3.5j], dtype=">c8"),
            xp.asarray(["ab", "żółw"], dtype=">U4"),
            xp.asarray(["2024-02-29", "NaT"], dtype=">M8[D]"),
            xp.asarray([5, -7], dtype=">m8[s]"),
        ],
        "from_network_bytes": xp.frombuffer(b"\x00\x00\x01\x02\xff\xff\xff\xfe", dtype=">i4"),
    }


@parity.scenario(rtol=1e-10, atol=1e-12, tags=["numpy", "byteorder", "linalg"])
def big_endian_linalg(xp, rng):
    a = xp.asarray(rng.standard_normal((12, 12)) + 12 * xp.eye(12), dtype=">f8")
    b = xp.asarray(rng.standard_normal(12), dtype=">f8")
    return {
        "solve": xp.linalg.solve(a, b),
        "inv": xp.linalg.inv(a),
        "det": xp.linalg.det(a),
        "norm": float(xp.linalg.norm(a)),
        "rfft": xp.fft.rfft(b),
    }
