"""pandas, scipy.sparse and scikit-learn scenarios that return the library objects themselves, not arrays of them."""
import importlib.util

import numpy as np
import pandas as pd
import scipy.sparse
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import parity

# Inputs are made with xp, as a proxy user's would be; what pandas, scipy and scikit-learn hand back is compared
# part by part through parity's built-in reducers (README, "Reducers"): columns, index, sparse arrays, fitted
# attributes.


def _frame(xp, rng, n=8):
    a = xp.asarray(rng.standard_normal(n))
    b = xp.asarray(rng.integers(0, 50, size=n))
    return pd.DataFrame({"a": a, "b": b, "label": [f"r{i}" for i in range(n)]},
                        index=pd.Index(range(10, 10 + n), name="id"))


@parity.scenario(rtol=1e-12, atol=1e-12, tags=["pandas", "objects"])
def frame_and_series(xp, rng):
    df = _frame(xp, rng)
    df["c"] = df["a"] * 2.0 + df["b"]
    return {"df": df, "series": df["c"], "sums": df[["a", "b", "c"]].sum(), "index": df.index,
            "described": df[["a", "c"]].describe(), "transposed": df[["a", "c"]].T}


@parity.scenario(rtol=1e-12, atol=1e-12, tags=["pandas", "objects", "dtype"])
def extension_dtypes(xp, rng):
    n = 6
    ints = np.asarray(xp.asarray(rng.integers(0, 9, size=n)))  # a lazy xp (dask) computes here
    holes = [i % 3 == 1 for i in range(n)]
    df = pd.DataFrame({
        "Int64": pd.array([None if h else int(v) for v, h in zip(ints.tolist(), holes)], dtype="Int64"),
        "boolean": pd.array([None if h else bool(v % 2) for v, h in zip(ints.tolist(), holes)], dtype="boolean"),
        "string": pd.array([None if h else f"s{v}" for v, h in zip(ints.tolist(), holes)], dtype="string"),
        "category": pd.Categorical([["lo", "mid", "hi"][v % 3] for v in ints.tolist()],
                                   categories=["lo", "mid", "hi"], ordered=True),
        "when": pd.date_range("2024-03-30 22:00", periods=n, freq="h", tz="Europe/Paris"),
        "period": pd.period_range("2024-01", periods=n, freq="M"),
        "interval": pd.arrays.IntervalArray.from_breaks(np.arange(n + 1) * 0.5),
        "sparse": pd.arrays.SparseArray(xp.asarray(rng.standard_normal(n)) * (np.arange(n) % 2)),
        "delta": pd.to_timedelta(np.arange(n), unit="min"),
    })
    if importlib.util.find_spec("pyarrow") is not None:
        df["arrow_string"] = df["string"].astype("string[pyarrow]")
    return {"df": df, "Int64_sum": df["Int64"].cumsum(), "codes": df["category"]}


@parity.scenario(rtol=1e-12, atol=1e-12, tags=["pandas", "objects", "index"])
def index_kinds(xp, rng):
    df = _frame(xp, rng, n=12)
    df["key"] = [["x", "y", "z"][i % 3] for i in range(12)]
    df["sub"] = [i % 2 for i in range(12)]
    binned = pd.cut(df["a"], bins=[-10.0, -0.5, 0.0, 0.5, 10.0])
    return {
        "range": pd.RangeIndex(0, 20, 3, name="r"),
        "by_two_keys": df.groupby(["key", "sub"])["a"].sum(),  # MultiIndex
        "hourly": pd.date_range("2024-10-27", periods=5, freq="h", tz="Europe/Berlin", name="t"),
        "categorical": pd.CategoricalIndex(df["key"], categories=["z", "y", "x"], ordered=True),
        "bins": binned.value_counts(sort=False),  # CategoricalIndex of intervals
        "intervals": pd.IntervalIndex.from_breaks([0, 1.5, 3.0], closed="left"),
        "periods": pd.period_range("2024-01-01", periods=4, freq="D", name="day"),
        "grouped": df.groupby("key", sort=True)[["a", "b"]].mean(),
    }


@parity.scenario(rtol=1e-12, atol=1e-12, params={"fmt": ["csr", "csc", "coo", "bsr", "dia", "lil", "dok"]},
                 tags=["scipy", "sparse", "objects"])
def sparse_formats(xp, rng, fmt):
    dense = xp.asarray(rng.standard_normal((6, 4))) * xp.asarray(rng.random((6, 4)) < 0.4)
    m = scipy.sparse.csr_matrix(np.asarray(dense)).asformat(fmt)
    a = scipy.sparse.csr_array(np.asarray(dense)).asformat(fmt)
    return {"matrix": m, "array": a, "scaled": (m * 3.0).asformat(fmt), "product": (a @ a.T).tocsr()}


@parity.scenario(rtol=1e-8, atol=1e-10, params={"kind": ["linear", "logistic", "kmeans", "pipeline"]},
                 tags=["sklearn", "objects"])
def fitted_estimators(xp, rng, kind):
    x = xp.asarray(rng.standard_normal((40, 3)))
    y = x @ xp.asarray([1.5, -2.0, 0.5]) + 0.1 * xp.asarray(rng.standard_normal(40))
    labels = (y > 0).astype(np.int64)
    est = {"linear": lambda: LinearRegression().fit(x, y),
           "logistic": lambda: LogisticRegression(tol=1e-10, max_iter=1000).fit(x, labels),
           "kmeans": lambda: KMeans(n_clusters=3, n_init=2, random_state=0).fit(x),
           "pipeline": lambda: make_pipeline(StandardScaler(), PCA(n_components=2, svd_solver="full")).fit(x)}[kind]()
    return {"estimator": est}
