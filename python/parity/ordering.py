"""The `order: sorted` policy's sorting: set-like results are compared after both sides are sorted the same way."""
from __future__ import annotations

import numpy as np


def sorted_array(array):
    """`array` sorted as np.sort sorts (NaN and NaT last): a 1-D array by value; an N-D array by its rows along
    axis 0, ordered lexicographically (the rows np.unique(axis=0) returns), each row kept whole. None when its
    dtype has no order (the array is then compared as produced)."""
    if array.ndim == 0 or array.shape[0] <= 1:
        return array
    try:
        if array.ndim == 1:
            return np.sort(array, kind="stable")
        rows = array.reshape(array.shape[0], -1)
        if rows.shape[1] == 0:
            return array
        # np.lexsort's last key is the primary one: the first column decides first.
        return array[np.lexsort([rows[:, j] for j in reversed(range(rows.shape[1]))])]
    except TypeError:
        return None


def _key(value):
    if isinstance(value, (complex, np.complexfloating)):
        nan = value != value
        return (bool(nan), 0.0 if nan else value.real, 0.0 if nan else value.imag)
    nan = isinstance(value, (float, np.floating)) and value != value
    return (bool(nan), 0 if nan else value)


def sequence_order(values: list):
    """The positions of `values` (Python or NumPy scalars) in sorted order, NaN last; None when they have no
    common order (numbers against strings, say)."""
    try:
        return sorted(range(len(values)), key=lambda i: _key(values[i]))
    except TypeError:
        return None
