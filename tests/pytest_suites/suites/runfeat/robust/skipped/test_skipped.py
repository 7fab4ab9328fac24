"""Skipped with its directory."""


def test_skipped():
    return 1
