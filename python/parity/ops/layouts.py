"""The layout matrix: each layout turns host (NumPy) data into an `xp` array of the same values and another memory
layout, the places where a proxy that copies, re-wraps or pickles arrays goes wrong (README, "Operation registry")."""
from __future__ import annotations

import numpy

# Layouts that change only how the array sits in memory; SHAPE_LAYOUTS change the shape the sample is made with;
# CALL_LAYOUTS change how the operation is called (out= a fresh array, or the first input itself).
MEMORY_LAYOUTS = ("C", "F", "stepped", "negative", "big-endian", "read-only", "misaligned", "broadcast")
SHAPE_LAYOUTS = ("0-d", "empty")
CALL_LAYOUTS = ("out", "in-place")
LAYOUTS = MEMORY_LAYOUTS + SHAPE_LAYOUTS + CALL_LAYOUTS


def shape_for(layout: str, shape: tuple) -> tuple:
    """The shape a sample is made with under `layout`: () for 0-d, a zero-length first axis for empty."""
    if layout == "0-d":
        return ()
    if layout == "empty":
        return (0,) + tuple(shape[1:])
    return tuple(shape)


def applies(layout: str, dtype: str) -> bool:
    """Whether `layout` means something for `dtype`: byte order and alignment need items wider than one byte."""
    if dtype in ("none", "object"):
        return layout in ("C", "F", "stepped", "negative", "read-only", "0-d", "empty", "out", "in-place", "broadcast")
    item = numpy.dtype(dtype)
    if layout == "big-endian":
        return item.itemsize > 1 and item.kind not in "bV" and item.byteorder != "|"
    if layout == "misaligned":
        return item.itemsize > 1 and item.kind not in "OV"
    return True


def _stepped(xp, host):
    # Every other element of a buffer twice as long on each axis: non-contiguous, positive strides.
    big = xp.zeros(tuple(2 * n for n in host.shape), dtype=host.dtype)
    view = big[tuple(slice(None, None, 2) for _ in host.shape)]
    view[...] = xp.asarray(host)  # a device namespace (CuPy) takes no host array on the right
    return view


def _negative(xp, host):
    flipped = xp.array(host[tuple(slice(None, None, -1) for _ in host.shape)])
    return flipped[tuple(slice(None, None, -1) for _ in host.shape)]


def _big_endian(xp, host):
    return xp.asarray(host.astype(host.dtype.newbyteorder(">")))


def _read_only(xp, host):
    arr = xp.array(host)
    arr.flags.writeable = False
    return arr


def _misaligned(xp, host):
    # One byte into a uint8 buffer: NumPy allows unaligned views and copes with them in every loop.
    raw = xp.zeros(host.nbytes + 1, dtype=xp.uint8)
    arr = raw[1:].view(host.dtype).reshape(host.shape)
    arr[...] = xp.asarray(host)
    return arr


def _broadcast(xp, host):
    # Zero strides on the first axis: every row is the first one (read-only, as broadcast_to makes it).
    if host.ndim == 0 or host.shape[0] == 0:
        return xp.asarray(host)
    return xp.broadcast_to(xp.asarray(host[:1]), host.shape)


_MAKERS = {
    "F": lambda xp, host: xp.asfortranarray(host),
    "stepped": _stepped,
    "negative": _negative,
    "big-endian": _big_endian,
    "read-only": _read_only,
    "misaligned": _misaligned,
    "broadcast": _broadcast,
}


def make(xp, host, layout: str):
    """`host` (a NumPy array) as an `xp` array in `layout`; other objects pass through unchanged."""
    if not isinstance(host, numpy.ndarray):
        return host
    maker = _MAKERS.get(layout)
    if maker is None or host.ndim == 0 and layout != "read-only":
        return xp.array(host)
    return maker(xp, host)
