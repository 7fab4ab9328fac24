"""A scenario module that imports fine, next to one that does not."""
import parity


@parity.scenario
def fine(xp):
    return xp.ones(3)
