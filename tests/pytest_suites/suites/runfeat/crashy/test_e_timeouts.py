"""A test that sleeps past the run's --timeout, and one whose own pytest-timeout mark is shorter than the run's."""
import time

import pytest


def test_sleeps_past_the_run_timeout():
    time.sleep(60)
    return 1


@pytest.mark.timeout(timeout=1)  # pytest-timeout takes timeout(1) too
def test_sleeps_past_its_own_timeout():
    time.sleep(3)
    return 1


def test_after_the_timeouts():
    return 2
