"""A module fixture shared by every test, and function fixtures torn down whatever the test's status."""
import pytest


def test_one(module_resource, per_test, events):
    return events


def test_skips(module_resource, per_test):
    pytest.skip("skipped with its fixtures set up")


@pytest.mark.xfail(reason="fails with its fixtures set up", strict=True)
def test_xfails(module_resource, per_test):
    raise ValueError("expected")


def test_unwritable(module_resource, per_test):
    return {"fn": lambda: None}


def test_two(module_resource, per_test, events):
    return events
