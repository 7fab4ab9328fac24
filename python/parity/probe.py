"""Fidelity digests and the pickle probe: checks on parity's own codec and on the candidate's pickling."""
from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import struct
import sys
import time
import types

import numpy as np

from parity import paths, reducers, trust
from parity._scenario import describe_exception

PROTOCOL = 5

if "_parity_digest" in sys.builtin_module_names:  # inside the parity program: never load the extension module there
    from _parity_digest import Xxh3, digest_walk as _digest_walk, loss_walk as _loss_walk
    from _parity_digest import small_row_text as _small_row_text
else:
    from parity.api import _core

    _native = _core("parity.probe (its XXH3-128 digests, outside the parity program)")
    Xxh3, _digest_walk, _loss_walk, _small_row_text = (_native.Xxh3, _native.digest_walk, _native.loss_walk,
                                                       _native.small_row_text)

# The digests' algorithms, by the prefix their hex digits follow (docs/results-directory.md, `fidelity`): XXH3-128,
# what runs record, a pass over the bytes at memory speed; SHA-256 without a prefix, what parity recorded before,
# still checked with SHA-256.
_ALGORITHMS = {"xxh3:": Xxh3, "": hashlib.sha256}
DIGEST = "xxh3:"  # the algorithm runs record digests with


def algorithm_of(digest) -> str:
    """The algorithm (its prefix, a key of _ALGORITHMS) a recorded digest was made with."""
    if isinstance(digest, str) and digest.startswith(DIGEST):  # what runs record: found without the search
        return DIGEST
    return next((prefix for prefix in _ALGORITHMS if prefix and isinstance(digest, str) and digest.startswith(prefix)),
                "")


def _hash(algorithm, text: bytes) -> str:
    """The whole digest of `text`, its algorithm's prefix first."""
    return algorithm + _ALGORITHMS[algorithm](text).hexdigest()


# time.monotonic() past which the probes stop (compare --timeout, set per scenario by compare), or None.
_deadline = None


class DeadlineExceeded(Exception):
    """The scenario's compare ran past its time limit inside a probe; compare records the scenario as timeout."""


def set_deadline(seconds):
    """Starts the current scenario's time limit (None or 0: none)."""
    global _deadline
    _deadline = time.monotonic() + seconds if seconds else None
    _aliases.clear()


def remaining():
    """Seconds left of the current scenario's time limit (negative once past), or None when it has none."""
    return None if _deadline is None else _deadline - time.monotonic()


def _check_deadline():
    if _deadline is not None and time.monotonic() > _deadline:
        raise DeadlineExceeded("time limit reached in the fidelity or pickle probe")


def _children(obj, path) -> list:
    """The (path, child) pairs of a container, with the same paths the codec uses; a list made in one comprehension
    (a generator resumed per child had cost the digest walk more)."""
    if isinstance(obj, dict):
        return [(paths.key_path(path, str(key)), value) for key, value in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(paths.item_path(path, i), value) for i, value in enumerate(obj)]
    if _is_object_array(obj):
        return [(path + paths.index_path(index), obj[index]) for index in np.ndindex(obj.shape)]
    return []


def _child_values(obj):
    """The children of a container in _children's order, without their paths (the unpickled side of a pair, whose
    paths are its faithful twin's)."""
    if isinstance(obj, dict):
        return (value for _, value in obj.items())
    if isinstance(obj, (list, tuple)):
        return iter(obj)
    return (child for _, child in _children(obj, ""))


def _is_object_array(obj):
    return isinstance(obj, np.ndarray) and obj.dtype.kind == "O"  # == object: a dtype made from `object` each call


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
    if repeated is None:
        if 0 not in a.strides:  # no axis can repeat (most arrays): the flags per axis are not built
            return a
        repeated = _repeated_axes(a)
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


