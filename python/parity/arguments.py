"""The rules for parity's number and flag arguments, shared by @parity.scenario and the Python API (parity.api)."""
import math
import numbers

# The largest count of bytes the engine holds (a uint64_t, `compare --max-result-memory`).
MAX_BYTES = 2**64 - 1


def finite_number(name: str, value, *, positive=False, unit="", note="") -> float:
    """`value` as a float. TypeError when it is no real number (a bool is none); ValueError when it is NaN, infinite,
    below 0 or, when `positive`, 0. The message names `name` and `value`, and `note` says what a value means (a
    timeout's "0: none"). These are `parity compare`'s rules for its numbers (src/parity/cli/main.cc, finite_number):
    NaN compares false with every limit, so a NaN timeout was no limit and a NaN tolerance failed every value."""
    unit = f" of {unit}" if unit else ""
    wanted = f"a finite positive number{unit}" if positive else f"a finite number{unit} >= 0"
    complaint = f"{name} must be {wanted}{f' ({note})' if note else ''}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(complaint)
    if not math.isfinite(value) or (value <= 0 if positive else value < 0):
        raise ValueError(complaint)
    return float(value)


def byte_count(name: str, value) -> int:
    """`value` as an int of bytes from 1 to MAX_BYTES (compare's --max-result-memory): TypeError when it is no whole
    number (a bool or a float is none), ValueError when it is out of that range, naming `name` and `value`."""
    complaint = f"{name} must be a whole number of bytes from 1 to {MAX_BYTES}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(complaint)
    if not 1 <= value <= MAX_BYTES:
        raise ValueError(complaint)
    return int(value)


def flag(name: str, value) -> bool:
    """`value` when it is True or False, else a TypeError naming `name`: bool("no") is True."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value
