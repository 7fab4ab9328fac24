"""pandas scenarios: to_numpy()/.values layouts and flags, dtype conversions and groupby results as arrays."""
import pandas as pd

import parity
from parity import xfails

# The library hands back plain ndarrays whatever xp made its inputs, so a proxy candidate's results are
# plain too: the type check accepts the gold type's subclasses instead of requiring the TYPE_MAP proxy.
PLAIN_RESULTS_OK = {"type": "subclass-ok"}

# A homogeneous DataFrame keeps its values as one 2-D block stored column-major, so .values and to_numpy()
# are often F-ordered views; these scenarios return them as they come to pin that layout down.


def _frame(xp, rng, n=12):
    return pd.DataFrame({
        "a": xp.asarray(rng.standard_normal(n)),
        "b": xp.asarray(rng.standard_normal(n)),
        "c": xp.asarray(rng.integers(0, 100, size=n), dtype=xp.float64),
    })


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=0.0, params={"via": ["values", "to_numpy", "to_numpy_copy", "from_2d"]},
                 tags=["pandas", "layout"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("layout", "writeable")}))
def frame_layouts(xp, rng, via):
    if via == "from_2d":
        df = pd.DataFrame(xp.asarray(rng.standard_normal((8, 3))), columns=["a", "b", "c"])
    else:
        df = _frame(xp, rng)
    arr = {"values": lambda: df.values, "to_numpy": lambda: df.to_numpy(),
           "to_numpy_copy": lambda: df.to_numpy(copy=True), "from_2d": lambda: df.to_numpy()}[via]()
    return {
        "array": arr,
        "c_contiguous": bool(arr.flags.c_contiguous),
        "f_contiguous": bool(arr.flags.f_contiguous),
        "column": df["b"].to_numpy(),
        "row_slice": df.iloc[2:7].to_numpy(),
        "transposed": df.T.to_numpy(),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=0.0, params={"dtype": ["float32", "int64", "bool", "datetime64[ns]"]},
                 tags=["pandas", "dtype"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("writeable")}, when={"dtype": ["datetime64[ns]"]}))
def series_dtypes(xp, rng, dtype):
    raw = xp.asarray(rng.integers(0, 5, size=10))
    data = raw.astype(dtype) if dtype != "datetime64[ns]" else xp.datetime64("2024-01-01", "ns") + raw.astype("timedelta64[D]")
    s = pd.Series(data)
    return {
        "to_numpy": s.to_numpy(),
        "values": s.values,
        "shifted_float": s.shift(1).to_numpy(dtype="float64", na_value=-1.0) if dtype != "datetime64[ns]"
        else s.shift(1).to_numpy(dtype="int64", na_value=0),
        "mixed_frame": pd.DataFrame({"x": s, "y": xp.arange(10)}).to_numpy(dtype="float64")
        if dtype != "datetime64[ns]" else s.dt.day.to_numpy(),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-12, atol=1e-12, params={"sort": [True, False]},
                 tags=["pandas", "groupby"])
def groupby(xp, rng, sort):
    df = _frame(xp, rng, n=30)
    df["key"] = xp.asarray(rng.integers(0, 4, size=30))
    g = df.groupby("key", sort=sort)
    agg = g.agg({"a": "sum", "b": "mean", "c": "max"})
    return {
        "keys": agg.index.to_numpy(),
        "agg": agg.to_numpy(),
        "size": g.size().to_numpy(),
        "transform": g["a"].transform("mean").to_numpy(),
        "cumsum": g["c"].cumsum().to_numpy(),
        "describe": g["b"].describe().to_numpy(),
        "pivot": df.pivot_table(index="key", values="a", aggfunc="count").to_numpy(),
    }


@parity.scenario(policy=PLAIN_RESULTS_OK, rtol=1e-12, atol=1e-12, tags=["pandas", "window"],
                 xfail=parity.xfail_on({"joblib": xfails.joblib("writeable")}))
def rolling_and_resample(xp, rng):
    idx = pd.date_range("2024-01-01", periods=48, freq="h")
    s = pd.Series(xp.asarray(rng.standard_normal(48)), index=idx)
    return {
        "rolling_mean": s.rolling(6).mean().to_numpy(),
        "ewm": s.ewm(span=5).mean().to_numpy(),
        "resampled": s.resample("6h").sum().to_numpy(),
        "index": s.resample("6h").sum().index.to_numpy(),
        "rank": s.rank(method="first").to_numpy(),
        "quantiles": s.quantile([0.1, 0.5, 0.9]).to_numpy(),
    }
