"""A candidate that changes one part of the pandas, sparse or estimator outputs: the mutation its scenario's module
is named after (tests/objects/test_libraries.py copies its scenarios once a mutation)."""
import pickle

import numpy as np
import pandas as pd

from parity_fixtures.broken.sparse_unsorted import unsort_rows

__version__ = "0.1.0"


def _set(key, change):
    return lambda out: {**out, key: change(out[key])} if key in out else out


def _with_column(df, name, values):
    df = df.copy()
    df[name] = values
    return df


def _with_index(obj, index):
    obj = obj.copy()
    obj.index = index
    return obj


def _with_params(est, **params):
    est = pickle.loads(pickle.dumps(est))
    return est.set_params(**params)


def _with_attr(est, name, change):
    est = pickle.loads(pickle.dumps(est))
    setattr(est, name, change(getattr(est, name)))
    return est


def _with_tree_values(est, factor):
    est = pickle.loads(pickle.dumps(est))
    est.tree_.value[:] *= factor  # the leaves' predictions, in place: a tree's arrays are views of its own memory
    return est


MUTATIONS = {
    "faithful": lambda out: pickle.loads(pickle.dumps(out)),
    "scale_column": _set("df", lambda df: _with_column(df, "a", df["a"] * 2)),
    "permute_column": _set("df", lambda df: _with_column(df, "a", df["a"].to_numpy()[::-1])),
    "retype_column": _set("df", lambda df: df.astype({"b": "float64"})),
    "rename_column": _set("df", lambda df: df.rename(columns={"c": "C"})),
    "relabel_index": _set("df", lambda df: _with_index(df, df.index + 1)),
    "reorder_rows": _set("df", lambda df: df.iloc[::-1]),
    "series_name": _set("s", lambda s: s.rename("other")),
    "index_name": _set("df", lambda df: df.rename_axis("other")),
    "range_as_int": _set("frame", lambda df: _with_index(df, pd.Index(np.asarray(df.index), dtype="int64"))),
    "tz": _set("dt", lambda dt: dt.tz_convert("UTC")),
    "fill_na": _set("ext", lambda s: s.fillna(0)),
    "recode": _set("cat", lambda c: c.reorder_categories(["b", "a"])),
    "sparse_scale": _set("csr", lambda m: m * 2),
    "sparse_unsorted": _set("csr", unsort_rows),
    "sparse_retype": _set("coo", lambda m: m.astype(np.float32)),
    "coef": _set("est", lambda est: _with_attr(est, "coef_", lambda c: c * 2)),
    "param": _set("est", lambda est: _with_params(est, fit_intercept=False)),
    "private_state": _set("knn", lambda est: _with_attr(est, "_y", lambda y: y * 2)),
    "tree_values": _set("tree", lambda est: _with_tree_values(est, 2.0)),
    "rename_range": _set("rs", lambda s: s.rename_axis("other")),
    "relabel_sparse": _set("sp", lambda df: _with_index(df, df.index[::-1])),
    "reverse_ordered": lambda out: {**out, **{k: out[k].iloc[::-1] for k in ("rs", "sp", "odd") if k in out}},
}


def execute(fn, *args, **kwargs):
    """The scenario's outputs, changed as its module's name says (a module named after no mutation: its scenarios
    raise KeyError, the candidate run exits 1, and test_libraries' fixture, which expects 0, fails every test)."""
    return MUTATIONS[fn.__module__.rpartition(".")[2]](fn(*args, **kwargs))
