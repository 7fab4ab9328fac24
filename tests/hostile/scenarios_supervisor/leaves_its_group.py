"""Scenarios that move their worker into the supervisor's process group (so a kill of the worker's group misses it)
and hang. PARITY_HOSTILE_MARKS names a directory where each says it has moved."""
import os
import time

import parity


def _move_and_mark(name):
    os.setpgid(0, os.getpgid(os.getppid()))
    marks = os.environ.get("PARITY_HOSTILE_MARKS")
    if marks:
        # Whole under another name, then renamed: the test reads the mark as soon as it exists.
        with open(os.path.join(marks, name + ".part"), "w") as f:
            f.write(str(os.getpid()))
        os.replace(os.path.join(marks, name + ".part"), os.path.join(marks, name))


@parity.scenario(timeout=2)
def hangs_in_another_group(xp):
    _move_and_mark("hangs_in_another_group")
    time.sleep(3600)


@parity.scenario
def hangs_in_another_group_without_a_timeout(xp):
    _move_and_mark("hangs_in_another_group_without_a_timeout")
    time.sleep(3600)
