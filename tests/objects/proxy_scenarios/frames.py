"""A scenario returning a DataFrame, for the modin-like TYPE_MAP proxy of tests/objects/test_core.py."""
import pandas as pd

import parity


@parity.scenario(tags=["objects"])
def frame(xp, rng):
    return {"df": pd.DataFrame({"a": rng.standard_normal(4), "b": list("wxyz")}, index=pd.Index([2, 4, 6, 8], name="k"))}
