"""Tests that kill their worker (a segfault through ctypes, os.abort) between ordinary tests of the same module."""
import ctypes
import os

import numpy as np
import pytest


@pytest.fixture(scope="module")
def table():
    return np.arange(4.0)


def test_before_the_crashes(table):
    return table * 2


def test_segfaults(table):
    print("last words before the segfault", flush=True)
    ctypes.string_at(0)


def test_aborts():
    print("last words before the abort", flush=True)
    os.abort()


def test_after_the_crashes(table):
    return table + 1
