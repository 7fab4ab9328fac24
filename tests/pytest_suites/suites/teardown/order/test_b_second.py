"""The module after: its own module fixture, and a function fixture whose teardown raises after the test returned."""
import pytest


@pytest.fixture
def breaks_at_teardown():
    yield [1.0, 2.0]
    raise RuntimeError("teardown went wrong")


def test_after(module_resource, per_test, events):
    return events


def test_teardown_raises(breaks_at_teardown):
    return breaks_at_teardown


def test_last(module_resource, events):
    return events
