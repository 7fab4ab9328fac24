"""An ordinary scenario module beside one whose import crashes: it must still run."""
import parity


@parity.scenario
def still_runs(xp):
    return {"a": xp.arange(3)}
