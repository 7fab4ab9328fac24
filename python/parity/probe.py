"""Fidelity digests and the pickle probe: checks on parity's own codec and on the candidate's pickling."""
from __future__ import annotations

import hashlib
import os
import pickle
import struct
import time
import types

import numpy as np

from parity import paths, reducers, trust
from parity._scenario import describe_exception

PROTOCOL = 5


# time.monotonic() past which the probes stop (compare --timeout, set per scenario by compare), or None.
_deadline = None


class DeadlineExceeded(Exception):
    """The scenario's compare ran past its time limit inside a probe; compare records the scenario as timeout."""


def set_deadline(seconds):
    """Starts the current scenario's time limit (None or 0: none)."""
    global _deadline
    _deadline = time.monotonic() + seconds if seconds else None


def remaining():
    """Seconds left of the current scenario's time limit (negative once past), or None when it has none."""
    return None if _deadline is None else _deadline - time.monotonic()


def _check_deadline():
    if _deadline is not None and time.monotonic() > _deadline:
        raise DeadlineExceeded("time limit reached in the fidelity or pickle probe")


def _children(obj, path):
    """The (path, child) pairs of a container, with the same paths the codec uses."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield paths.key_path(path, str(key)), value
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            yield paths.item_path(path, i), value
    elif _is_object_array(obj):
        for index in np.ndindex(obj.shape):
            yield path + paths.index_path(index), obj[index]


def _is_object_array(obj):
    return isinstance(obj, np.ndarray) and obj.dtype == object


def _state(obj):
    """What a reducer records beside an object (None for native values)."""
    if isinstance(obj, (dict, list, tuple, str, bytes, int, float, complex, type(None), np.generic)):
        return None
    if type(obj) is np.ndarray:
        return None
    reduced = reducers.reduce(obj)
    return None if reduced is None else reduced[1]


_BLOCK = 4 << 20  # bytes hashed at a time for a strided array, so a digest never copies a whole output


def _value_blocks(a: np.ndarray, repeated=None):
    """The element bytes in C order, in blocks: a contiguous array in place, a strided one ~4 MB at a time.
    x87 long double's unused bytes (uninitialized memory) are left out. Axes along which `a` repeats one element
    (or those of `repeated`, a tuple of flags per axis) are walked once."""
    plain = _distinct(a.view(np.ndarray), repeated)
    if plain.ndim == 0 or plain.size == 0 or plain.flags.c_contiguous:
        yield from _value_parts(np.ascontiguousarray(plain))
        return
    rows = max(1, _BLOCK // max(1, plain[0].nbytes))
    for start in range(0, plain.shape[0], rows):
        _check_deadline()
        yield from _value_parts(np.ascontiguousarray(plain[start:start + rows]))


def _repeated_axes(a: np.ndarray) -> tuple:
    """Per axis, whether `a` repeats one element along it (stride 0, as np.broadcast_to makes)."""
    return tuple(n > 1 and s == 0 for n, s in zip(a.shape, a.strides))


def _distinct(a: np.ndarray, repeated=None) -> np.ndarray:
    """`a` with each repeated axis cut to its first element: the strides in the digest say where the repeats are,
    and a broadcast of 10^12 elements over 8 bytes digests in a moment."""
    repeated = _repeated_axes(a) if repeated is None else repeated
    if a.size == 0 or not any(repeated):
        return a
    return a[tuple(slice(0, 1) if r else slice(None) for r in repeated)]


def _value_parts(block: np.ndarray):
    kind, size = block.dtype.kind, block.dtype.itemsize
    part = size // (2 if kind == "c" else 1)
    if kind in "fc" and part in (12, 16):
        yield np.frombuffer(block.tobytes(), np.uint8).reshape(-1, part)[:, :10].tobytes()
    elif block.size and size:
        yield block.reshape(-1).view(np.uint8)  # a contiguous block's bytes in place, whatever the dtype


def _value_bytes(a: np.ndarray) -> bytes:
    """All element bytes of a small array (a NumPy scalar's); large ones go through _value_blocks."""
    return b"".join(bytes(part) for part in _value_blocks(a))


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal element bytes, compared block by block (same dtype and shape, so the blocks line up)."""
    both = tuple(x and y for x, y in zip(_repeated_axes(a), _repeated_axes(b)))  # so that the blocks line up
    return all(bytes(x) == bytes(y) for x, y in zip(_value_blocks(a, both), _value_blocks(b, both)))


def _leaf_digest(obj, state=None) -> str:
    digest = hashlib.sha256()
    if isinstance(obj, np.ndarray):
        kind = f"{type(obj).__module__}.{type(obj).__qualname__}".encode()
        flags = (obj.flags.c_contiguous, obj.flags.f_contiguous, obj.flags.writeable, obj.flags.aligned)
        aspects = (obj.dtype.str, _dtype_description(obj.dtype), obj.shape, obj.strides, flags)
        digest.update(kind + b"|" + repr(aspects).encode() + b"|")
        for part in _value_blocks(obj):
            digest.update(part)
    else:
        digest.update(_leaf_description(obj, state))
    return digest.hexdigest()[:16]


def _dtype_description(dtype):
    """dtype.descr, or for a structured dtype it cannot describe (fields that overlap or are out of offset order:
    NumPy raises) the names, formats, offsets and itemsize that define it."""
    try:
        return dtype.descr
    except ValueError:
        fields = [(name, _dtype_description(dtype.fields[name][0]), dtype.fields[name][1]) for name in dtype.names]
        return {"fields": fields, "itemsize": dtype.itemsize}


def _leaf_description(obj, state=None) -> bytes:
    """A non-array leaf, exactly (arrays are digested in blocks by _leaf_digest); `state`: its reducer's."""
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}".encode()
    if isinstance(obj, np.generic):
        return kind + b"|" + np.asarray(obj).dtype.str.encode() + b"|" + _value_bytes(np.asarray(obj))
    if isinstance(obj, float):
        return kind + b"|" + struct.pack("<d", obj)
    if isinstance(obj, complex):
        return kind + b"|" + struct.pack("<dd", obj.real, obj.imag)
    if isinstance(obj, str):
        return kind + b"|" + obj.encode("utf-8", "surrogatepass")
    if isinstance(obj, int) and obj.bit_length() > 14000:  # past str()'s 4300 digits, which raises
        return kind + b"|" + hex(obj).encode()
    if isinstance(obj, _NATIVE):
        return kind + b"|" + repr(obj).encode()
    # Any other object is its type, plus (digested at their own paths) its reducer's state: never its repr, which
    # may show an address. The state's keys are part of it, so a rebuild that adds one is seen.
    return kind + b"|" + repr(sorted(state) if isinstance(state, dict) else type(state).__name__).encode()


