"""What a test saw of the state the fixtures set, written to $FIXTURE_SEEN/<name>.json."""
import json
import os
import signal

import numpy as np


def _name(handler):
    """A Python handler's name, or SIG_DFL's and SIG_IGN's number."""
    return getattr(handler, "__name__", None) or int(handler)


def note(name):
    umask = os.umask(0o022)
    os.umask(umask)
    seen = {"mode": os.environ.get("SUITE_MODE"), "offline": os.environ.get("SUITE_OFFLINE"), "umask": umask,
            "usr2": _name(signal.getsignal(signal.SIGUSR2)),
            "divide": np.geterr()["divide"]}
    with open(os.path.join(os.environ["FIXTURE_SEEN"], f"{name}.json"), "w") as f:
        json.dump(seen, f)
    return np.array([1])