# {address of bytes unpickle gave in place of an output array's: (those bytes, that array)}, verified equal; both
# are held so that neither address is reused while the scenario's probe runs (set_deadline starts a new one).
_aliases = {}


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """The same elements of the same memory, or of bytes unpickle verified equal to it (an unpickled array over the
    buffer mapped from the result file): equal values without reading them. Same dtype and shape are the caller's."""
    if a.size == 0:
        return True
    at = _address(b)
    alias = _aliases.get(at)
    return a.strides == b.strides and _address(a) == (at if alias is None else _address(alias[1]))


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal element bytes, compared block by block (same dtype and shape, so the blocks line up)."""
    both = tuple(x and y for x, y in zip(_repeated_axes(a), _repeated_axes(b)))  # so that the blocks line up
    return all(bytes(x) == bytes(y) for x, y in zip(_value_blocks(a, both), _value_blocks(b, both)))


def _leaf_digest(obj, state=None, algorithm=DIGEST, pending=None) -> tuple:
    """(the whole digest of a leaf, its algorithm's prefix first; whether it is _referable): fidelity records the
    prefix and the first 16 hex digits, the pickle's buffer table all of it. With `pending` (a list), a large
    array's is a _Pending instead, appended to it: its element bytes are hashed later, by compare's values kernel or
    by finish_digests."""
    if not isinstance(obj, np.ndarray):
        return _hash(algorithm, _leaf_description(obj, state)), False
    head, referable, in_place = _array_head(obj)
    if pending is not None and obj.nbytes >= _FUSED_FROM:
        leaf = _Pending(obj, head, algorithm)
        pending.append(leaf)
        return leaf, referable
    if in_place:  # the bytes _value_blocks gives such an array, in place, without its views and generators
        hasher = _ALGORITHMS[algorithm](head)
        hasher.update(obj.view(np.ndarray))
        return algorithm + hasher.hexdigest(), referable
    return _array_digest(algorithm, head, obj), referable


# {(array type, id of its dtype, shape, strides, flags.num): (_array_head's triple, the dtype)}: most outputs of a
# compare share a few layouts, and a head's repr of its aspects and dtype.descr cost more than hashing a small
# array's bytes. The dtype is held so that its id is not reused; structured dtypes, whose names can be set in
# place, are not kept.
_HEADS = {}
_HEADS_KEPT = 4096  # entries at most: past it the table starts again


def _array_head(obj: np.ndarray) -> tuple:
    """(head, referable, in place) of an array leaf: the bytes its digest begins with (type, dtype, shape, strides,
    flags), _referable(obj), and whether its element bytes are exactly its memory in C order (hashed in place)."""
    dtype, f = obj.dtype, obj.flags  # each .flags makes a new object
    key = (type(obj), id(dtype), obj.shape, obj.strides, f.num)
    found = _HEADS.get(key)
    if found is not None:
        return found[0]
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}".encode()
    flags = (f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    aspects = (dtype.str, _dtype_description(dtype), obj.shape, obj.strides, flags)
    head = kind + b"|" + repr(aspects).encode() + b"|"
    found = (head, _referable(obj), bool(obj.size and f.c_contiguous and _bytes_are_values(dtype)))
    if dtype.names is None:
        if len(_HEADS) >= _HEADS_KEPT:
            _HEADS.clear()
        _HEADS[key] = (found, dtype)
    return found


def _array_digest(algorithm, head: bytes, array: np.ndarray) -> str:
    """The whole digest of an array leaf: its `head` (type, dtype, shape, strides, flags), then its element bytes."""
    hasher = _ALGORITHMS[algorithm](head)
    plain = array.view(np.ndarray)
    if plain.size and plain.flags.c_contiguous and _bytes_are_values(plain.dtype):
        hasher.update(plain)  # the bytes _value_blocks gives such an array, in place, without its views and generators
        return algorithm + hasher.hexdigest()
    for part in _value_blocks(array):
        hasher.update(part)
    return algorithm + hasher.hexdigest()


_FUSED_FROM = 1 << 20  # bytes of an array from which compare hashes its elements after its values kernel's pass


def _fusable(a: np.ndarray, algorithm) -> bool:
    """Whether the bytes a digest covers are exactly the memory of `a`, in order, so that compare's values kernel can
    hash them as it reads them: XXH3 (the C++ hasher it feeds), C order, no object elements, no x87 long double
    (whose padding is not digested)."""
    return algorithm == DIGEST and a.flags.c_contiguous and _referable(a)


class _Pending:
    """An array leaf's digest with its head (type, dtype, shape, strides, flags) hashed and its element bytes left for
    compare's values kernel, which gives them to `hasher` as its pass reads them (values.h, DigestTaps). finish()
    hashes them in a pass of their own unless the kernel gave them all."""

    __slots__ = ("array", "head", "algorithm", "hasher", "whole")

    def __init__(self, array, head: bytes, algorithm):
        self.array, self.head, self.algorithm = array, head, algorithm
        self.hasher, self.whole = _ALGORITHMS[algorithm](head), None

    def fed(self) -> bool:
        """Whether the values kernel gave the hasher every element byte."""
        return getattr(self.hasher, "length", -1) == len(self.head) + self.array.nbytes

    def finish(self) -> str:
        """The whole digest, the element bytes hashed here if the kernel did not give them all (from the head
        again: it may have given some)."""
        if self.whole is None:
            fed = self.fed()
            self.whole = (self.algorithm + self.hasher.hexdigest() if fed
                          else _array_digest(self.algorithm, self.head, self.array))
        return self.whole


def _dtype_description(dtype):
    """dtype.descr, or for a structured dtype it cannot describe (fields that overlap or are out of offset order:
    NumPy raises) the names, formats, offsets and itemsize that define it."""
    try:
        return dtype.descr
    except ValueError:
        fields = [(name, _dtype_description(dtype.fields[name][0]), dtype.fields[name][1]) for name in dtype.names]
        return {"fields": fields, "itemsize": dtype.itemsize}


_DOUBLE = struct.Struct("<d")  # a float's bytes, as digests and losses compare them


def _leaf_description(obj, state=None) -> bytes:
    """A non-array leaf, exactly (arrays are digested in blocks by _leaf_digest); `state`: its reducer's."""
    if type(obj) is float:  # the commonest: the bytes below, without the type's names and the checks before
        return b"builtins.float|" + _DOUBLE.pack(obj)
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


# np.array2string's defaults (np.get_printoptions()) under which small_row_text writes exactly its text.
_DEFAULT_PRINT = {"precision": 8, "floatmode": "maxprec", "suppress": False, "sign": "-", "linewidth": 75,
                  "legacy": False, "formatter": None}


def _small_values_text(a: np.ndarray) -> str:
    """np.array2string(a, threshold=8) of an array of at most 8 elements: written by parity's C++ (small_row_text,
    probe_walk.h) for a row of float64, integer or bool values under the default print options (the commonest small
    outputs; array2string's general machinery was most of a digest walk's time for them), by NumPy otherwise."""
    text = _small_row_text(a)  # None for any array it does not write: its own checks, not spelt again here
    if text is not None:
        options = np.get_printoptions()
        if all(options.get(name) == value for name, value in _DEFAULT_PRINT.items()):
            return text
    return np.array2string(a, threshold=8)


def _description(obj, state=None) -> str:
    """What a node is, short, for a fidelity failure's message: its type, and its value when that is short (an
    object with a reducer: the keys of its `state`). Never the repr of an opaque object."""
    kind = reducers.qualified_name(type(obj))
    if isinstance(obj, np.ndarray) and not _is_object_array(obj):
        text = f"{kind} {obj.dtype.str} shape {obj.shape}"
        values = _small_values_text(obj.view(np.ndarray)) if obj.size <= 8 else ""
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


def digests(obj, path="outputs", shown=None, arrays=None, algorithm=DIGEST, pending=None) -> dict:
    """{path: digest} for every leaf: type, dtype (byte order too), shape, strides, flags, values, state, made with
    `algorithm` (a key of _ALGORITHMS: compare checks a run's digests with the one they name). An object
    with a reducer is digested as its type and its state's keys, and its state part by part at the state's paths.
    When `shown` is a dict, it receives {path: short description} (_description) for the failures' messages.
    When `arrays` is a dict, it receives {path: (array, whole digest)} for every array whose memory a pickle's
    out-of-band buffer may reference (_referable): one hash serves fidelity and the pickle probe.
    When `pending` is a list, the large arrays compare's values kernel can hash (_fusable) are left to it: their
    digests here, and in `arrays`, are _Pending leaves, appended to `pending`, until _settle finishes them."""
    out = {}
    if algorithm == DIGEST:  # the common nodes walked in C++, the rest handed back to _digest_into (probe_walk.h)
        _digest_walk(obj, path, out, {}, shown, arrays, pending, _deadline, _FUSED_FROM, _WALK_HOOKS)
    else:
        _digest_into(obj, path, out, 0, {}, shown, arrays, algorithm, pending)
    return out


def begin_digests(sides) -> tuple:
    """digests() of each of compare's sides, given as (outputs, shown, arrays, recorded), before its values kernel
    runs, the large arrays' element bytes not hashed yet: ([(digests, arrays, pending leaves)] for finish_digests,
    [(array, hasher)] for the kernel to feed each array's bytes to as it compares them (values.h, DigestTaps)).
    `recorded`: a digest the side's run recorded, or an algorithm's prefix: digested with the algorithm it names
    (algorithm_of; found here rather than by a call of compare's own, one a side and scenario)."""
    begun = []
    for outputs, shown, arrays, recorded in sides:
        pending = []
        algorithm = algorithm_of(recorded)
        begun.append((digests(outputs, "outputs", shown, arrays, algorithm, pending), arrays, pending))
    taps = [(leaf.array, leaf.hasher) for _, _, pending in begun for leaf in pending
            if _fusable(leaf.array, leaf.algorithm)]
    return begun, taps


def descriptions(obj, path="outputs") -> dict:
    """{path: short description} as digests() puts into `shown`, walked without hashing: compare needs the
    reloaded outputs' descriptions only for the paths whose digests differ, and describing a small array
    (array2string) costs more than digesting it."""
    shown = {}
    _digest_into(obj, path, None, 0, {}, shown, None, DIGEST)
    return shown


_TWO_THREADS_FROM = 64 << 20  # bytes of result files from which compare digests its two sides on two threads


def finish_digests(begun, nbytes=0) -> list:
    """The digests begin_digests began, each pending leaf finished: hashed here unless the values kernel hashed all
    of it. The second side is hashed on a thread of its own when the result files hold `nbytes` >= 64 MB together:
    XXH3 hashes a large array with the GIL released, so both cores hash at once. Small outputs stay on this thread,
    where a thread would cost more."""
    if len(begun) != 2 or nbytes < _TWO_THREADS_FROM or all(leaf.fed() for _, _, p in begun for leaf in p):
        return [_settle(*side) for side in begun]
    import concurrent.futures  # here: it imports logging, ~3 ms of every process that imports parity.probe

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="parity-digest") as pool:
        second = pool.submit(_settle, *begun[1])
        return [_settle(*begun[0]), second.result()]


