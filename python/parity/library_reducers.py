"""Built-in reducers for pandas, scipy.sparse and fitted scikit-learn objects, registered the first time one is met."""
# Each state names the parts users care about as leaves at readable paths (outputs['df']['a'],
# outputs['df'].index.values, outputs['m'].indices, outputs['est'].coef_), so compare checks them with the
# ordinary array checks and tolerances. Values travel as plain, C-contiguous copies: a column of a 2-D block is a
# strided view whose layout says nothing about the frame, and the fidelity check needs the state of a rebuilt
# object to digest as the original's did.
from __future__ import annotations

import numpy as np

from parity import reducers

LIBRARIES = ("pandas", "scipy", "sklearn")
ESTIMATOR = "sklearn.estimator"

_registered: set = set()


def _plain(values) -> np.ndarray:
    return np.array(values, copy=True, order="C")


def _key(value):
    # A NumPy scalar label reads as its Python value in a path (['a'], [3]), as the user would index it.
    return value.item() if isinstance(value, np.generic) else value


# ---------------------------------------------------------------------------------------------------------
# pandas

def _pandas():
    import pandas as pd
    return pd


def _part(values):
    """A column's or an index's values: a plain ndarray for NumPy dtypes, else the extension array (reduced by its
    own reducer)."""
    pd = _pandas()
    if isinstance(values.dtype, np.dtype):
        return _plain(np.asarray(values))
    return values.array if isinstance(values, (pd.Index, pd.Series)) else values


def _from_part(values, pd, index=None, name=None):
    """A Series of `values` as _part wrote them; an ndarray keeps its dtype (pandas would infer str for objects)."""
    dtype = values.dtype if isinstance(values, np.ndarray) else None
    return pd.Series(values, index=index, name=name, dtype=dtype, copy=False)


def _column_keys(columns) -> list:
    """Each column's state key: ['label'] as the user indexes it, or .iloc[:, i] where labels repeat."""
    keys = [f"[{_key(label)!r}]" for label in columns]
    counts = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    return [k if counts[k] == 1 else f".iloc[:, {i}]" for i, k in enumerate(keys)]


def _frame_reduce(df):
    state = {"index": df.index, "columns": df.columns}
    for i, key in enumerate(_column_keys(df.columns)):
        state[key] = _part(df.iloc[:, i])
    state["attrs"] = dict(df.attrs)
    return state


def _frame_rebuild(state):
    pd = _pandas()
    columns = state["columns"]
    parts = [_from_part(state[key], pd, index=state["index"]) for key in _column_keys(columns)]
    df = pd.concat(parts, axis=1) if parts else pd.DataFrame(index=state["index"])
    df.columns = columns
    df.attrs.update(state["attrs"])
    return df


def _series_reduce(s):
    return {"values": _part(s), "index": s.index, "name": s.name, "attrs": dict(s.attrs)}


def _series_rebuild(state):
    s = _from_part(state["values"], _pandas(), index=state["index"], name=state["name"])
    s.attrs.update(state["attrs"])
    return s


def _index_rebuild(state):
    pd = _pandas()
    values = state["values"]
    dtype = values.dtype if isinstance(values, np.ndarray) else None
    return pd.Index(values, dtype=dtype, name=state["name"], copy=True)


def _datetime_reduce(idx):
    # The UTC instants and the zone: every zone spells the same instants differently.
    return {"values": _plain(idx.array._ndarray), "tz": None if idx.tz is None else str(idx.tz),
            "freq": idx.freqstr, "name": idx.name}


def _datetime_rebuild(state):
    pd = _pandas()
    idx = pd.DatetimeIndex(state["values"], name=state["name"])
    if state["tz"] is not None:
        idx = idx.tz_localize("UTC").tz_convert(state["tz"])
    return pd.DatetimeIndex(idx, freq=state["freq"]) if state["freq"] else idx


def _timedelta_rebuild(state):
    pd = _pandas()
    return pd.TimedeltaIndex(state["values"], freq=state["freq"], name=state["name"])


def _period_rebuild(state):
    pd = _pandas()
    return pd.PeriodIndex(_period_array_rebuild(state), name=state["name"])


def _period_array_reduce(a):
    return {"ordinals": _plain(a.asi8), "freq": a.freqstr}


def _period_array_rebuild(state):
    pd = _pandas()
    return pd.arrays.PeriodArray(state["ordinals"], dtype=pd.PeriodDtype(state["freq"]))


def _interval_array_reduce(a):
    return {"left": _part(a.left), "right": _part(a.right), "closed": a.closed}


