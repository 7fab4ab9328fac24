"""Tests returning pandas objects and dicts of them, from a module fixture, with assert_frame_equal."""
import numpy as np
import pandas as pd
import pytest
from suite_helpers import log_fixture

# pandas hands back plain ndarrays whatever made its inputs (a transparent NumPy proxy proxies numpy, not pandas):
# parity's type check takes the gold type's subclasses instead of requiring the candidate's TYPE_MAP proxy.
pytestmark = [pytest.mark.assert_eq(fn=pd.testing.assert_frame_equal),
              pytest.mark.parity(policy={"type": "subclass-ok"})]


@pytest.fixture(scope="module")
def frame():
    log_fixture("setup", "module-frames")
    rng = np.random.default_rng(42)
    yield pd.DataFrame({"key": rng.integers(0, 3, 30), "x": rng.random(30), "y": rng.standard_normal(30)})
    log_fixture("teardown", "module-frames")


def test_groupby_sum(frame):
    return frame.groupby("key").sum()


@pytest.mark.parametrize("op", ["cumsum", "cummin"])
def test_cumulative(frame, op):
    return getattr(frame[["x", "y"]], op)()


@pytest.mark.assert_eq(fn=pd.testing.assert_series_equal)
def test_column_mean(frame):
    return frame[["x", "y"]].mean()


@pytest.mark.assert_eq(fn=lambda gold, candidate: pd.testing.assert_frame_equal(gold["sorted"], candidate["sorted"]))
def test_dict_of_frames(frame):
    return {"sorted": frame.sort_values("x"), "values": frame["y"].to_numpy(), "rows": len(frame)}
