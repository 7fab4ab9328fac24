import os

import pytest
from seen import note


@pytest.fixture(scope="module")
def offline():
    os.environ["SUITE_OFFLINE"] = "1"
    yield
    del os.environ["SUITE_OFFLINE"]  # a KeyError had this module's last test fail in teardown


def test_first(offline):
    return note("first")


def test_second(offline):
    return note("second")
