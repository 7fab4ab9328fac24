"""A suite pytest accepts, beside one it refuses: it runs whatever happens to the other."""
import numpy as np


def test_good():
    return np.arange(3)
