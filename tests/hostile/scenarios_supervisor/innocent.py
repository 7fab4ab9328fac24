"""An ordinary module imported after infinite_timeout.py: it must never be blamed for another module's problem."""
import parity


@parity.scenario
def runs(xp):
    return {"a": xp.ones(3)}