def _settle(out, arrays, pending) -> dict:
    """`out` (and `arrays`) with each _Pending leaf finished, as digests() without `pending` would have made them."""
    if not pending:  # every _Pending leaf is in `pending`: none here
        return out
    for leaf in pending:
        _check_deadline()
        leaf.finish()
    for path, digest in out.items():
        if isinstance(digest, _Pending):
            out[path] = digest.finish()[:len(digest.algorithm) + 16]
    for path, (array, digest) in (arrays or {}).items():
        if isinstance(digest, _Pending):
            arrays[path] = (array, digest.finish())
    return out



def _referable(obj) -> bool:
    """An array whose memory is one contiguous run of exactly the bytes its digest covers (so equal digests mean
    equal memory): C or F order, not empty, no object elements, no x87 long double (its padding is not digested)."""
    if not isinstance(obj, np.ndarray) or obj.dtype.hasobject or obj.size == 0:
        return False
    flags = obj.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        return False
    kind, size = obj.dtype.kind, obj.dtype.itemsize
    return kind not in "fc" or size // (2 if kind == "c" else 1) not in (12, 16)


# Leaves no reducer describes, by exact type: a digest walk tells them from the rest without isinstance checks.
_PLAIN_LEAVES = frozenset({type(None), bool, int, float, complex, str, bytes})


# {(container type, its length, algorithm): its digest as fidelity records it}: a dict, list or tuple digests as its
# type and length alone, and a compare's outputs have a few of each (an object array's aspects are hashed each time).
_CONTAINERS = {}


