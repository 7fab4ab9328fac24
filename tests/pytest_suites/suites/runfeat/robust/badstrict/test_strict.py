"""Never run: its suite's xfail_strict is not a truth value."""


def test_strict():
    return 1
