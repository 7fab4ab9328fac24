"""A native scenario module beside pytest test files: both kinds run from one directory."""
import parity


@parity.scenario()
def doubled(xp):
    return {"d": xp.arange(3) * 2}