def _container_digest(obj, length: int, algorithm) -> str:
    """The digest fidelity records for a container of `length` children: its type (an object array: its aspects)
    and its length."""
    key = (type(obj), length, algorithm)
    found = _CONTAINERS.get(key)
    if found is not None:
        return found
    head = (repr(_array_aspects(obj)) if _is_object_array(obj)
            else f"{type(obj).__module__}.{type(obj).__qualname__}")
    found = _hash(algorithm, f"{head}:{length}".encode())[:len(algorithm) + 16]
    if not isinstance(obj, np.ndarray):
        if len(_CONTAINERS) >= _HEADS_KEPT:
            _CONTAINERS.clear()
        _CONTAINERS[key] = found
    return found


def _digest_into(obj, path, out, depth, seen, shown, arrays, algorithm, pending=None):
    # An object met again (the codec writes it once and reads it back as one object) is not walked again:
    # its digest is the first one's, and a hostile file cannot make the walk exponential.
    if depth > 500:
        return
    _check_deadline()
    if id(obj) in seen:
        if out is not None:
            out[path] = out[seen[id(obj)][0]]
        return
    seen[id(obj)] = (path, obj)  # the object is kept alive so its id is not reused
    kind = type(obj)
    if kind in _PLAIN_LEAVES or (kind is np.ndarray and not _is_object_array(obj)):
        container, state = False, None  # what the checks below find for the commonest leaves, without them
    else:
        container = isinstance(obj, (dict, list, tuple)) or _is_object_array(obj)  # what _children walks into
        state = None if container else _state(obj)
    if container:
        children = _children(obj, path)
        _show(shown, path, obj, state)
        if out is not None:
            out[path] = _container_digest(obj, len(children), algorithm)
        for child_path, child in children:
            _digest_into(child, child_path, out, depth + 1, seen, shown, arrays, algorithm, pending)
        return
    _leaf_into(obj, path, out, shown, arrays, algorithm, pending, state)
    if isinstance(state, dict):
        for name, value in state.items():
            _digest_into(value, paths.state_path(path, name), out, depth + 1, seen, shown, arrays, algorithm, pending)
    elif state is not None:
        _digest_into(state, paths.state_path(path, "state"), out, depth + 1, seen, shown, arrays, algorithm, pending)


def _show(shown, path, obj, state):
    if shown is not None:
        text = _description(obj, state)
        if len(text) <= 2 * _SHOWN:
            shown[path] = text


def _leaf_into(obj, path, out, shown, arrays, algorithm, pending, state):
    """What _digest_into records of a leaf once its state is known: its description, its digest, and the array a
    pickle's buffer may reference. The C++ walk calls it for an ndarray subclass whose array it does not hash itself,
    after the subclass's state (as here: a reducer runs before the array's head is read)."""
    _show(shown, path, obj, state)
    if out is not None:  # None: only the descriptions (descriptions())
        whole, referable = _leaf_digest(obj, state, algorithm, pending)
        out[path] = whole if isinstance(whole, _Pending) else whole[:len(algorithm) + 16]
        if arrays is not None and referable:
            arrays[path] = (obj, whole)


# What the C++ walk of digests() calls back (src/parity/codec/probe_walk.h, DigestWalkHooks): each node it does not
# walk itself, a small array's description, an array's head, the time limit, an ndarray subclass's state and its leaf.
_WALK_HOOKS = (_digest_into, _description, _array_head, _check_deadline, _state, _leaf_into)


def _unpicklable_path(obj, path, depth=0):
    """The deepest path inside `obj` that pickle refuses (the place to fix)."""
    for child_path, child in _children(obj, path):
        try:
            pickle.dumps(child, protocol=PROTOCOL)
        except Exception:  # noqa: BLE001 - any pickling failure is what we are locating
            return _unpicklable_path(child, child_path, depth + 1) if depth < 500 else child_path
    return path


# A pickle file of format 2 (docs/format.md, "Pickles"): MAGIC, the protocol 5 stream, the buffer table (JSON), then
# FOOTER (the stream's and the table's lengths), all under the MAC trailer. Format 1 is the bare stream.
MAGIC = b"parity-pickle 2\n"
_FOOTER = struct.Struct("<QQ")


_REFERENCED = 1 << 16  # bytes from which a buffer is worth a reference rather than a copy in the stream


class _Buffers:
    """What a pickle of the outputs references rather than copies: a buffer that is exactly the memory of an output
    array the result file holds (protocol 5's out-of-band buffers: plain arrays), or a bytes object equal to one
    (what ndarray subclasses pickle their data as), goes into the table as that array's path and whole digest;
    anything else stays in the stream, as plain pickle writes it."""

    def __init__(self, arrays):
        self.table = []
        self._by_memory, self._by_size = {}, {}
        for path, (array, whole) in (arrays or {}).items():
            if array.nbytes < _REFERENCED:
                continue
            self._by_memory.setdefault((_address(array), array.nbytes), (path, whole))
            self._by_size.setdefault(array.nbytes, []).append((path, whole, array))

    def __bool__(self):
        return bool(self._by_size)

    def _entry(self, kind, path, whole, nbytes, readonly=True) -> int:
        self.table.append({"kind": kind, "leaf": path, "digest": whole, "nbytes": nbytes, "readonly": readonly})
        return len(self.table) - 1

    def __call__(self, buffer: pickle.PickleBuffer):
        """pickle's buffer_callback: False sends the buffer out of band (the table's next entry)."""
        try:
            raw = buffer.raw()
        except BufferError:  # not contiguous: in the stream
            return True
        found = self._by_memory.get((_address(np.frombuffer(raw, np.uint8)), raw.nbytes))
        if found is None:
            return True
        self._entry("buffer", found[0], found[1], raw.nbytes, raw.readonly)
        return False

    def persistent_id(self, obj):
        """A bytes object holding exactly an output array's element bytes: ("parity-leaf", its table index)."""
        if type(obj) is not bytes or len(obj) not in self._by_size:
            return None
        for path, whole, array in self._by_size[len(obj)]:
            if _equal_bytes(obj, pickle.PickleBuffer(array).raw()):
                return ("parity-leaf", self._entry("bytes", path, whole, len(obj)))
        return None


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _equal_bytes(a, b, block=_BLOCK) -> bool:
    """Two equal-length byte buffers compared in blocks (no whole copy, no whole temporary)."""
    x, y = np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)
    return all(np.array_equal(x[i:i + block], y[i:i + block]) for i in range(0, len(x), block))