_SHOWN = 80  # the longest value text fidelity records beside a digest


def _description(obj, state=None) -> str:
    """What a node is, short, for a fidelity failure's message: its type, and its value when that is short (an
    object with a reducer: the keys of its `state`). Never the repr of an opaque object."""
    kind = reducers.qualified_name(type(obj))
    if isinstance(obj, np.ndarray) and not _is_object_array(obj):
        text = f"{kind} {obj.dtype.str} shape {obj.shape}"
        values = np.array2string(obj.view(np.ndarray), threshold=8) if obj.size <= 8 else ""
        return f"{text} {values}" if values and len(values) <= _SHOWN else text
    if isinstance(obj, (str, bytes)) and len(obj) > _SHOWN:  # its repr is never made: it could be gigabytes
        return f"{kind} of length {len(obj)}"
    if isinstance(obj, int) and obj.bit_length() > 4 * _SHOWN:  # nor a huge int's (str() refuses past 4300 digits)
        return f"{kind} of {obj.bit_length()} bits"
    if isinstance(obj, _NATIVE):
        value = repr(obj)
        return f"{kind} {value}" if len(value) <= _SHOWN else kind
    if isinstance(obj, (dict, list, tuple)) or _is_object_array(obj):
        return f"{kind} of {len(obj)}"
    return f"{kind} with state {sorted(state)}" if isinstance(state, dict) else kind


