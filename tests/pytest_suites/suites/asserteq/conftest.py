"""Seeded session data, as cuDF's integration tests take theirs from fixtures."""
import numpy as np
import pytest


@pytest.fixture(scope="session")
def data():
    return np.random.default_rng(18).standard_normal(8)
