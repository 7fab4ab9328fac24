"""Never collected: the conftest beside it kills the worker."""


def test_under():
    return 1
