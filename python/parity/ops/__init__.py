"""The operation registry (registry.py) and its layout matrix (layouts.py), from which scenarios are generated
(`generate`, which scenarios/ops.py calls); see README, "Operation registry"."""
import os
import sys

from parity.ops.layouts import LAYOUTS
from parity.ops.registry import KINDS, REGISTRY, Op, register, sampled

__all__ = ["KINDS", "LAYOUTS", "Op", "REGISTRY", "generate", "per_op_setting", "register", "sampled",
           "skip_unchecked"]

ENV = "PARITY_OPS"  # "full": every (layout, dtype) of every operation; N: N per operation; unset: 1


def per_op_setting() -> int:
    """How many variants of each operation to generate, from PARITY_OPS; 0 is the full product."""
    setting = os.environ.get(ENV, "").strip().lower()
    if setting == "full":
        return 0
    if setting.isdigit() and int(setting) > 0:
        return int(setting)
    if setting:
        raise ValueError(f"{ENV}={setting!r}: expected 'full' or a positive number of variants per operation")
    return 1


def _scenario_for(op, module):
    def run(xp, rng, layout, dtype):
        missing = op.unavailable()
        if missing:
            import parity

            parity.skip(missing)
        return op.run(xp, rng, layout, dtype)

    # The scenario module's own function, by name, as a hand-written one is: a backend that re-imports the module
    # in another process (joblib) finds it there.
    run.__name__ = run.__qualname__ = op.scenario_name
    run.__module__ = module["__name__"]
    module.setdefault(op.scenario_name, run)
    return run


def skip_unchecked(fn, library: str):
    """For a backend whose differences over the generated scenarios are not declared yet: skips them, saying so
    (a skip is reported, never a pass)."""
    if "ops" in getattr(fn, "__parity_tags__", ()):
        import parity

        parity.skip(f"the operation registry's scenarios are not yet checked against {library}: its differences "
                    "over them are to be declared (README, \"Operation registry\")")


def generate(ops=None, per_op=None):
    """Declares the scenarios of `ops` (default: the whole registry) from the calling scenario module: `per_op`
    (default: PARITY_OPS) variants of each, drawn with a fixed seed, ids `<module>.<op>[layout=...,dtype=...]`."""
    import parity

    per_op = per_op_setting() if per_op is None else per_op
    module = sys._getframe(1).f_globals
    functions = {}
    for op, layout, dtype in sampled(REGISTRY.values() if ops is None else ops, per_op=per_op):
        fn = functions.get(op.name) or functions.setdefault(op.name, _scenario_for(op, module))
        xfail = parity.xfail_on(op.differences) if op.differences else None
        parity.scenario(fn, params={"layout": [layout], "dtype": [dtype]}, rtol=op.rtol, tags=["ops", op.kind],
                        xfail=xfail)
