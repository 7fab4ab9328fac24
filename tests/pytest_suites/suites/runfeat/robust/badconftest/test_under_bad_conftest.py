"""Under a conftest that fails to import."""


def test_under():
    return 1