class _Pickler(pickle.Pickler):
    """pickle.Pickler (the outputs' own reducers) whose large bytes equal to an output array become references."""

    def __init__(self, file, buffers: _Buffers):
        self._buffers = buffers
        super().__init__(file, protocol=PROTOCOL, buffer_callback=buffers)

    def persistent_id(self, obj):
        return self._buffers.persistent_id(obj)


class _Unpickler(pickle.Unpickler):
    """pickle.Unpickler that resolves _Pickler's references to the bytes of the arrays they name."""

    def __init__(self, file, buffers, referenced):
        super().__init__(file, buffers=buffers)
        self._referenced = referenced

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "parity-leaf" and pid[1] in self._referenced):
            raise pickle.UnpicklingError(f"the pickle references {pid!r}, which its buffer table does not hold")
        return self._referenced[pid[1]]


_PICKLE_BUFFER = 1 << 16  # bytes of a pickle held in memory: a small scenario's pickle is written in one call


class _PickleFile:
    """A stored pickle as it is written: MAGIC, then the stream pickle writes, then close()'s end; into a pickle file's
    temporary file, or after a result file's data through its open descriptor `fd` (its writer's, which keeps it: a
    run's worker has just written the codec's `offset` bytes there). What is written is held until it passes
    _PICKLE_BUFFER: a small scenario's pickle is then one os.write and its MAC one hmac.digest call (a buffered open()
    and a writer object feeding an hmac.HMAC cost more than pickling small outputs, and open() adds an fstat and two
    lseeks). Past it, the file is opened (or the descriptor written) as pickle goes, through an incremental MAC, so
    that a large pickle is never held whole."""

    def __init__(self, path, key, fd=None, offset=None):
        self._path, self._key, self._given = path, key, fd
        self._fd, self._mac = -1, None
        self._held, self._held_size = [MAGIC], len(MAGIC)
        self.size = 0  # bytes of the stream written so far
        self.offset = offset  # given a descriptor: where the payload starts in its file

    def write(self, data):
        size = len(data) if type(data) is bytes else memoryview(data).nbytes
        self.size += size
        if self._fd < 0 and self._held_size + size <= _PICKLE_BUFFER:
            self._held.append(data if type(data) is bytes else bytes(data))
            self._held_size += size
            return size
        if self._fd < 0:
            self._spill()
        if self._mac is not None:
            self._mac.update(data)
        self._write_all(data)
        return size

    def close(self, end: bytes):
        """Ends the file with `end` (the buffer table and the footer), then its MAC's trailer (none without a key),
        and closes it."""
        if self._fd < 0:
            self._held.append(end)
            payload = b"".join(self._held)
            self._open()
            self._write_all(payload if self._key is None else payload + trust.signature(self._key, payload))
        else:
            if self._mac is not None:
                self._mac.update(end)
            self._write_all(end if self._mac is None else end + trust.trailer(self._mac))
        fd, self._fd = self._fd, -1
        if self._given is None:
            os.close(fd)

    def discard(self):
        """Closes the file if it was created (the caller removes it); given a descriptor, cuts what was appended
        (the descriptor stays its writer's)."""
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            if self._given is not None:
                try:
                    os.ftruncate(fd, self.offset)
                finally:  # the writer goes on from the offset even if the cut failed
                    os.lseek(fd, self.offset, os.SEEK_SET)
            else:
                os.close(fd)

    def _open(self):
        if self._given is not None:  # the result file its worker has just written, still open: not opened by name again
            self._fd = self._given
        else:
            self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)  # open(.., "wb")

    def _spill(self):
        held = b"".join(self._held)
        self._held = None
        self._open()
        if self._key is not None:
            self._mac = trust.mac(self._key)
            self._mac.update(held)
        self._write_all(held)

    def _write_all(self, data):
        view = memoryview(data).cast("B")
        while view:
            view = view[os.write(self._fd, view):]


def append_pickle(obj, fd: int, offset: int, arrays=None):
    """pickle_outputs' payload appended to a result file through its writer's open descriptor `fd`, where the codec's
    data ends at `offset` (a run's worker: one file a scenario and side, not two, and not opened again by name: bench/
    README, issue #20 target 2): (the offset where the payload starts, None), or (None, the error) with the file cut
    back to `offset`. The codec ignores what follows its last blob (docs/format.md); the manifest records the offset
    (docs/results-directory.md, pickle_offset), where compare reads the payload from."""
    out = _PickleFile(None, _signing_key(), fd, offset)
    error = _pickle_into(out, obj, arrays)
    return (out.offset, None) if error is None else (None, error)


def _signing_key():
    try:
        return trust.key(create=True)
    except (trust.NoKey, OSError):  # no usable key: the pickle goes unsigned and compare skips its probe, saying why
        return None


