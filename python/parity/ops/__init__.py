"""The operation registry (registry.py) and its layout matrix (layouts.py), from which scenarios are generated
(`generate`, which scenarios/ops.py calls); see README, "Operation registry"."""
import fnmatch
import glob
import os
import re
import sys

from parity.ops.layouts import LAYOUTS
from parity.ops.registry import KINDS, REGISTRY, Op, register, sampled

__all__ = ["KINDS", "LAYOUTS", "Op", "REGISTRY", "generate", "generated_ids", "in_play", "per_op_setting",
           "register", "sampled", "variants"]

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


def generated_ids(per_op=None) -> list:
    """The ids scenarios/ops.py generates under `per_op` (default: PARITY_OPS)."""
    per_op = per_op_setting() if per_op is None else per_op
    return [f"ops.{op.scenario_name}[layout={layout},dtype={dtype}]" for op, layout, dtype in sampled(per_op=per_op)]


def variants(name: str, layouts=("*",), dtypes=("*",)) -> list:
    """Scenario globs (for a DIFFERENCES entry's `scenarios`) of the registry operation `name`'s variants in these
    layouts and dtypes (globs themselves): `variants("trace", dtypes=["complex*"])`."""
    scenario = name.replace(".", "_")
    return [glob.escape(f"ops.{scenario}[layout=") + f"{layout}," + glob.escape("dtype=") + f"{dtype}]"
            for layout in layouts for dtype in dtypes]


def in_play(differences: list, per_op=None) -> list:
    """A backend's DIFFERENCES without the entries about generated scenarios this corpus does not generate.

    An entry whose `scenarios` are all `ops.` globs is about variants of the operation registry; the default sample
    draws one variant per operation, PARITY_OPS=full all of them. An entry about variants the sample lacks (matmul
    with out=, trace of complex numbers) would be stale there, and `compare --strict-differences` fails on a stale
    entry; leaving it out keeps that check strict: an entry kept must still explain something."""
    ids = None
    kept = []
    for entry in differences:
        scenarios = entry.get("scenarios") or []
        scenarios = [scenarios] if isinstance(scenarios, str) else scenarios
        if not scenarios or not all(pattern.startswith("ops.") for pattern in scenarios):
            kept.append(entry)
            continue
        ids = generated_ids(per_op) if ids is None else ids
        matches = re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in scenarios)).match
        if any(matches(scenario_id) for scenario_id in ids):
            kept.append(entry)
    return kept


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