def digests(obj, path="outputs", shown=None) -> dict:
    """{path: digest} for every leaf: type, dtype (byte order too), shape, strides, flags, values, state. An object
    with a reducer is digested as its type and its state's keys, and its state part by part at the state's paths.
    When `shown` is a dict, it receives {path: short description} (_description) for the failures' messages."""
    out = {}
    _digest_into(obj, path, out, 0, {}, shown)
    return out


def _digest_into(obj, path, out, depth, seen, shown=None):
    # An object met again (the codec writes it once and reads it back as one object) is not walked again:
    # its digest is the first one's, and a hostile file cannot make the walk exponential.
    if depth > 500:
        return
    _check_deadline()
    if id(obj) in seen:
        out[path] = out[seen[id(obj)][0]]
        return
    seen[id(obj)] = (path, obj)  # the object is kept alive so its id is not reused
    children = list(_children(obj, path))
    container = children or isinstance(obj, (dict, list, tuple)) or _is_object_array(obj)
    state = None if container else _state(obj)
    if shown is not None:
        text = _description(obj, state)
        if len(text) <= 2 * _SHOWN:
            shown[path] = text
    if container:
        head = repr(_array_aspects(obj)) if _is_object_array(obj) else f"{type(obj).__module__}.{type(obj).__qualname__}"
        out[path] = hashlib.sha256(f"{head}:{len(children)}".encode()).hexdigest()[:16]
        for child_path, child in children:
            _digest_into(child, child_path, out, depth + 1, seen, shown)
        return
    out[path] = _leaf_digest(obj, state)
    if isinstance(state, dict):
        for name, value in state.items():
            _digest_into(value, paths.state_path(path, name), out, depth + 1, seen, shown)
    elif state is not None:
        _digest_into(state, paths.state_path(path, "state"), out, depth + 1, seen, shown)


def _unpicklable_path(obj, path, depth=0):
    """The deepest path inside `obj` that pickle refuses (the place to fix)."""
    for child_path, child in _children(obj, path):
        try:
            pickle.dumps(child, protocol=PROTOCOL)
        except Exception:  # noqa: BLE001 - any pickling failure is what we are locating
            return _unpicklable_path(child, child_path, depth + 1) if depth < 500 else child_path
    return path


def pickle_outputs(obj, file: str):
    """Pickles the outputs into `file` the way the ecosystem would (streamed: large arrays go from their
    buffers to the file); returns None, or the error with the path of the output that refused. The file
    appears whole or not at all, and ends with the MAC compare verifies before unpickling it (parity.trust)."""
    temp = f"{file}.tmp-{os.getpid()}"
    try:
        digest = trust.mac(trust.key(create=True))
    except (trust.NoKey, OSError):  # no usable key: the pickle goes unsigned and compare skips its probe, saying why
        digest = None
    try:
        with open(temp, "wb") as out:
            pickle.dump(obj, out if digest is None else trust.MacWriter(out, digest), protocol=PROTOCOL)
            if digest is not None:
                out.write(trust.trailer(digest))
        os.replace(temp, file)
        return None
    except Exception as exc:  # noqa: BLE001 - a pickling failure is a finding, not a crash
        error = describe_exception(exc)
        error["path"] = _unpicklable_path(obj, "outputs")
        return error
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


def unpickle(blob: bytes):
    """(obj, None, None); (None, error, None) when unpickling raises (as the cuDF proxy did); or (None, None, why
    not) when the blob's MAC does not verify with the user's key: it is then never unpickled (it could run code)."""
    payload, untrusted = trust.verified_payload(blob)
    if payload is None:
        return None, None, untrusted
    try:
        return pickle.loads(payload), None, None
    except Exception as exc:  # noqa: BLE001
        return None, describe_exception(exc), None


