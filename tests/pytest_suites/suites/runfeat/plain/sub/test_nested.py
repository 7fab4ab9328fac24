"""A test file one directory down: its id keeps the directory (sub/test_nested.py::...)."""
import numpy as np


def test_nested_sum(matrix):
    return {"sum": matrix.sum(axis=1), "n": np.int64(matrix.shape[0])}
