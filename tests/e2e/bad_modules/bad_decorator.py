"""A scenario module with invalid decorator arguments: reported at the module."""
import parity


@parity.scenario(rtol=-1)
def negative_tolerance(xp):
    return xp.ones(2)
