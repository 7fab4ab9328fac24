"""A scenario module with timeout=float("inf"): JSON cannot carry it, so the decorator must refuse it."""
import parity


@parity.scenario(timeout=float("inf"))
def never_times_out(xp):
    return {"a": xp.zeros(2)}
