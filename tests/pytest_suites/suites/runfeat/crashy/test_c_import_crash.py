"""A test module whose import kills the worker: it is this file's error, and the files after it still run."""
import os

os.abort()


def test_never_collected():
    return 1
