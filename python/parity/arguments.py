"""The rules for parity's number, flag, text and mapping arguments, shared by @parity.scenario and the Python API."""
import math
import numbers
from collections.abc import Mapping

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
    try:
        finite = math.isfinite(value)  # converts to a float: 10**400 or a Fraction of it overflows
    except OverflowError:
        finite = False
    if not finite or (value <= 0 if positive else value < 0):
        raise ValueError(complaint)
    return float(value)


def optional(rule, name: str, value, **options):
    """None when `value` is None (the default applies: the runs' timeout, the per-dtype tolerance, the engine's
    memory limit), else `rule(name, value, **options)`."""
    return None if value is None else rule(name, value, **options)


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
    """`value` as a bool when it is True or False, or NumPy's (np.True_, what comparing NumPy values gives), else a
    TypeError naming `name`: bool("no") is True. NumPy's bool is known by its type's module and name, so that this
    module, which every worker and compare imports, does not import NumPy."""
    if isinstance(value, bool):
        return value
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__ in ("bool", "bool_"):  # bool_ before NumPy 2
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r}")


def text(name: str, value) -> str:
    """`value` when it is a str UTF-8 can encode (the engine's text), else a TypeError (no str: str() had taken
    anything, None becoming "None") or a ValueError (a lone surrogate: pybind11 refused it without naming the
    argument), naming `name` and `value`."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {value!r}")
    try:
        value.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{name} must be text that UTF-8 can encode, got {value!r}") from None
    return value


def mapping(name: str, value) -> dict:
    """`value` as a dict (None: empty); a TypeError naming `name` and `value` when it is no mapping: dict() took a
    list of pairs, and a list like ["ab"], as one."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict, got {value!r}")
    return dict(value)


def str_mapping(name: str, value) -> dict:
    """`value` as a dict of str to str (a policy by name, a type map), else a TypeError naming `name` and the entry:
    the engine took a policy value by its str() and refused another type_map with pybind11's list of signatures."""
    given = mapping(name, value)
    for key, item in given.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise TypeError(f"{name} must map str to str, got {key!r}: {item!r}")
    return given


def output_tolerances(name: str, value) -> dict:
    """`value` as {output path: {"rtol": r, "atol": a}}, a path such as "outputs['x']" covering its subtree and each
    tolerance a finite_number. A path elsewhere matched no value, and {} loosened nothing: both a ValueError naming
    the entry, as a key or an entry of another type is a TypeError."""
    checked = {}
    for path, spec in mapping(name, value).items():
        if not isinstance(path, str):
            raise TypeError(f"{name} key {path!r} must be an output path such as \"outputs['x']\"")
        if not path.startswith("outputs"):
            raise ValueError(f"{name} key {path!r} must be an output path such as \"outputs['x']\"")
        complaint = f"{name}[{path!r}] must be a dict with 'rtol' and/or 'atol', got {spec!r}"
        if not isinstance(spec, Mapping):
            raise TypeError(complaint)
        if not spec or set(spec) - {"rtol", "atol"}:
            raise ValueError(complaint)
        checked[path] = {key: finite_number(f"{name}[{path!r}][{key!r}]", tolerance) for key, tolerance in spec.items()}
    return checked