def _pickle_into(out, obj, arrays):
    """Pickles `obj` into the _PickleFile `out` and closes it; None, or the error with the path of the output that
    refused. Whatever ends it before the close (a reducer raising SystemExit too) discards `out`."""
    try:
        buffers = _Buffers(arrays)
        if buffers:  # an array worth referencing: the pickler that looks for it
            _Pickler(out, buffers).dump(obj)
        else:
            pickle.dump(obj, out, protocol=PROTOCOL)
        table = json.dumps(buffers.table).encode() if buffers.table else b"[]"
        out.close(table + _FOOTER.pack(out.size, len(table)))
        return None
    except Exception as exc:  # noqa: BLE001 - a pickling failure is a finding, not a crash
        error = describe_exception(exc)
        error["path"] = _unpicklable_path(obj, "outputs")
        return error
    finally:
        out.discard()  # nothing once closed


def pickle_outputs(obj, file: str, arrays=None):
    """Pickles the outputs into a file of their own, `file`, the way the ecosystem would (protocol 5, the candidate's
    own reducers; the stream is written as it is made); returns None, or the error with the path of the output that
    refused. `arrays`: digests()'s {path: (array, whole digest)} of the outputs the result file holds, whose buffers
    are referenced rather than copied. The file appears whole or not at all, and ends with the MAC compare verifies
    before unpickling it (parity.trust). Runs of manifest version 1 stored their pickles so; a run's worker now appends
    them to the result file (append_pickle), and what it appends is this file's content."""
    temp = f"{file}.tmp-{os.getpid()}"
    replaced = False
    try:
        error = _pickle_into(_PickleFile(temp, _signing_key()), obj, arrays)
        if error is not None:
            return error
        os.replace(temp, file)
        replaced = True
        return None
    finally:
        if not replaced:  # no stat of a file that is gone after every successful write
            try:
                os.unlink(temp)
            except FileNotFoundError:
                pass


def whole_pickle_error(stored) -> str | None:
    """Why `stored` (the end of a result file from its record's pickle_offset) is not a whole pickle as a run's worker
    appends it (append_pickle: MAGIC, stream, table, lengths, its MAC line when signed), or None: a result file cut
    short or added to is the scenario's error, not a pickle that merely fails to verify. Only its frame is read: its
    buffer table, like the rest, only once its MAC verifies (_split)."""
    body = stored[:-trust.TRAILER_SIZE] if trust.has_trailer(stored) else stored
    if bytes(body[:len(MAGIC)]) != MAGIC:
        return "it does not begin as parity's pickles do"
    try:
        _lengths(body)
    except ValueError as exc:
        return str(exc)
    return None


def _lengths(payload):
    """(stream, table) lengths of a format 2 payload, which must add up to its size."""
    size = len(payload)
    if size < len(MAGIC) + _FOOTER.size:
        raise ValueError("the pickle is shorter than its header and footer")
    stream, table = _FOOTER.unpack_from(payload, size - _FOOTER.size)
    if len(MAGIC) + stream + table + _FOOTER.size != size:
        raise ValueError("the pickle's lengths do not add up")
    return stream, table


def _split(payload):
    """(stream, buffer table) of a verified payload: format 2, or format 1 (a bare stream, no table)."""
    if payload[:len(MAGIC)] != MAGIC:  # a memoryview of bytes equals the bytes it shows
        return payload, []
    stream, table = _lengths(payload)
    end = len(MAGIC) + stream
    if table == 2 and payload[end:end + 2] == b"[]":  # most pickles reference nothing
        entries = []
    else:
        entries = json.loads(bytes(payload[end:end + table]))
        if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
            raise ValueError("the pickle file's buffer table is not a list of entries")
    return payload[len(MAGIC):end], entries


def _mapped_buffers(entries, outputs, arrays):
    """(out-of-band buffers, {table index: bytes}) for the table's entries, each from the memory of the rebuilt output
    array it references once that array digests as it did when the pickle was signed (so the bytes are those the
    candidate's pickling saw); or why not. Buffers are the arrays' own memory; bytes (an ndarray subclass's state
    needs bytes) are a copy. Also {address of what was given: the array's}, so that values are judged by identity."""
    if not entries:  # most pickles reference nothing: nothing to digest or map
        return ([], {}, {}), None
    algorithm = algorithm_of(entries[0].get("digest"))  # the run's: one for all entries
    if any(entry.get("leaf") not in arrays or algorithm_of(arrays[entry.get("leaf")][1]) != algorithm
           for entry in entries):  # not digested yet, or with another algorithm than the pickle's (no fidelity)
        arrays.clear()
        digests(outputs, arrays=arrays, algorithm=algorithm)
    buffers, referenced, aliases, copies = [], {}, {}, {}
    for index, entry in enumerate(entries):
        leaf = entry.get("leaf")
        array, whole = arrays.get(leaf, (None, None))
        if array is None or whole != entry.get("digest") or array.nbytes != entry.get("nbytes"):
            return None, (f"its buffer for {leaf} is not the array the result file holds there now (the result "
                          f"file was altered or rebuilds otherwise): not unpickled")
        raw = pickle.PickleBuffer(array).raw()
        if entry.get("kind") == "bytes":  # one copy per array, however many references
            if leaf not in copies:
                copies[leaf] = bytes(raw)
            referenced[index] = copies[leaf]
            aliases[_address(np.frombuffer(referenced[index], np.uint8))] = (referenced[index], array)
            continue
        if entry.get("readonly"):
            raw = raw.toreadonly()
        elif raw.readonly:  # the pickled buffer was writable, this memory is not: a copy keeps what the run saw
            raw = memoryview(bytearray(raw))
        buffers.append(raw)
    return (buffers, referenced, aliases), None


