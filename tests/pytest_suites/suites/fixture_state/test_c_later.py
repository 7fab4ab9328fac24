from seen import note


def test_later():
    return note("later")