def _interval_array_rebuild(state):
    pd = _pandas()
    return pd.arrays.IntervalArray.from_arrays(_from_part(state["left"], pd), _from_part(state["right"], pd),
                                               closed=state["closed"])


def _categorical_reduce(c):
    return {"codes": _plain(c.codes), "categories": c.categories, "ordered": bool(c.ordered)}


def _categorical_rebuild(state):
    pd = _pandas()
    dtype = pd.CategoricalDtype(state["categories"], ordered=state["ordered"])
    return pd.Categorical.from_codes(state["codes"], dtype=dtype)


def _masked_reduce(a):
    # What a masked slot holds is arbitrary (pandas leaves the input there): written as zero so it never differs.
    data = _plain(a._data)
    data[a._mask] = 0
    return {"data": data, "mask": _plain(a._mask)}


def _string_reduce(a):
    # Missing entries are pandas.NA or NaN (per dtype), which the codec does not carry: the mask says where.
    mask = _plain(a.isna())
    values = _plain(np.asarray(a, dtype=object))
    values[mask] = ""
    return {"values": values, "mask": mask, "storage": a.dtype.storage,
            "na_value": "NA" if a.dtype.na_value is _pandas().NA else "nan"}


def _string_rebuild(state):
    pd = _pandas()
    values = state["values"].astype(object)
    dtype = pd.StringDtype(state["storage"], na_value=pd.NA if state["na_value"] == "NA" else np.nan)
    values[state["mask"]] = dtype.na_value
    return pd.array(values, dtype=dtype)


def _sparse_array_reduce(a):
    return {"sp_values": _plain(a.sp_values), "indices": _plain(a.sp_index.indices), "length": int(len(a)),
            "fill_value": a.fill_value, "kind": a.kind}


def _sparse_array_rebuild(state):
    pd = _pandas()
    from pandas._libs.sparse import IntIndex
    index = IntIndex(state["length"], state["indices"])
    dtype = pd.SparseDtype(state["sp_values"].dtype, state["fill_value"])
    out = pd.arrays.SparseArray._simple_new(state["sp_values"], index, dtype)
    return out if state["kind"] == "integer" else pd.arrays.SparseArray(out, kind=state["kind"])


def _datetime_array_reduce(a):
    return {"values": _plain(a._ndarray), "tz": None if a.tz is None else str(a.tz)}


def _datetime_array_rebuild(state):
    pd = _pandas()
    return _datetime_rebuild({**state, "freq": None, "name": None}).array if state["tz"] else \
        pd.arrays.DatetimeArray._from_sequence(state["values"], dtype=state["values"].dtype)


def _multi_reduce(idx):
    return {"levels": list(idx.levels), "codes": [_plain(c) for c in idx.codes], "names": list(idx.names)}


def _register_pandas():
    pd = _pandas()
    A = pd.arrays

    def simple(cls, name, reduce, rebuild):
        reducers.register(cls, reduce, rebuild, name=f"pandas.{name}")

    simple(pd.DataFrame, "DataFrame", _frame_reduce, _frame_rebuild)
    simple(pd.Series, "Series", _series_reduce, _series_rebuild)
    simple(pd.Index, "Index", lambda i: {"values": _part(i), "name": i.name}, _index_rebuild)
    simple(pd.RangeIndex, "RangeIndex",
           lambda i: {"start": int(i.start), "stop": int(i.stop), "step": int(i.step), "name": i.name},
           lambda s: pd.RangeIndex(s["start"], s["stop"], s["step"], name=s["name"]))
    simple(pd.DatetimeIndex, "DatetimeIndex", _datetime_reduce, _datetime_rebuild)
    simple(pd.TimedeltaIndex, "TimedeltaIndex",
           lambda i: {"values": _plain(i.array._ndarray), "freq": i.freqstr, "name": i.name}, _timedelta_rebuild)
    simple(pd.PeriodIndex, "PeriodIndex", lambda i: {**_period_array_reduce(i.array), "name": i.name},
           _period_rebuild)
    simple(pd.CategoricalIndex, "CategoricalIndex", lambda i: {**_categorical_reduce(i.array), "name": i.name},
           lambda s: pd.CategoricalIndex(_categorical_rebuild(s), name=s["name"]))
    simple(pd.IntervalIndex, "IntervalIndex", lambda i: {**_interval_array_reduce(i.array), "name": i.name},
           lambda s: pd.IntervalIndex(_interval_array_rebuild(s), name=s["name"]))
    simple(pd.MultiIndex, "MultiIndex", _multi_reduce,
           lambda s: pd.MultiIndex(levels=s["levels"], codes=s["codes"], names=s["names"]))
    simple(A.Categorical, "Categorical", _categorical_reduce, _categorical_rebuild)
    for cls in (A.IntegerArray, A.FloatingArray, A.BooleanArray):
        simple(cls, cls.__name__, _masked_reduce, lambda s, cls=cls: cls(s["data"], s["mask"]))
    simple(A.StringArray, "StringArray", _string_reduce, _string_rebuild)
    simple(A.DatetimeArray, "DatetimeArray", _datetime_array_reduce, _datetime_array_rebuild)
    simple(A.TimedeltaArray, "TimedeltaArray", lambda a: {"values": _plain(a._ndarray)},
           lambda s: A.TimedeltaArray._from_sequence(s["values"], dtype=s["values"].dtype))
    simple(A.PeriodArray, "PeriodArray", _period_array_reduce, _period_array_rebuild)
    simple(A.IntervalArray, "IntervalArray", _interval_array_reduce, _interval_array_rebuild)
    simple(A.SparseArray, "SparseArray", _sparse_array_reduce, _sparse_array_rebuild)
    simple(A.NumpyExtensionArray, "NumpyExtensionArray", lambda a: {"values": _plain(a.to_numpy())},
           lambda s: A.NumpyExtensionArray(s["values"]))
    try:  # pyarrow is optional: string[pyarrow] and the str dtype backed by it
        import pyarrow  # noqa: F401
    except ImportError:
        return
    simple(A.ArrowStringArray, "ArrowStringArray", _string_reduce, _string_rebuild)


