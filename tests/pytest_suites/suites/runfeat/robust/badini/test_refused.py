"""Never collected: its suite's pytest.ini has an addopts pytest refuses."""


def test_refused():
    return 1
