"""A helper module of the suite, imported by its tests and conftest: it imports numpy itself, as they do."""
import os

import numpy as np


def made_type_name():
    """The class of an array this module makes."""
    return type(np.ones(2)).__name__


def log_fixture(event, name):
    """Appends `event name pid` to $PARITY_SUITE_FIXTURE_LOG when set: how often each fixture is set up and torn
    down, and in which worker."""
    path = os.environ.get("PARITY_SUITE_FIXTURE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{event} {name} {os.getpid()}\n")
