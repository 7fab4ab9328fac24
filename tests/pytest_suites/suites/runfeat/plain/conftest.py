"""Session and module fixtures of the plain suite: seeded data, as cuDF's integration tests have."""
import numpy as np
import pytest


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(42)


@pytest.fixture(scope="module")
def matrix(rng):
    return rng.random((4, 4))
