"""NumPy memmap scenarios: arrays written to a temporary file with np.memmap and read back as memmaps, views and copies."""
import tempfile

import parity
from parity import xfails

# The file is an unnamed temporary file (np.memmap records filename None for it), so no temporary path
# reaches the outputs and two runs write bitwise-identical result files. Returned memmaps stay valid
# after the file object is gone: the mapping keeps the data.


def _roundtrip(xp, data, order, offset=0):
    with tempfile.TemporaryFile() as f:
        written = xp.memmap(f, dtype=data.dtype, mode="w+", shape=data.shape, order=order, offset=offset)
        written[...] = data
        written.flush()
        del written
        return xp.memmap(f, dtype=data.dtype, mode="r", shape=data.shape, order=order, offset=offset)


@parity.scenario(rtol=0.0, params={"order": ["C", "F"], "dtype": ["float64", ">i4"]},
                 tags=["numpy", "memmap", "subclass", "layout"],
                 xfail=parity.xfail_on({"joblib": {"candidate": xfails.JOBLIB_FILELESS_MEMMAP}}))
def read_back(xp, rng, order, dtype):
    data = xp.asarray(rng.integers(-1000, 1000, size=(6, 5)), dtype=dtype)
    mm = _roundtrip(xp, data, order)
    return {"memmap": mm, "view": mm[1::2, ::-1], "copy": xp.array(mm), "equal": bool((mm == data).all())}


@parity.scenario(rtol=0.0, tags=["numpy", "memmap", "subclass"],
                 xfail=parity.xfail_on({"joblib": {"candidate": xfails.JOBLIB_FILELESS_MEMMAP}}))
def offset_and_reshape(xp, rng):
    data = xp.asarray(rng.standard_normal(15))
    mm = _roundtrip(xp, data, "C", offset=64)
    return {
        "flat": mm,
        "reshaped": mm.reshape(5, 3),
        "reshaped_T": mm.reshape(5, 3).T,
        "offset": int(mm.offset),
        "mode": mm.mode,
        "sum": float(mm.sum()),
    }


@parity.scenario(rtol=0.0, tags=["numpy", "memmap", "structured"],
                 xfail=parity.xfail_on({"joblib": {"candidate": xfails.JOBLIB_FILELESS_MEMMAP}}))
def structured_records(xp, rng):
    dtype = xp.dtype([("id", "<i4"), ("value", "<f8"), ("tag", "S4")])
    data = xp.zeros(4, dtype=dtype)
    data["id"] = xp.arange(4) * 10
    data["value"] = xp.asarray(rng.standard_normal(4))
    data["tag"] = [b"ab", b"cd", b"efgh", b""]
    mm = _roundtrip(xp, data, "C")
    return {"records": mm, "values": mm["value"], "ids": xp.asarray(mm["id"])}