def _prepared(blob: bytes, outputs, arrays, key=None):
    """((stream, buffer table, _mapped_buffers's), None) for a blob unpickle may unpickle, or (None, why not)."""
    payload, untrusted = trust.verified_payload(blob, key)
    if payload is None:
        return None, untrusted
    try:
        stream, entries = _split(payload)
    except ValueError as exc:  # json's errors, a UnicodeDecodeError included, are ValueErrors
        return None, f"the pickle file is damaged ({exc}): not unpickled"
    given, why = _mapped_buffers(entries, outputs, {} if arrays is None else arrays)
    return (None, why) if why is not None else ((stream, entries, given), None)


def verify_both(gold_blob: bytes, gold_outputs, gold_arrays, blob, outputs, arrays, whole=(False, False)) -> tuple:
    """(gold's, the candidate's) pickle, each (prepared, None, None) for unpickle_prepared() when its MAC verifies and
    its buffer table references its outputs' arrays, (None, why not, None) when not, or, where `whole` says the blob
    is the end of a result file (append_pickle's), (None, None, why it is not whole) when it is not (whole_pickle_error:
    the file cut short or added to: then neither side is verified, each (None, None, why not whole or None)); the
    candidate's (None, None, None) when `blob` is None. Nothing is unpickled, and the user's key is looked up once
    for the two: compare checks both pickles of a scenario in one call (each lookup reads the environment and lstats
    the key file), then unpickles gold's only when the candidate's verdict needs it."""
    found = []

    def key():  # a NoKey is not kept: the second lookup says the same (functools.lru_cache costs more to make)
        if not found:
            found.append(trust.key())
        return found[0]

    # Both checked whole before either is verified: a damaged file is the scenario's error, found before any work
    # (a key lookup, a MAC over the other pickle, its arrays digested again) that a deadline could cut short.
    damaged = [whole_pickle_error(stored) if check and stored is not None else None
               for stored, check in ((gold_blob, whole[0]), (blob, whole[1]))]
    if any(why is not None for why in damaged):
        return tuple((None, None, why) for why in damaged)

    def verified(stored, side_outputs, side_arrays):
        return (None, None, None) if stored is None else (*_prepared(stored, side_outputs, side_arrays, key), None)

    return verified(gold_blob, gold_outputs, gold_arrays), verified(blob, outputs, arrays)


def unpickle_prepared(prepared) -> tuple:
    """(obj, None), or (None, error) when unpickling raises (as the cuDF proxy did): the pickle _prepared() verified."""
    stream, entries, (buffers, referenced, aliases) = prepared
    try:
        if not entries:  # format 1, or nothing referenced: no copy of the stream
            return pickle.loads(stream), None
        obj = _Unpickler(io.BytesIO(stream), buffers, referenced).load()
        _aliases.update(aliases)
        return obj, None
    except Exception as exc:  # noqa: BLE001
        return None, describe_exception(exc)


