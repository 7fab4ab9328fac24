"""A module-level assert_eq: every test here is also compared by numpy.testing.assert_allclose."""
import os

import numpy as np
import pytest

pytestmark = pytest.mark.assert_eq(fn=np.testing.assert_allclose)

# Where the importing process says it imported this module: how the suite's test counts collections per process.
if os.environ.get("ASSERTEQ_IMPORT_LOG"):
    with open(os.environ["ASSERTEQ_IMPORT_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()}\n")


def test_cumsum(data):
    return np.cumsum(data)


@pytest.mark.parametrize("k", [1, 2])
def test_power(data, k):
    return data**k
