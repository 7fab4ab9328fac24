"""Session and module fixtures of the plain suite: seeded data, as cuDF's integration tests have.

Each module fixture draws from a generator of its own: one generator shared by the session would give each module
data that depends on which modules its worker ran before (with --jobs 2, on timing), as under pytest-xdist.
"""
import numpy as np
import pytest


@pytest.fixture(scope="session")
def seed():
    return 42


@pytest.fixture(scope="module")
def matrix(seed):
    return np.random.default_rng(seed).random((4, 4))
