"""A scenario that leaves processes behind: a child in its worker's group and a double-forked daemon in a session
of its own. Their pids go to PARITY_HOSTILE_MARKS/children."""
import os
import subprocess

import parity


def _daemon():
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    os.setsid()
    grandchild = os.fork()
    if grandchild:
        with open(os.path.join(os.environ["PARITY_HOSTILE_MARKS"], "daemon"), "w") as f:
            f.write(str(grandchild))
        os._exit(0)
    os.closerange(3, 65536)
    os.execv("/bin/sleep", ["sleep", "300"])


@parity.scenario
def leaves_children(xp):
    child = subprocess.Popen(["sleep", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(os.environ["PARITY_HOSTILE_MARKS"], "child"), "w") as f:
        f.write(str(child.pid))
    _daemon()
    return {"a": xp.zeros(2)}
