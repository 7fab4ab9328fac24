// The Python side of parity_codec_bench: its cases, the competing methods, touching the data, round-trip checks.
#pragma once

namespace parity::bench {

// Plain Python calls, so that each method runs exactly as a user of that library would call it. The benchmark's
// parent process and every read process (--read-child) run the same code, so a read process rebuilds the original
// of a case from its id and size alone (every case is seeded) to check the round trip.
inline constexpr const char* kCodecPython = R"PY(
import gc, pickle
import numpy as np
import numpy.ma
import joblib

COLS = 1000  # case b: a (rows, 2 * COLS) base viewed as [:, ::2]

def make_case(case, n):
    rng = np.random.default_rng(12345)
    if case == "a":
        return rng.random(n)
    if case == "b":
        return rng.random((n // COLS, 2 * COLS))[:, ::2]
    if case == "c":
        return rng.random(n).astype(">f8")
    data = rng.random(n // 8)
    return np.ma.MaskedArray(data, mask=data < 0.25)

def footprint(x):
    # Bytes of memory behind x: the whole base of a view (what parity writes for case b), plus a mask.
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    mask = np.ma.getmask(x)
    return max(x.nbytes, base.nbytes) + (mask.nbytes if mask is not np.ma.nomask else 0)

def describe(x):
    kind = type(x).__module__ + "." + type(x).__qualname__
    extra = f", mask {x.mask.dtype} {x.mask.nbytes / 1e6:.1f} MB" if isinstance(x, np.ma.MaskedArray) else ""
    return (f"{kind} {x.dtype.str} shape {x.shape} strides {x.strides} "
            f"C-contiguous {x.flags.c_contiguous}, {x.nbytes / 1e6:.1f} MB of data{extra}")

def np_save(path, x):
    np.save(path, x)

def pickle_dump(path, x):
    with open(path, "wb") as f:
        pickle.dump(x, f, protocol=5)

def joblib_dump(path, x):
    joblib.dump(x, path)

def np_load(path):
    return np.load(path)

def np_load_mmap(path):
    return np.load(path, mmap_mode="r")

def pickle_load(path):
    with open(path, "rb") as f:
        return pickle.load(f)

def joblib_load_mmap(path):
    return joblib.load(path, mmap_mode="r")

def touch(x):
    # np.asarray drops the subclass (MaskedArray, memmap), so this reads every data element exactly once
    # whatever the method returned; a masked array's mask is read too.
    total = float(np.asarray(x).sum())
    if isinstance(x, np.ma.MaskedArray):
        total += int(np.count_nonzero(np.ma.getmaskarray(x)))
    return total

def check(orig, got):
    notes = []
    if type(got) is not type(orig):
        if isinstance(got, np.memmap) and type(orig) is np.ndarray:
            notes.append("np.memmap")
        else:
            return f"BAD: type {type(got).__name__}"
    if got.dtype != orig.dtype:
        return f"BAD: dtype {got.dtype.str}"
    if got.shape != orig.shape:
        return f"BAD: shape {got.shape}"
    if not np.array_equal(np.asarray(orig), np.asarray(got)):
        return "BAD: values differ"
    if isinstance(orig, np.ma.MaskedArray) and not np.array_equal(np.ma.getmaskarray(orig),
                                                                   np.ma.getmaskarray(got)):
        return "BAD: mask differs"
    if got.strides != orig.strides:
        notes.append("strides not kept")
    return "ok" + (f" ({', '.join(notes)})" if notes else "")

def collect():
    gc.collect()
)PY";

}  // namespace parity::bench
