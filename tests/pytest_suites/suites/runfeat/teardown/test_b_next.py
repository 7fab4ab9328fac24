"""The module after: it shares nothing with the one before, so that one's teardown is none of its business."""
import numpy as np


def test_innocent():
    return np.arange(3)
