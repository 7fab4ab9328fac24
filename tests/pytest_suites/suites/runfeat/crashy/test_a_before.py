"""Ordinary tests before the faults: they must be reported as if nothing else happened."""
import numpy as np


def test_first():
    return np.arange(3)
