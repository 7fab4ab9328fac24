"""A DataFrame and a CSR matrix returned as themselves (issue #17's reorder_rows and sparse_unsorted)."""
import numpy as np
import pandas as pd
import scipy.sparse

import parity


@parity.scenario(tags=["selftest"])
def frame(xp, rng):
    return {"df": pd.DataFrame({"x": rng.standard_normal(5), "n": np.arange(5)}, index=pd.Index([4, 8, 1, 6, 2]))}


@parity.scenario(tags=["selftest"])
def csr(xp, rng):
    dense = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.6)
    return {"m": scipy.sparse.csr_matrix(dense)}
