"""NumPy on module fixtures, in the style of cuDF's third-party integration tests: each test returns its result."""
import numpy as np
import pytest

pytestmark = pytest.mark.assert_eq(fn=np.testing.assert_allclose)


def assert_dict_close(gold, candidate):
    """The asserter of tests that return a dict: the same keys, each value close."""
    assert gold.keys() == candidate.keys()
    for key in gold:
        np.testing.assert_allclose(gold[key], candidate[key], err_msg=key)


@pytest.fixture(scope="module")
def matrix():
    rng = np.random.default_rng(42)
    return rng.standard_normal((20, 8))


@pytest.fixture(scope="module")
def values():
    rng = np.random.default_rng(7)
    return rng.random(100)


def test_dot(matrix):
    return np.dot(matrix, matrix.T)


@pytest.mark.parametrize("percentile", [0, 25, 50, 75, 100])
def test_percentile(values, percentile):
    return np.percentile(values, percentile)


@pytest.mark.parametrize("op", ["sum", "mean", "std"])
def test_reductions(matrix, op):
    return getattr(np, op)(matrix, axis=0)


def test_rfft(values):
    return np.fft.rfft(values)


def test_sort(matrix):
    return np.sort(matrix, axis=1)


def test_unique(values):
    return np.unique(np.round(values, 1))


@pytest.mark.assert_eq(fn=assert_dict_close)
def test_summary(matrix):
    return {"mean": matrix.mean(axis=1), "cov": np.cov(matrix.T), "rank": int(np.linalg.matrix_rank(matrix))}


def test_session_table_column(table):
    return np.cumsum(np.asarray(table["x"]))


# The pair cuDF uses for a test whose gold pass fails: no gold result, so nothing to compare either. NumPy refuses
# the percentile whichever backend runs it, so the candidate pass expects the failure too.
@pytest.mark.xfail_gold(reason="NumPy refuses a percentile above 100", raises=ValueError)
@pytest.mark.xfail_candidate(reason="NumPy refuses a percentile above 100", raises=ValueError)
@pytest.mark.xfail_compare(reason="neither pass has a result to compare")
def test_percentile_above_100(values):
    return np.percentile(values, 101)


# Code with exact-type fast paths (`type(x) is np.ndarray`) sees a transparent proxy's arrays for the ndarray
# subclass they are. Not strict: candidates that hand plain arrays to the test pass it.
@pytest.mark.xfail_cudf_pandas(reason="a proxy's arrays are an ndarray subclass, which exact-type checks see",
                               strict=False)
def test_concatenate_is_exact_ndarray(matrix):
    result = np.concatenate([matrix, matrix[::-1]])
    assert type(result) is np.ndarray, f"{type(result).__name__} is not exactly numpy.ndarray"
    return result
