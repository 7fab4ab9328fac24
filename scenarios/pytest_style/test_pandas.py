"""pandas on a module fixture and the session table, in the style of cuDF's third-party integration tests."""
import numpy as np
import pandas as pd
import pytest

# pandas hands back plain ndarrays whatever made its inputs (a transparent NumPy proxy proxies numpy, not pandas):
# parity's type check takes the gold type's subclasses instead of requiring the candidate's TYPE_MAP proxy.
pytestmark = [pytest.mark.assert_eq(fn=pd.testing.assert_frame_equal),
              pytest.mark.parity(policy={"type": "subclass-ok"})]


def assert_dict_close(gold, candidate):
    """The asserter of tests that return a dict: the same keys, each value close (frames and arrays alike)."""
    assert gold.keys() == candidate.keys()
    for key in gold:
        np.testing.assert_allclose(np.asarray(gold[key]), np.asarray(candidate[key]), err_msg=key)


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(42)
    return pd.DataFrame({"key": rng.integers(0, 4, 50), "a": rng.random(50), "b": rng.standard_normal(50)})


def test_groupby_mean(df):
    return df.groupby("key").mean()


@pytest.mark.parametrize("op", ["cumsum", "cummax", "rank"])
def test_cumulative(df, op):
    return getattr(df[["a", "b"]], op)()


def test_describe(df):
    return df[["a", "b"]].describe()


def test_rolling_mean(df):
    return df[["a", "b"]].rolling(5).mean()


def test_numpy_ufunc_on_frame(df):
    return np.exp(df[["a", "b"]])


@pytest.mark.assert_eq(fn=pd.testing.assert_series_equal)
def test_value_counts(df):
    return df["key"].value_counts().sort_index()


@pytest.mark.assert_eq(fn=np.testing.assert_allclose)
def test_to_numpy(df):
    return df[["a", "b"]].to_numpy()


@pytest.mark.assert_eq(fn=assert_dict_close)
def test_summary(df):
    return {"mean": df["a"].mean(), "corr": df[["a", "b"]].corr(), "quantiles": df["b"].quantile([0.1, 0.5, 0.9])}


def test_session_table_sorted(table):
    return table.sort_values("y")