# ---------------------------------------------------------------------------------------------------------
# scipy.sparse: every format, as the arrays that define it.

_SPARSE_PARTS = {"csr": ("data", "indices", "indptr"), "csc": ("data", "indices", "indptr"),
                 "bsr": ("data", "indices", "indptr"), "coo": ("data", "row", "col"), "dia": ("data", "offsets")}
_SPARSE_FORMATS = ("csr", "csc", "coo", "bsr", "dia", "lil", "dok")


def _sparse_reduce(m):
    state = {"format": m.format, "shape": tuple(int(n) for n in m.shape)}
    if m.format == "lil":
        # Lists of Python numbers per row: the row's column indices and values.
        return {**state, "dtype": m.dtype.str, "rows": _plain(m.rows), "data": _plain(m.data)}
    if m.format == "dok":
        # A dict without an order of its own: its entries in (row, column) order.
        # The keys' integer type too (NumPy's from a conversion, Python's from item assignment): it is what
        # iterating the dok shows.
        coo = m.tocoo()
        order = np.lexsort((coo.col, coo.row))
        first = next(iter(m.keys()), (0, 0))[0]
        return {**state, "row": _plain(coo.row[order]), "col": _plain(coo.col[order]), "data": _plain(coo.data[order]),
                "key_dtype": np.dtype(type(first)).str if isinstance(first, np.generic) else None}
    state.update({part: _plain(getattr(m, part)) for part in _SPARSE_PARTS[m.format]})
    if m.format == "bsr":
        state["blocksize"] = tuple(int(n) for n in m.blocksize)
    if m.format in ("csr", "csc", "bsr"):
        state["has_sorted_indices"] = bool(m.has_sorted_indices)
    if m.format in ("csr", "csc", "bsr", "coo"):
        state["has_canonical_format"] = bool(m.has_canonical_format)
    return state


def _sparse_rebuild(cls, state):
    fmt, shape = state["format"], state["shape"]
    if fmt == "lil":
        m = cls(shape, dtype=np.dtype(state["dtype"]))
        m.rows[:], m.data[:] = state["rows"], state["data"]
        return m
    if fmt == "dok":
        m = cls(shape, dtype=state["data"].dtype)
        key = int if state["key_dtype"] is None else np.dtype(state["key_dtype"]).type
        # scipy keeps a dok's entries in its _dict (the dict it derives from stays empty).
        m._dict.update(((key(r), key(c)), v) for r, c, v in zip(state["row"].tolist(), state["col"].tolist(),
                                                                state["data"]))
        return m
    if fmt == "coo":
        m = cls((state["data"], (state["row"], state["col"])), shape=shape)
    elif fmt == "dia":
        m = cls((state["data"], state["offsets"]), shape=shape)
    else:
        m = cls((state["data"], state["indices"], state["indptr"]), shape=shape,
                **({"blocksize": state["blocksize"]} if fmt == "bsr" else {}))
    # The flags as the original had them, whether computed or set by its producer.
    if "has_sorted_indices" in state:
        m.has_sorted_indices = state["has_sorted_indices"]
    if "has_canonical_format" in state:
        m.has_canonical_format = state["has_canonical_format"]
    return m


