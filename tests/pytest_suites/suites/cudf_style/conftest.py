"""The suite's session fixture: seeded data, logged at set-up and teardown (suite_helpers.log_fixture)."""
import numpy as np
import pytest
from suite_helpers import log_fixture


@pytest.fixture(scope="session")
def seeded():
    log_fixture("setup", "session")
    yield np.random.default_rng(2024).standard_normal(12)
    log_fixture("teardown", "session")
