"""Scenarios returning pandas, scipy.sparse and scikit-learn objects themselves, for tests/objects/test_libraries.py."""
import numpy as np
import pandas as pd
import scipy.sparse
from sklearn.linear_model import LinearRegression

import parity


@parity.scenario(tags=["objects"])
def frame(xp, rng):
    df = pd.DataFrame({"a": rng.standard_normal(6), "b": rng.integers(0, 9, size=6), "c": list("uvwxyz")},
                      index=pd.Index([3, 1, 4, 10, 5, 9], name="key"))
    return {"df": df, "s": pd.Series(rng.standard_normal(4), name="val")}


@parity.scenario(tags=["objects"])
def indexes(xp, rng):
    return {"dt": pd.date_range("2024-03-30", periods=4, freq="h", tz="Europe/Paris", name="when"),
            "mi": pd.MultiIndex.from_product([["a", "b"], [1, 2]], names=["k", "n"]),
            "frame": pd.DataFrame({"x": rng.standard_normal(3)}),
            "ext": pd.Series(pd.array([1, None, 3], dtype="Int64")),
            "cat": pd.Categorical(["a", "b", "a"], categories=["a", "b"])}


@parity.scenario(tags=["objects"])
def sparse(xp, rng):
    dense = rng.standard_normal((5, 6)) * (rng.random((5, 6)) < 0.5)
    return {"csr": scipy.sparse.csr_matrix(dense), "coo": scipy.sparse.coo_array(dense),
            "dok": scipy.sparse.csr_array(dense).todok()}


@parity.scenario(tags=["objects"])
def estimator(xp, rng):
    x = rng.standard_normal((20, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(20)
    return {"est": LinearRegression().fit(x, y)}


@parity.scenario(tags=["objects"])
def ordered(xp, rng):
    # What `order: sorted` must reorder without losing anything: a named RangeIndex (its name is no range
    # parameter), a sparse column (its stored values name rows), and row labels Python cannot order ((1, 'x') < 'a').
    return {"rs": pd.Series(rng.standard_normal(3), index=pd.RangeIndex(3, name="row")),
            "sp": pd.DataFrame({"sp": pd.arrays.SparseArray([0.0, 0.0, 5.0]), "x": rng.standard_normal(3)}),
            "odd": pd.DataFrame({"x": rng.standard_normal(3)}, index=pd.Index([(1, "x"), "a", (1, 2)], dtype=object))}


@parity.scenario(tags=["objects"])
def fitted_state(xp, rng):
    # Fitted state kept privately (KNeighbors' _y) and in a Cython object (a tree's tree_): what predict reads.
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.tree import DecisionTreeRegressor
    x = rng.standard_normal((12, 3))
    y = x @ np.array([1.0, -2.0, 0.5])
    return {"knn": KNeighborsRegressor(n_neighbors=2).fit(x, y), "tree": DecisionTreeRegressor(random_state=0).fit(x, y)}
