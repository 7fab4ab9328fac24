"""assert_eq on one test and on a class, asserters with bugs, and compare xfails strict and not."""
import numpy as np
import pytest


def assert_same_sums(gold, candidate):
    if abs(gold.sum() - candidate.sum()) > 1e-12:
        raise AssertionError(f"sums differ: gold {gold.sum()!r}, candidate {candidate.sum()!r}")


@pytest.mark.assert_eq(fn=lambda gold, candidate: None)  # a bug: it compares nothing
def test_blind_asserter(data):
    return np.sort(data)


@pytest.mark.assert_eq(fn=lambda gold, candidate: gold.no_such_attribute)  # a bug: it raises AttributeError
def test_broken_asserter(data):
    return data + 1


def test_no_asserter(data):
    return data * 2


@pytest.mark.assert_eq(fn=assert_same_sums)
class TestScaled:
    def test_scaled(self, data):
        return data * 4


@pytest.mark.xfail_compare(reason="the candidate may drift")  # strict: the suite's xfail_strict
def test_strict_xfail(data):
    return data * 3


@pytest.mark.xfail_compare(reason="the candidate may drift", strict=False)
def test_lenient_xfail(data):
    return data * 5
