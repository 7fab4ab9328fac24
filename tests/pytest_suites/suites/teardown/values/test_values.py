"""Fixtures whose teardown changes what the test returned (zeroes a buffer, drops a column): parity must record what
the test returned, so a drift the teardown would wipe out is still seen (PARITY_TEARDOWN_TIDY: teardowns that do not
touch it, the run to compare with)."""
import os

import numpy as np
import pandas as pd
import pytest

TIDY = bool(os.environ.get("PARITY_TEARDOWN_TIDY"))


def _drifts():
    """fsproxy's arrays stand for a candidate that gets its results slightly wrong."""
    return type(np.arange(1)).__name__ == "ProxyNDArray"


@pytest.fixture
def buf():
    a = np.zeros(3)
    yield a
    if not TIDY:
        a[:] = 99.0


@pytest.fixture
def scratch():
    a = np.zeros(3)
    yield a
    if not TIDY:
        a[:] = 0.0  # tidies the scratch buffer up: gold's and a drifting candidate's alike


@pytest.fixture
def frame():
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    yield df
    if not TIDY:
        df.drop(columns="a", inplace=True)


def test_buffer(buf):
    buf[:] = 1.0
    return buf


def test_frame(frame):
    return frame


def test_hidden_drift(scratch):
    np.multiply(np.arange(3.0), 2.0, out=scratch)
    if _drifts():
        scratch += 0.5
    return scratch


def test_visible_drift():
    out = np.arange(3.0) * 2.0
    if _drifts():
        out += 0.5
    return out
