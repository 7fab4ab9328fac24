"""A compare xfail under the suite's xfail_strict = false."""
import numpy as np
import pytest


@pytest.mark.xfail_compare(reason="the candidate may drift")
def test_lenient_by_ini():
    return np.linspace(0.0, 1.0, 5)
