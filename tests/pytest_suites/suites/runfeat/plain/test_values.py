"""Tests that return what they compute: floats (which broken.perturb drifts) and integers."""
import numpy as np
import pytest

print("test_values.py imported")  # must not land in `parity list`'s output, whose stdout is the listing


def test_dot(matrix):
    return matrix @ matrix


@pytest.mark.parametrize("q", [25, 50, 75])
def test_percentile(matrix, q):
    return np.percentile(matrix, q, axis=0)


def test_counts():
    print("counting now")
    return {"counts": np.arange(6)}


class TestGrouped:
    def test_cumsum(self):
        return np.cumsum(np.arange(5))
