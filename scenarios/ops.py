"""Scenarios generated from the operation registry (parity.ops): `ops.<operation>[layout=...,dtype=...]`.

By default each operation runs over a few (layout, dtype) variants drawn with a fixed seed; PARITY_OPS=full runs the
whole product (the nightly workflow does), PARITY_OPS=N draws N per operation (README, "Operation registry")."""
import os

import parity
from parity.ops import REGISTRY, sampled

# How many variants of each operation the default corpus holds; 0 is the full product.
_SETTING = os.environ.get("PARITY_OPS", "").strip().lower()
PER_OP = 0 if _SETTING == "full" else int(_SETTING) if _SETTING.isdigit() else 1


def _scenario_for(op):
    def run(xp, rng, layout, dtype):
        return op.run(xp, rng, layout, dtype)

    run.__name__ = run.__qualname__ = op.scenario_name
    return run


def _register_all():
    functions = {}
    for op, layout, dtype in sampled(REGISTRY.values(), per_op=PER_OP):
        fn = functions.get(op.name) or functions.setdefault(op.name, _scenario_for(op))
        xfail = parity.xfail_on(op.differences) if op.differences else None
        parity.scenario(fn, params={"layout": [layout], "dtype": [dtype]}, rtol=op.rtol, tags=["ops", op.kind],
                        xfail=xfail)


_register_all()