def _register_scipy():
    import scipy.sparse as sparse
    for fmt in _SPARSE_FORMATS:
        for kind in ("matrix", "array"):
            cls = getattr(sparse, f"{fmt}_{kind}")
            reducers.register(cls, _sparse_reduce, lambda s, cls=cls: _sparse_rebuild(cls, s),
                              name=f"scipy.sparse.{fmt}_{kind}")


# ---------------------------------------------------------------------------------------------------------
# scikit-learn: a fitted estimator is its class (the object's type), get_params() and its fitted attributes.

def _is_fitted_attribute(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")


def _is_private_state(name: str) -> bool:
    """Fitted state an estimator keeps privately (KNeighbors' _y and _fit_X, SVR's _intercept_): what predict reads
    as much as coef_ is. Never a dunder, never parity's own record of the opaque ones."""
    return name.startswith("_") and not name.startswith("__") and name.isidentifier() and name != _OPAQUE_ATTRIBUTE


# Where a rebuilt estimator keeps the opaque private parts it was written with (only their type names travel), so that
# reducing it again gives the state it was rebuilt from.
_OPAQUE_ATTRIBUTE = "_parity_opaque"
_OPAQUE = ".opaque"


def _carriable(value, depth=0) -> bool:
    """Whether the codec writes `value` natively or through a reducer (a nested estimator, an index)."""
    if depth > 20:
        return False
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype != object or all(_carriable(v, depth + 1) for v in value.flat)
    if isinstance(value, (list, tuple)):
        return all(_carriable(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _carriable(v, depth + 1) for k, v in value.items())
    return reducers.registered_like(type(value)) is not None


def _estimator_reduce(est):
    fitted, private, opaque = {}, {}, dict(vars(est).get(_OPAQUE_ATTRIBUTE, {}))
    for name, value in sorted(vars(est).items()):
        if _is_fitted_attribute(name):
            fitted[name] = value
        elif _is_private_state(name) and _carriable(value):
            private[name] = value
        elif _is_private_state(name):  # compared by its type's name only: README, "Library objects"
            opaque[name] = reducers.qualified_name(type(value))
    state = {".get_params()": est.get_params(deep=False), **fitted, **private}
    if opaque:
        state[_OPAQUE] = dict(sorted(opaque.items()))
    return state


_estimator_classes: dict = {}
# The module names all_estimators skips: sklearn.utils.discovery's own list, private there, so this copy is a fallback.
_SKIPPED_MODULE_PARTS = frozenset({"tests", "externals", "setup", "conftest", "experimental", "estimator_checks"})


def _skipped_module_parts() -> frozenset:
    from sklearn.utils import discovery
    return frozenset(getattr(discovery, "_MODULE_TO_IGNORE", _SKIPPED_MODULE_PARTS))


def _public_module(type_name: str) -> str | None:
    """The public scikit-learn module that all_estimators would import to find the class named `type_name`: its
    module's path up to the first private part (sklearn.linear_model for sklearn.linear_model._base.LinearRegression),
    or None when all_estimators would import no such module."""
    parts = type_name.split(".")[:-1]
    public = []
    for part in parts:
        if part.startswith("_"):
            break
        public.append(part)
    skipped = _skipped_module_parts()
    if len(public) < 2 or public[0] != "sklearn" or any(not p.isidentifier() or p in skipped for p in public):
        return None
    return ".".join(public)


def _importable_as_all_estimators_would(name: str) -> bool:
    """Whether `name` and each package above it below sklearn is a module with a file, as pkgutil.walk_packages (what
    all_estimators imports) yields them: find_spec also finds a folder without __init__.py (a namespace package,
    sklearn/svm/src), which it would import. Each level is looked up before the one below imports it."""
    import importlib.util

    parts = name.split(".")
    for level in range(2, len(parts) + 1):
        spec = importlib.util.find_spec(".".join(parts[:level]))
        if spec is None or spec.origin is None or not spec.has_location:
            return False
    return True


def _estimator_in_public_module(type_name: str):
    """The class named `type_name` as all_estimators would find it (a public name in the public module that holds it),
    importing that one module rather than all of scikit-learn's: all_estimators costs ~0.35 s a process, paid again by
    each `compare --jobs` child. None when that module does not hold it; the caller then asks all_estimators."""
    import importlib

    name = _public_module(type_name)
    try:
        if name is None or not _importable_as_all_estimators_would(name):
            return None
        module = importlib.import_module(name)
    except (ImportError, ValueError):  # ValueError: find_spec of a module in sys.modules without a __spec__
        return None
    return next((value for key, value in vars(module).items() if not key.startswith("_") and isinstance(value, type)
                 and reducers.qualified_name(value) == type_name), None)


def _is_estimator(cls) -> bool:
    """What all_estimators lists: a BaseEstimator subclass other than BaseEstimator that can be made (an abstract one
    a crafted file names, _BaseKMeans, raised TypeError)."""
    from sklearn.base import BaseEstimator
    return (isinstance(cls, type) and issubclass(cls, BaseEstimator) and cls is not BaseEstimator
            and not getattr(cls, "__abstractmethods__", None))


def estimator_class(type_name: str) -> type:
    """The scikit-learn estimator class named `type_name`: one already imported, else one of sklearn's own
    estimators, found by importing only the public module all_estimators would find it in, or failing that through
    all_estimators itself (parity's choice of modules, never a module the file names; a name outside scikit-learn
    imports nothing)."""
    cls = reducers.loaded_type(type_name) or _estimator_in_public_module(type_name)
    if cls is None and not _estimator_classes and type_name.startswith("sklearn."):
        from sklearn.utils import all_estimators
        _estimator_classes.update({reducers.qualified_name(c): c for _, c in all_estimators()})
    cls = cls or _estimator_classes.get(type_name)
    if not _is_estimator(cls):
        raise reducers.RebuildError(f"type {type_name} is not rebuilt: it is not one of scikit-learn's estimators")
    return cls


def _estimator_rebuild(state, type_name):
    est = estimator_class(type_name)(**state[".get_params()"])
    for name, value in state.items():
        if name == ".get_params()":
            continue
        if name == _OPAQUE:
            vars(est)[_OPAQUE_ATTRIBUTE] = dict(value)
            continue
        # A file sets fitted state only, never __dict__, __class__ or another dunder.
        if not (_is_fitted_attribute(name) or _is_private_state(name)):
            raise reducers.RebuildError(f"{type_name}: {name!r} is not fitted state (name_ or _name)")
        setattr(est, name, value)
    return est


def _tree_reduce(tree):
    # The decision tree's own pickle state (node table, leaf values) and constructor arguments: plain arrays and ints.
    _, args, state = tree.__reduce__()
    return {"n_features": args[0], "n_classes": args[1], "n_outputs": args[2], **state}


def _tree_rebuild(state):
    from sklearn.tree._tree import Tree
    tree = Tree(state["n_features"], state["n_classes"], state["n_outputs"])
    tree.__setstate__({k: state[k] for k in ("max_depth", "node_count", "nodes", "values")})
    return tree


def _register_sklearn():
    from sklearn.tree._tree import Tree
    # _n_threads is the machine's (KMeans records the threads it may use), not the fit's: only its presence counts.
    reducers.register_family(ESTIMATOR, _estimator_reduce, _estimator_rebuild, volatile=("_n_threads",))
    # A fitted tree's tree_ (decision trees, and the estimators_ of forests and boosting): its nodes and values.
    reducers.register(Tree, _tree_reduce, _tree_rebuild, name="sklearn.tree.Tree")


_REGISTER = {"pandas": _register_pandas, "scipy": _register_scipy, "sklearn": _register_sklearn}


def ensure(library: str) -> bool:
    """Registers `library`'s reducers once (importing it); False for a library parity has none for."""
    if library not in _REGISTER:
        return False
    if library not in _registered:
        _registered.add(library)
        _REGISTER[library]()
    return True


def reducer_for(cls: type):
    """The built-in reducer for instances of exactly `cls`, a type of pandas, scipy or scikit-learn, or None."""
    library = cls.__module__.partition(".")[0]
    if not ensure(library):
        return None
    found = reducers.registered(cls)
    if found is None and library == "sklearn":
        from sklearn.base import BaseEstimator
        if issubclass(cls, BaseEstimator):
            found = reducers.use_family(cls, ESTIMATOR)
    return found


def sort_permutation(index) -> np.ndarray:
    """The stable order that sorts a pandas index (a MultiIndex lexicographically), for the `order: sorted` policy;
    labels Python cannot order against each other (1 and 'a', (1, 'x') and (1, 2)) are ordered by type name, then
    by repr: an order both sides share, which is all the policy needs."""
    try:
        return np.asarray(index.argsort(kind="stable"), dtype=np.intp)
    except TypeError:
        keys = [(type(label).__name__, repr(label)) for label in index]
        return np.asarray(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.intp)
