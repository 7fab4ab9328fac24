"""A scenario that closes descriptors 3 and 4, as daemon or test-runner code may: the protocol must not be there."""
import os

import parity


@parity.scenario
def closes_3_and_4(xp):
    for fd in (3, 4):
        try:
            os.close(fd)
        except OSError:  # nothing open there
            pass
    return {"a": xp.arange(3)}
