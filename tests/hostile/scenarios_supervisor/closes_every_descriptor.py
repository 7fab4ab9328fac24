"""A scenario that closes every descriptor above 2 (the reply pipe among them) and then runs on."""
import os
import time

import parity


@parity.scenario
def closes_everything_and_sleeps(xp):
    os.closerange(3, 65536)
    time.sleep(3600)
