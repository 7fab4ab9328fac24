"""A session fixture that changes the worker process (README, "Scenario isolation"): its effects must last for the
whole session, as in pytest, and its teardown finds them there."""
import os
import signal

import numpy as np
import pytest


def on_usr2(number, frame):
    pass


@pytest.fixture(scope="session", autouse=True)
def configured():
    os.environ["SUITE_MODE"] = "fast"
    umask = os.umask(0o027)
    handler = signal.signal(signal.SIGUSR2, on_usr2)
    errors = np.seterr(divide="raise")
    yield
    assert os.environ.pop("SUITE_MODE") == "fast"
    os.umask(umask)
    signal.signal(signal.SIGUSR2, handler)
    np.seterr(**errors)
