"""The operation registry (registry.py) and its layout matrix (layouts.py), from which scenarios/ops.py generates
scenarios; see README, "Operation registry"."""
from parity.ops.layouts import LAYOUTS
from parity.ops.registry import KINDS, REGISTRY, Op, register, sampled

__all__ = ["KINDS", "LAYOUTS", "Op", "REGISTRY", "register", "sampled"]
