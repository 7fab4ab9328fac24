"""A candidate that drifts values: fixtures/broken/perturb's 1e-3 drift of the first floating array, and the same
drift of every DataFrame's first floating column and every floating Series, so that array tests and pandas tests
alike must fail `values`."""
import pandas as pd

from parity_fixtures.broken import perturb

__version__ = "0.1.0"


def _drift_frames(obj):
    if isinstance(obj, pd.Series) and obj.dtype.kind == "f" and len(obj) >= 2:
        return pd.Series(perturb._perturb(obj.to_numpy()), index=obj.index, name=obj.name)
    if isinstance(obj, pd.DataFrame):
        column = next((c for c in obj.columns if obj[c].dtype.kind == "f" and len(obj) >= 2), None)
        if column is None:
            return obj
        out = obj.copy()
        out[column] = perturb._perturb(obj[column].to_numpy())
        return out
    if isinstance(obj, dict):
        return {key: _drift_frames(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_drift_frames(value) for value in obj)
    return obj


def materialize(obj):
    return _drift_frames(perturb.materialize(obj))