def _array_aspects(a):
    return {
        "type": f"{type(a).__module__}.{type(a).__qualname__}",
        "dtype": a.dtype.str if a.dtype.names is None else repr(_dtype_description(a.dtype)),
        "shape": a.shape,
        "strides": a.strides,
        "layout": ("C" if a.flags.c_contiguous else "") + ("F" if a.flags.f_contiguous else ""),
        "writeable": a.flags.writeable,
    }


def _numpy_losses(a) -> set:
    """The aspects plain NumPy's own pickle loses for an array like `a` (strides of a view, for one): a
    candidate is not blamed for those, wherever in its outputs the array sits."""
    plain = a.view(np.ndarray)
    before, after = _array_aspects(plain), _array_aspects(pickle.loads(pickle.dumps(plain, protocol=PROTOCOL)))
    return {k for k in before if before[k] != after[k]}


def _attributes(obj):
    """What a round trip must keep beside an array's values: the state its registered reducer records (what parity
    itself carries for the type: a mask, a fill value, a file), else its instance __dict__ (where a generic
    subclass keeps `_fsproxy_wrapped`). Not the whole __dict__ of a type with a reducer: numpy.ma's private
    bookkeeping (_baseclass, _optinfo, _sharedmask) is neither carried by parity nor part of the value."""
    reducer = reducers.registered_like(type(obj))
    if reducer is not None and reducer.is_array:
        try:
            state = reducer.reduce(obj)
        except Exception:  # noqa: BLE001 - an unpickled object its reducer cannot read: compare what it holds
            state = None
        if isinstance(state, dict):
            return state
    try:
        return dict(vars(obj))
    except TypeError:
        return {}


# Compared by name, never walked: two classes (a MaskedArray's _baseclass), functions or modules are the same
# when they are the same named thing, and their namespaces say nothing about an output.
_NAMED = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType)
# Values the codec writes natively: compared exactly, by _leaf_description.
_NATIVE = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _qualified(obj) -> str:
    module = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return f"{module}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"


def _loss(path, aspect, faithful, unpickled) -> dict:
    return {"path": path, "aspect": aspect, "faithful": faithful, "unpickled": unpickled}


def losses(faithful, unpickled, path="outputs", depth=0, seen=None):
    """What the pickle round trip lost beyond what plain NumPy's pickle loses for the same arrays, as
    [{path, aspect, faithful, unpickled}]. compare also discounts whatever gold loses at the same path.
    An object with a registered reducer is compared by its reducer's state, part by part at the state's paths; one
    without (a weakref, a lock, an engine handle) only by its type's qualified name, so that no address or id
    reaches a report. Two types of one qualified name are the same type (pint makes a Quantity class per registry)."""
    seen = {} if seen is None else seen
    key = (id(faithful), id(unpickled))
    if depth > 500 or key in seen:  # a shared pair is judged where it first appears
        return []
    seen[key] = (faithful, unpickled)
    if isinstance(faithful, _NAMED) and isinstance(unpickled, _NAMED):
        same = _qualified(faithful) == _qualified(unpickled)
        return [] if same else [_loss(path, "values", _qualified(faithful), _qualified(unpickled))]
    ftype, utype = reducers.qualified_name(type(faithful)), reducers.qualified_name(type(unpickled))
    if ftype != utype:  # the bare names: declared differences match them (fixtures/memmap.py)
        return [_loss(path, "type", ftype, utype)]
    if isinstance(faithful, (dict, list, tuple)):
        return _container_losses(faithful, unpickled, path, depth, seen)
    if isinstance(faithful, np.ndarray):
        return _array_losses(faithful, unpickled, path, depth, seen)
    if isinstance(faithful, _NATIVE):
        if _leaf_description(faithful) == _leaf_description(unpickled):
            return []
        return [_loss(path, "values", repr(faithful)[:200], repr(unpickled)[:200])]
    reducer = reducers.registered_like(type(faithful))
    return [] if reducer is None else _state_losses(reducer, faithful, unpickled, path, depth, seen)


