"""joblib scenarios: Parallel(n_jobs=2, backend="loky") over arrays and memmaps, and dump/load round trips."""
import importlib
import os
import sys
import tempfile

import cloudpickle  # a joblib dependency; loky pickles callables with it
import joblib

import parity
from parity import xfails
import parity.joblib_tasks
from parity.joblib_tasks import describe, parallel

# Real NumPy, whatever `import numpy` would give this module: under a transparent proxy (fsproxy's install()) the
# functions below would carry the proxy module to the loky workers by value, and its package cannot be imported
# there. What the workers must see, and send back, is plain NumPy.
numpy = importlib.import_module("numpy")

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}

# Scenario modules are imported from a file under a name the loky workers cannot import, so this module's
# functions travel to them by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _col_means(a):
    return a.mean(axis=0)


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-12, atol=1e-12, params={"size": ["small", "memmapped"]},
                 tags=["joblib", "parallel"])
def map_over_chunks(xp, rng, size):
    # "memmapped" chunks exceed parity.joblib_tasks.MAX_NBYTES, so joblib hands the workers read-only memmaps
    # instead of pickles.
    rows = 40 if size == "small" else 200000
    a = xp.asarray(rng.standard_normal((rows, 3)))
    chunks = xp.array_split(a, 4)
    return {
        "sums": parallel(numpy.sum, chunks),
        "col_means": xp.stack(parallel(_col_means, chunks)),
        "total": float(xp.sum(a)),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=0.0, params={"layout": ["C", "F", "strided", ">f8"]},
                 tags=["joblib", "parallel", "layout", "byteorder"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}, when={"layout": ["F"]}))
def worker_sees_layout(xp, rng, layout):
    # Only the big array is memmapped (> parity.joblib_tasks.MAX_NBYTES); the small one is pickled. Both must keep
    # their layout.
    base = xp.asarray(rng.standard_normal((50000, 4)), order="F" if layout == "F" else "C")
    a = {"C": base, "F": base, "strided": base[::2, ::-1], ">f8": base.astype(">f8")}[layout]
    big, small = parallel(describe, [a, a[:6]])
    big["values"] = big["values"][:6]  # the head is enough to compare, and keeps result files small
    return {"big": big, "small": small}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=0.0, params={"order": ["C", "F"]}, tags=["joblib", "parallel", "memmap"])
def memmap_inputs(xp, rng, order):
    data = xp.asarray(rng.standard_normal((6, 4)), order=order)
    with tempfile.TemporaryDirectory(prefix="parity-joblib-") as tmp:
        mm = xp.memmap(os.path.join(tmp, "m.bin"), dtype=data.dtype, mode="w+", shape=data.shape, order=order)
        mm[...] = data
        mm.flush()
        seen = parallel(describe, [mm, mm[1:, ::2], mm.T])
    return {"whole": seen[0], "view": seen[1], "transposed": seen[2]}


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=0.0, params={"compress": [0, 3]},
                 tags=["joblib", "persistence", "byteorder", "layout"])
def dump_load_roundtrip(xp, rng, compress):
    # What joblib keeps of each array; it loads ">i4" as "<i4" (bug class 2), which the dtypes record.
    tree = {
        "C": xp.asarray(rng.standard_normal((5, 4))),
        "F": xp.asarray(rng.standard_normal((5, 4)), order="F"),
        "big_endian": xp.asarray(rng.integers(-9, 9, size=7), dtype=">i4"),
        "strided": xp.asarray(rng.standard_normal((6, 6)))[::2, ::-3],
        "records": xp.zeros(3, dtype=[("x", "<f4"), ("s", "U3")]),
        "scalar": xp.float32(1.5),
    }
    with tempfile.TemporaryDirectory(prefix="parity-joblib-") as tmp:
        path = os.path.join(tmp, "tree.joblib")
        joblib.dump({k: parity.joblib_tasks.transportable(v) for k, v in tree.items()}, path, compress=compress)
        loaded = joblib.load(path)
        mapped = joblib.load(path, mmap_mode="r") if compress == 0 else None
        out = {"loaded": loaded, "dtypes": {k: numpy.asarray(v).dtype.str for k, v in loaded.items()}}
        if mapped is not None:
            out["mapped_F"] = numpy.array(mapped["F"], order="K")
            out["mapped_type"] = type(mapped["F"]).__name__
    return out