def unpickle(blob: bytes, outputs=None, arrays=None, key=None):
    """(obj, None, None); (None, error, None) when unpickling raises (as the cuDF proxy did); or (None, None, why
    not) when the blob's MAC does not verify with the user's key: it is then never unpickled (it could run code).
    Format 2 buffers reference arrays of `outputs` (the rebuilt result; `arrays`: its digests()'s, when known):
    the unpickled arrays share their memory, nothing is copied. `key`: what gives the key (default trust.key)."""
    prepared, why = _prepared(blob, outputs, arrays, key)
    return (None, None, why) if why is not None else (*unpickle_prepared(prepared), None)


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
    plain, buffers = a.view(np.ndarray), []
    # Out of band, as the runs pickle: the same aspects as in band (the buffer keeps its writability), no copy.
    again = pickle.loads(pickle.dumps(plain, protocol=PROTOCOL, buffer_callback=buffers.append), buffers=buffers)
    before, after = _array_aspects(plain), _array_aspects(again)
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
    # vars(obj), without its TypeError for an object with no __dict__ (every plain ndarray, each side of each array
    # leaf compare's pickle probe judges): a raised exception costs a traceback entry per frame it leaves.
    namespace = getattr(obj, "__dict__", None)
    if namespace is None:
        return {}
    try:
        return dict(namespace)
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
    reaches a report. Two types of one qualified name are the same type (pint makes a Quantity class per registry).
    The common equal pairs are settled in C++ (src/parity/codec/probe_walk.h), every other pair by _losses."""
    found = []
    _loss_walk(faithful, unpickled, path, depth, {} if seen is None else seen, found, _losses, _array_head,
               (_attributes, _loss), _REFERENCED, _bare_arrays())
    return found


def _bare_arrays() -> bool:
    """Whether a plain ndarray has no attributes for _array_losses to compare (_attributes: no reducer is registered
    like ndarray's)."""
    reducer = reducers.registered_like(np.ndarray)
    return reducer is None or not reducer.is_array


def _losses(faithful, unpickled, path, depth, seen):
    """One pair as losses() judges it, what lies under it through losses() again."""
    key = (id(faithful), id(unpickled))
    if depth > 500 or key in seen:  # a shared pair is judged where it first appears
        return []
    seen[key] = (faithful, unpickled)
    kind = type(faithful)
    if kind is type(unpickled):  # the commonest pairs, without the checks below (which they would pass through)
        if kind is float:  # _leaf_description's bytes but for the type they share
            same = _DOUBLE.pack(faithful) == _DOUBLE.pack(unpickled)
            return [] if same else [_loss(path, "values", repr(faithful)[:200], repr(unpickled)[:200])]
        if isinstance(faithful, np.ndarray):  # no ndarray is a container, a class, a function or a module
            return _array_losses(faithful, unpickled, path, depth, seen)
    if isinstance(faithful, _NAMED) and isinstance(unpickled, _NAMED):
        same = _qualified(faithful) == _qualified(unpickled)
        return [] if same else [_loss(path, "values", _qualified(faithful), _qualified(unpickled))]
    if type(faithful) is not type(unpickled):
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
    for (child_path, f), u in zip(_children(faithful, path), _child_values(unpickled)):
        found += losses(f, u, child_path, depth + 1, seen)
    return found


def _same_aspects(a: np.ndarray, b: np.ndarray) -> bool:
    """_array_aspects(a) == _array_aspects(b), without building them, for the common case (no structured dtype);
    False means they may differ."""
    if type(a) is not type(b) or a.shape != b.shape or a.strides != b.strides:
        return False
    da, db, fa, fb = a.dtype, b.dtype, a.flags, b.flags
    return (da.names is None and (da is db or (db.names is None and da.str == db.str))
            and fa.c_contiguous == fb.c_contiguous and fa.f_contiguous == fb.f_contiguous
            and fa.writeable == fb.writeable)


# The dtype kinds whose element bytes are their values: numbers, datetimes, fixed-width strings and raw bytes. Not
# object arrays, nor StringDType (kind "T") or another dtype whose elements point elsewhere: two equal such arrays
# may hold different bytes, and two different ones the same.
_VALUE_KINDS = frozenset("biufcmMSUV")


def _bytes_are_values(dtype: np.dtype) -> bool:
    """Whether every element byte of `dtype` is part of its value: a _VALUE_KINDS dtype, not structured (its
    padding), not x87 long double (its unused bytes)."""
    kind, size = dtype.kind, dtype.itemsize
    return (kind in _VALUE_KINDS and dtype.names is None
            and not (kind in "fc" and size // (2 if kind == "c" else 1) in (12, 16)))


def _array_losses(faithful, unpickled, path, depth, seen):
    if _same_aspects(faithful, unpickled):
        differing, found = (), []
    else:
        fa, ua = _array_aspects(faithful), _array_aspects(unpickled)
        # What NumPy's own pickle loses costs a pickle round trip to find out: only asked when something differs.
        differing = [k for k in fa if fa[k] != ua[k]]
        inherent = _numpy_losses(faithful) if differing else set()
        found = [_loss(path, k, repr(fa[k]), repr(ua[k])) for k in differing if k not in inherent]
    if _is_object_array(faithful) and faithful.shape == unpickled.shape and _is_object_array(unpickled):
        for (child_path, f), u in zip(_children(faithful, path), _child_values(unpickled)):
            found += losses(f, u, child_path, depth + 1, seen)
    # Same dtype and shape: the element bytes must match exactly (NaN payloads and NaT included). A small array's
    # are compared at once: no buffer of the pickle references it, so its memory is never the same.
    # (Equal dtypes and shapes: both are as small, and their bytes are values alike.)
    elif faithful.shape == unpickled.shape and ((dtype := faithful.dtype) is unpickled.dtype
                                                or dtype == unpickled.dtype):
        if faithful.nbytes < _REFERENCED and _bytes_are_values(dtype):  # tobytes() is its value bytes
            same = faithful.view(np.ndarray).tobytes() == unpickled.view(np.ndarray).tobytes()
        elif faithful.dtype.kind not in _VALUE_KINDS:  # elements that point elsewhere: compared as Python values
            same = _same_python_values(faithful.view(np.ndarray), unpickled.view(np.ndarray))
        else:
            same = _same_memory(faithful, unpickled) or _same_values(faithful, unpickled)
        if not same:
            found.append(_loss(path, "values", "as written", "different"))
    kept = _attributes(faithful)
    # Nothing to keep (a plain array's): the unpickled side's attributes are not read, for nothing is compared.
    return found + _dict_losses(kept, _attributes(unpickled), path, depth, seen) if kept else found


def _same_python_values(faithful: np.ndarray, unpickled: np.ndarray) -> bool:
    """Equal element by element as list equality finds them (the same object, else ==), two NaN missing-value markers
    (StringDType(na_object=nan)) alike: a pickle round trip makes a fresh NaN, unequal to the first. The same object
    comes first, as in list equality: a singleton marker such as pandas.NA has no truth value of its own."""
    return all(f is u or _both_nan(f, u) or f == u
               for f, u in zip(faithful.ravel().tolist(), unpickled.ravel().tolist()))


def _both_nan(a, b) -> bool:
    return isinstance(a, float) and isinstance(b, float) and a != a and b != b


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
    wanted = {}  # type -> (its qualified name, the attributes required of it): one lookup per type, not per node

    def visit(node, node_path, depth):
        if depth > 500 or id(node) in seen:
            return
        seen.add(id(node))
        kind = type(node)
        if kind not in wanted:
            name = reducers.qualified_name(kind)
            wanted[kind] = (name, required.get(name, ()))
        type_name, attributes = wanted[kind]
        for attribute in attributes:
            if not hasattr(node, attribute):
                found.append({"path": node_path, "type": type_name, "attribute": attribute})
        if isinstance(node, (dict, list, tuple)) or _is_object_array(node):  # what _children walks into
            for child_path, child in _children(node, node_path):
                visit(child, child_path, depth + 1)

    visit(obj, path, 0)
    return found