def _container_losses(faithful, unpickled, path, depth, seen):
    # keys(), not iteration: a dict subclass may iterate otherwise (scipy's dok matrix iterates its rows).
    if len(faithful) != len(unpickled) or (isinstance(faithful, dict) and list(faithful.keys()) != list(unpickled.keys())):
        return [_loss(path, "structure", repr(len(faithful)), repr(len(unpickled)))]
    found = []
    for (child_path, f), (_, u) in zip(_children(faithful, path), _children(unpickled, path)):
        found += losses(f, u, child_path, depth + 1, seen)
    return found


def _array_losses(faithful, unpickled, path, depth, seen):
    fa, ua = _array_aspects(faithful), _array_aspects(unpickled)
    # What NumPy's own pickle loses costs a pickle round trip to find out: only asked when something differs.
    differing = [k for k in fa if fa[k] != ua[k]]
    inherent = _numpy_losses(faithful) if differing else set()
    found = [_loss(path, k, repr(fa[k]), repr(ua[k])) for k in differing if k not in inherent]
    if _is_object_array(faithful) and faithful.shape == unpickled.shape and _is_object_array(unpickled):
        for (child_path, f), (_, u) in zip(_children(faithful, path), _children(unpickled, path)):
            found += losses(f, u, child_path, depth + 1, seen)
    # Same dtype and shape: the element bytes must match exactly (NaN payloads and NaT included).
    elif faithful.shape == unpickled.shape and faithful.dtype == unpickled.dtype:
        if not _same_values(faithful, unpickled):
            found.append(_loss(path, "values", "as written", "different"))
    return found + _dict_losses(_attributes(faithful), _attributes(unpickled), path, depth, seen)


def _dict_losses(fstate: dict, ustate: dict, path, depth, seen):
    """The parts of a dict state (an array's attributes, a reducer's state) lost or changed, at their state paths."""
    found = []
    for name, value in fstate.items():
        part = paths.state_path(path, str(name))
        if name not in ustate:
            found.append(_loss(part, "attribute", "present", "missing"))
        else:
            found += losses(value, ustate[name], part, depth + 1, seen)
    return found


def _state_losses(reducer, faithful, unpickled, path, depth, seen):
    """An object that is no array, judged by the state its reducer records for each side."""
    try:
        fstate = reducer.reduce(faithful)
    except Exception as exc:  # noqa: BLE001 - parity's rebuild of the output itself cannot be read: say so
        return [_loss(path, "state", f"its reducer raises {type(exc).__name__}: {exc}"[:200], "not compared")]
    try:
        ustate = reducer.reduce(unpickled)
    except Exception as exc:  # noqa: BLE001 - the unpickled object lacks what the state is made of
        return [_loss(path, "state", "reducible", f"its reducer raises {type(exc).__name__}: {exc}"[:200])]
    if isinstance(fstate, dict) and isinstance(ustate, dict):
        return _dict_losses(fstate, ustate, path, depth, seen)
    return losses(fstate, ustate, paths.state_path(path, "state"), depth + 1, seen)


def missing_attributes(obj, required: dict, path="outputs") -> list:
    """[{path, type, attribute}] for every output whose type the backend's REQUIRED_ATTRS names and that lacks
    one of the attributes listed for it (checked on outputs rebuilt in the compare process)."""
    found = []
    seen = set()

    def visit(node, node_path, depth):
        if depth > 500 or id(node) in seen:
            return
        seen.add(id(node))
        type_name = reducers.qualified_name(type(node))
        found.extend({"path": node_path, "type": type_name, "attribute": name}
                     for name in required.get(type_name, ()) if not hasattr(node, name))
        for child_path, child in _children(node, node_path):
            visit(child, child_path, depth + 1)

    visit(obj, path, 0)
    return found
