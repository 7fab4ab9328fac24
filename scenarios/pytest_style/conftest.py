"""Session-wide data of the example suite: one seeded table that every test module may read but never changes."""
import numpy as np
import pandas as pd
import pytest

SEED = 42


@pytest.fixture(scope="session")
def table():
    # Seeded, so gold and candidate (and two runs of either, in any order or number of workers) see the same data.
    rng = np.random.default_rng(SEED)
    return pd.DataFrame({"x": rng.standard_normal(40), "y": rng.random(40), "n": rng.integers(0, 100, 40)})
