"""A module fixture whose teardown raises: pytest reports it on the module's last test, and so must parity."""
import numpy as np
import pytest


@pytest.fixture(scope="module")
def resource():
    yield 2
    raise RuntimeError("module teardown went wrong")


def test_first(resource):
    return np.arange(resource)


def test_last_of_the_module(resource):
    return np.arange(resource + 1)
