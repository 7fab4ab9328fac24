"""A modin-like candidate: TYPE_MAP maps pandas.DataFrame to a proxy whose reducer records the pandas frame's own
state; PARITY_TEST_PROXY_SCALE multiplies column 'a' (a proxy with wrong values)."""
import os

import pandas as pd

import parity.reducers

__version__ = "0.1.0"


class ProxyFrame:
    def __init__(self, frame):
        self._frame = frame


TYPE_MAP = {"pandas.DataFrame": f"{__name__}.ProxyFrame"}
parity.reducers.register(
    ProxyFrame, reduce=lambda proxy: parity.reducers.reduce(proxy._frame)[1],
    rebuild=lambda state: ProxyFrame(parity.reducers.rebuild("pandas.DataFrame", "pandas.DataFrame", None, state)))


def materialize(out):
    scale = float(os.environ.get("PARITY_TEST_PROXY_SCALE", "1"))
    return {k: ProxyFrame(v.assign(a=v["a"] * scale)) if isinstance(v, pd.DataFrame) else v for k, v in out.items()}
