"""Reproducers of the five bug classes parity exists to catch (shared CONTEXT.md section 2), at triggering sizes."""
import os
import pickle
import tempfile

import numpy

import parity
from parity import xfails
from parity.joblib_tasks import describe, parallel

# joblib 1.6 (the pinned version) fixed bugs 2 and 4: gold runs them cleanly, and the outputs record what
# the workers saw (dtype with byte order, flags, strides, values) so a regression or a lossy transport shows.


@parity.scenario(rtol=0.0, policy={"type": "subclass-ok"}, tags=["known-bug", "joblib", "byteorder", "numpy"])
def joblib_big_endian_memmap(xp, rng):
    # Bug 2: joblib >= 1.3 lost the memmap file name converting a >f8 array above max_nbytes (4.8 MB here),
    # and the worker died with BrokenProcessPool. Pickle protocols 2/4 also turn >f8 into <f8 on load.
    a = xp.asarray(rng.standard_normal((200000, 3)), dtype=">f8")
    seen = parallel(describe, [a])[0]
    head = seen.pop("values")
    protocols = {f"protocol_{p}": pickle.loads(pickle.dumps(a[:4].view(numpy.ndarray), protocol=p)).dtype.str for p in (2, 4, 5)}
    return {"worker": seen, "head": head[:8], "column_sums": head.sum(axis=0), "input_sums": a.sum(axis=0),
            "pickled_dtypes": protocols}


@parity.scenario(rtol=0.0, params={"view": ["strided", "stacked"]}, tags=["known-bug", "layout", "views", "numpy"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout")}))
def non_contiguous_3d(xp, rng, view):
    # Bug 3: a torch.stack-ed, non-contiguous multi-dimensional output arrived with a sub-tensor zeroed by a
    # transport that assumed 1-D contiguous memory.
    big = xp.asarray(rng.standard_normal((8, 10, 12)), dtype=xp.float32)
    if view == "strided":
        out = big[1::2, ::-3, 2:11:2]
    else:
        out = xp.stack([big[0], big[3], big[5]], axis=1)[:, :, ::2]  # stacked along a middle axis, then stepped
    return {"output": out, "c": bool(out.flags.c_contiguous), "f": bool(out.flags.f_contiguous), "sum": float(out.sum())}


@parity.scenario(rtol=0.0, policy={"type": "subclass-ok"}, tags=["known-bug", "joblib", "memmap", "layout", "numpy"])
def joblib_reshaped_memmap(xp):
    # Bug 4: a memmap created 1-D and reshaped to (5, 3) reached joblib workers F-contiguous with strides
    # (8, 40) and wrong values, the order being taken from the 1-D base.
    with tempfile.TemporaryDirectory(prefix="parity-bug4-") as tmp:
        mm = xp.memmap(os.path.join(tmp, "flat.bin"), dtype=xp.float64, mode="w+", shape=(15,))
        mm[:] = xp.arange(15.0)
        mm.flush()
        seen = parallel(describe, [mm.reshape(5, 3)])[0]
    return {"worker": seen, "expected": xp.arange(15.0).reshape(5, 3)}


@parity.scenario(rtol=0.0, params={"kind": ["memmap", "masked"]}, policy={"type": "subclass-ok"},
                 tags=["known-bug", "subclass", "numpy"],
                 xfail=[parity.xfail_on({"joblib": {"candidate": xfails.JOBLIB_FILELESS_MEMMAP}}, when={"kind": ["memmap"]}),
                        parity.xfail_on({"joblib": xfails.joblib("attrs", "layout")}, when={"kind": ["masked"]})])
def subclass_with_attributes(xp, rng, kind):
    # Bug 1: unpickling runs __array_finalize__(self, None), so attributes a subclass derives from the array
    # it wraps were lost. np.memmap and np.ma.MaskedArray set theirs the same way, through views too. (A class
    # defined here could not be rebuilt by the compare step, which imports only NumPy's and the backends'
    # modules; a proxy candidate's own class is covered by its REQUIRED_ATTRS on every output.)
    data = xp.asarray(rng.standard_normal((6, 4)))
    if kind == "memmap":
        # An unnamed temporary file: the memmap's filename is None, so result files stay bitwise reproducible.
        a = xp.memmap(tempfile.TemporaryFile(), dtype=data.dtype, mode="w+", shape=data.shape, offset=16)
        a[...] = data
    else:
        a = xp.ma.array(data, mask=data > 0.7, fill_value=-7.5)
    return {"array": a, "view": a[::-2, 1:].T}


@parity.scenario(rtol=1e-12, atol=1e-12, policy={"type": "subclass-ok"}, tags=["known-bug", "vectorize", "numpy"])
def vectorized_results(xp, rng):
    # Bug 5: np.vectorize objects are not picklable; the results of calling them are ordinary arrays.
    clipped = xp.vectorize(lambda x, lo: x if x > lo else lo * 2.0, otypes=[float])
    pair = xp.vectorize(lambda x: (int(x * 10) % 3, x > 0), otypes=[int, bool])
    x = xp.asarray(rng.standard_normal((3, 4)))
    codes, signs = pair(x)
    return {"clipped": clipped(x, -0.5), "broadcast": clipped(x, xp.asarray([0.0, 0.1, 0.2, 0.3])),
            "codes": codes, "signs": signs, "signature": xp.vectorize(lambda r: r.sum(), signature="(n)->()")(x)}
