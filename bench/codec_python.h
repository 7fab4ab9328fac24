// The Python side of parity_codec_bench: its cases, the competing methods, touching the data, round-trip checks.
#pragma once

namespace parity::bench {

// Plain Python calls, so that each method runs exactly as a user of that library would call it. The benchmark's
// parent process and every read process (--read-child) run the same code, so a read process rebuilds the original
// of a case from its id and size alone (every case is seeded) to check the round trip.
inline constexpr const char* kCodecPython = R"PY(
import gc, pickle, sys
import numpy as np
import numpy.ma
import joblib

COLS = 1000  # case b: a (rows, 2 * COLS) base viewed as [:, ::2]
LEAVES_PER_KEY = 100  # case e: a dict of lists and tuples of this many leaves

def make_case(case, n, leaves):
    rng = np.random.default_rng(12345)
    if case == "a":
        return rng.random(n)
    if case == "b":
        return rng.random((n // COLS, 2 * COLS))[:, ::2]
    if case == "c":
        return rng.random(n).astype(">f8")
    if case == "e":
        return make_nested(rng, leaves)
    data = rng.random(n // 8)
    return np.ma.MaskedArray(data, mask=data < 0.25)

def make_nested(rng, leaves):
    # What a scenario typically returns, many times over: per key a list (even keys) or a tuple (odd keys) of
    # small arrays of a few to a few dozen elements in several layouts, NumPy scalars and Python values.
    # The random numbers are drawn in bulk (one call per leaf would take seconds); every array is its own copy.
    sizes = rng.integers(3, 40, leaves)
    floats = rng.random(2 * int(sizes.sum()) + leaves)
    ints = rng.integers(-10**6, 10**6, leaves)
    out, used = {}, 0
    for k in range(0, leaves, LEAVES_PER_KEY):
        items = []
        for i in range(k, min(k + LEAVES_PER_KEY, leaves)):
            m = int(sizes[i])
            items.append(nested_leaf(i, m, floats[used:used + 2 * m], int(ints[i])))
            used += 2 * m
        out[f"k{k // LEAVES_PER_KEY:04d}"] = items if (k // LEAVES_PER_KEY) % 2 == 0 else tuple(items)
    return out

def nested_leaf(i, m, floats, integer):
    kind = i % 10
    rows = m // 4 + 1
    if kind == 0:
        return floats[:m].copy()
    if kind == 1:
        return (floats[:m] * 2000 - 1000).astype(np.int32)
    if kind == 2:
        return floats[:4 * rows].reshape(rows, 4).copy()
    if kind == 3:
        return floats[:4 * rows].reshape(4, rows).copy(order="F")
    if kind == 4:
        return floats[:2 * m].copy()[::2]  # non-contiguous: every other element of a base twice its size
    if kind == 5:
        return np.float64(floats[0])
    if kind == 6:
        return np.int32(integer % 1000)
    if kind == 7:
        return float(floats[0])
    if kind == 8:
        return integer
    return f"label-{i}" if i % 20 == 9 else None

def leaves_of(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from leaves_of(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from leaves_of(v)
    else:
        yield x

def array_footprint(x):
    # Bytes of memory behind an array: the whole base of a view (what parity writes for case b), plus a mask.
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    mask = np.ma.getmask(x)
    return max(x.nbytes, base.nbytes) + (mask.nbytes if mask is not np.ma.nomask else 0)

ARRAY_HEADER = sys.getsizeof(np.empty(8)[:])  # the object of an array that does not own its data

def footprint(x):
    # What a copy of x takes, which sizes the warming of free memory: arrays and every leaf's object.
    return sum(array_footprint(v) + ARRAY_HEADER if isinstance(v, np.ndarray) else sys.getsizeof(v)
               for v in leaves_of(x))

def data_bytes(x):
    return sum(v.nbytes for v in leaves_of(x) if isinstance(v, np.ndarray))

def describe_array(x):
    kind = type(x).__module__ + "." + type(x).__qualname__
    extra = f", mask {x.mask.dtype} {x.mask.nbytes / 1e6:.1f} MB" if isinstance(x, np.ma.MaskedArray) else ""
    return (f"{kind} {x.dtype.str} shape {x.shape} strides {x.strides} "
            f"C-contiguous {x.flags.c_contiguous}, {x.nbytes / 1e6:.1f} MB of data{extra}")

def describe(x):
    if isinstance(x, np.ndarray):
        return describe_array(x)
    leaves = list(leaves_of(x))
    arrays = [v for v in leaves if isinstance(v, np.ndarray)]
    scalars = sum(isinstance(v, np.generic) for v in leaves)
    return (f"dict of {len(x)} lists and tuples, {len(leaves)} leaves: {len(arrays)} arrays of 3-40 elements "
            f"(float64 and int32; 1-D, 2-D C and F order, strided; {data_bytes(x) / 1e6:.1f} MB), "
            f"{scalars} NumPy scalars, {len(leaves) - len(arrays) - scalars} Python float/int/str/None")

def np_save(path, x):
    np.save(path, x)

def np_save_object(path, x):
    # What np.save offers for a structure: a 0-d object array, pickled inside the .npy file.
    wrapped = np.empty((), dtype=object)
    wrapped[()] = x
    np.save(path, wrapped, allow_pickle=True)

def pickle_dump(path, x):
    with open(path, "wb") as f:
        pickle.dump(x, f, protocol=5)

def joblib_dump(path, x):
    joblib.dump(x, path)

def np_load(path):
    return np.load(path)

def np_load_mmap(path):
    return np.load(path, mmap_mode="r")

def np_load_object(path):
    return np.load(path, allow_pickle=True)[()]

def pickle_load(path):
    with open(path, "rb") as f:
        return pickle.load(f)

def joblib_load(path):
    return joblib.load(path)

def joblib_load_mmap(path):
    return joblib.load(path, mmap_mode="r")

def touch(x):
    # np.asarray drops the subclass (MaskedArray, memmap), so this reads every data element exactly once
    # whatever the method returned; a masked array's mask is read too. Containers are walked to every array.
    total = 0.0
    for v in leaves_of(x):
        if isinstance(v, np.ndarray):
            total += float(np.asarray(v).sum())
        if isinstance(v, np.ma.MaskedArray):
            total += int(np.count_nonzero(np.ma.getmaskarray(v)))
    return total

def check_array(orig, got, path, notes):
    if type(got) is not type(orig):
        if isinstance(got, np.memmap) and type(orig) is np.ndarray:
            notes["np.memmap"] = notes.get("np.memmap", 0) + 1
        else:
            return f"{path}: type {type(got).__name__}"
    if got.dtype != orig.dtype:
        return f"{path}: dtype {got.dtype.str}"
    if got.shape != orig.shape:
        return f"{path}: shape {got.shape}"
    if not np.array_equal(np.asarray(orig), np.asarray(got)):
        return f"{path}: values differ"
    if isinstance(orig, np.ma.MaskedArray) and not np.array_equal(np.ma.getmaskarray(orig),
                                                                   np.ma.getmaskarray(got)):
        return f"{path}: mask differs"
    if got.strides != orig.strides:
        notes["strides not kept"] = notes.get("strides not kept", 0) + 1
    return ""

def check_items(orig, got, path, notes):
    if isinstance(orig, dict):
        if list(got) != list(orig):
            return f"{path}: keys differ"
        pairs = [(orig[k], got[k], f"{path}[{k!r}]") for k in orig]
    else:
        if len(got) != len(orig):
            return f"{path}: length {len(got)}"
        pairs = [(o, g, f"{path}[{i}]") for i, (o, g) in enumerate(zip(orig, got))]
    for o, g, p in pairs:
        bad = check_value(o, g, p, notes)
        if bad:
            return bad
    return ""

def check_value(orig, got, path, notes):
    if isinstance(orig, np.ndarray):
        return check_array(orig, got, path, notes)
    if type(got) is not type(orig):
        return f"{path}: type {type(got).__name__}, not {type(orig).__name__}"
    if isinstance(orig, (dict, list, tuple)):
        return check_items(orig, got, path, notes)
    if isinstance(orig, np.generic) and got.dtype != orig.dtype:
        return f"{path}: dtype {got.dtype.str}"
    return "" if got == orig else f"{path}: {got!r}, not {orig!r}"

def check(orig, got):
    # Values, dtype (byte order included), shape, type and mask; strides and np.memmap are noted, not faults.
    notes = {}
    bad = check_value(orig, got, "x", notes)
    if bad:
        return "BAD: " + bad
    arrays = sum(isinstance(v, np.ndarray) for v in leaves_of(orig))
    said = [k if arrays == 1 else f"{k} in {n} of {arrays} arrays" for k, n in notes.items()]
    return "ok" + (f" ({', '.join(said)})" if said else "")

def collect():
    gc.collect()
)PY";

}  // namespace parity::bench
