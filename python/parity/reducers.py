"""Reducers: how the codec writes objects it has no native form for (a type name and a state) and rebuilds them.

A reducer turns an object into a *state* made of values the codec carries (dicts, lists, arrays, scalars,
other reduced objects) and rebuilds the object from it. For ndarray subclasses the array itself (values,
dtype, strides, flags) travels as a plain ndarray beside the state, so a reducer only handles what the
subclass adds. Built-in reducers use this same API; see README, "Reducers".
"""
from __future__ import annotations

import importlib
import inspect
import os
import sys
import types
from dataclasses import dataclass
from typing import Callable

import numpy as np


class RebuildError(Exception):
    """A file names a reducer or type that may not be rebuilt here (unknown, or not on the allow-list)."""


@dataclass(frozen=True)
class Reducer:
    name: str            # written to files; rebuilding looks it up by this name
    cls: type | None     # instances of exactly this type use it (None: the generic ndarray-subclass reducer)
    reduce: Callable     # obj -> state
    rebuild: Callable    # state -> obj, or (values, state) -> obj for ndarray subclasses
    is_array: bool       # an ndarray subclass: its data travels as a plain ndarray beside the state
    volatile: tuple = ()  # state keys whose values differ from run to run; compare checks only their None-ness
    typed: bool = False   # rebuild(state, type_name): one reducer for a family of classes (fitted estimators)


_by_name: dict = {}
_by_type: dict = {}
# Modules whose ndarray subclasses the generic reducer may rebuild from a type name found in a file.
_allowed_modules: set = {"numpy"}

GENERIC = "ndarray-subclass"


def qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register(cls: type, reduce: Callable, rebuild: Callable, *, name: str | None = None,
             volatile: tuple = ()) -> Reducer:
    """Registers how instances of exactly `cls` are written and rebuilt.

    For an ndarray subclass, `reduce(obj)` returns the state the subclass adds and `rebuild(values, state)`
    gets the plain ndarray back with that state. For any other type, `reduce(obj)` returns the whole state
    and `rebuild(state)` the object. `name` (default: the qualified type name) is what files record.
    `volatile` names keys of a dict state whose values legitimately differ between two runs (a file name);
    the attrs check compares only whether both sides have one.
    """
    is_array = isinstance(cls, type) and issubclass(cls, np.ndarray)
    reducer = Reducer(name or qualified_name(cls), cls, reduce, rebuild, is_array, tuple(volatile))
    if reducer.name in _by_name and _by_name[reducer.name].cls is not cls:
        raise ValueError(f"a reducer named {reducer.name!r} is already registered for {_by_name[reducer.name].cls}")
    _by_name[reducer.name] = _by_type[cls] = reducer
    _like.clear()
    return reducer


def register_family(name: str, reduce: Callable, rebuild: Callable, *, volatile: tuple = ()) -> Reducer:
    """Registers a reducer for a family of (non-array) classes: rebuild(state, type_name) gets the class's name.
    Classes join it with use_family. `volatile` as for register()."""
    reducer = Reducer(name, None, reduce, rebuild, False, tuple(volatile), typed=True)
    if name in _by_name and _by_name[name] != reducer:
        raise ValueError(f"a reducer named {name!r} is already registered")
    _by_name[name] = reducer
    return reducer


def use_family(cls: type, name: str) -> Reducer:
    """Instances of exactly `cls` use the family reducer registered as `name`."""
    _by_type[cls] = _by_name[name]
    _like.clear()
    return _by_type[cls]


def allow_module(name: str) -> None:
    """Lets the generic reducer rebuild ndarray subclasses defined in module `name` (and its submodules)."""
    _allowed_modules.add(name)


def allowed_modules() -> list:
    return sorted(_allowed_modules)


def _module_allowed(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in _allowed_modules)


def reduce(obj):
    """(reducer name, state) for an object the codec has no native form for, or None if none applies. A class of
    the same qualified name as a registered one uses its reducer (registered_like: pint's per-registry Quantity)."""
    reducer = registered_like(type(obj))
    if reducer is not None:
        return reducer.name, reducer.reduce(obj)
    if isinstance(obj, np.ndarray):
        return GENERIC, dict(vars(obj))
    return None


def _library(name: str) -> str:
    return name.partition(".")[0]


def _in_numpy_ma(name: str) -> bool:
    return name == "numpy.ma" or name.startswith("numpy.ma.")


def _library_reducer(cls: type):
    """parity's built-in reducer for a numpy.ma, pandas, scipy.sparse or scikit-learn type, registered on first use
    (so that no backend, the gold one included, imports those libraries unless an output is such an object)."""
    if _in_numpy_ma(cls.__module__):
        _register_masked()
        return _by_type.get(cls)
    if _library(cls.__module__) not in _LIBRARIES:
        return None
    from parity import library_reducers
    return library_reducers.reducer_for(cls)


def _by_name_or_library(reducer_name: str):
    """The reducer named `reducer_name`; a built-in library one ("pandas.DataFrame") is registered on demand:
    the name selects parity's own code, which imports the installed library, never a module the file names."""
    reducer = _by_name.get(reducer_name)
    if reducer is None and _in_numpy_ma(reducer_name.rpartition(".")[0]):
        _register_masked()
        return _by_name.get(reducer_name)
    if reducer is None:
        from parity import library_reducers
        if library_reducers.ensure(_library(reducer_name)):
            reducer = _by_name.get(reducer_name)
    return reducer


def has_reducer(obj) -> bool:
    """Whether `obj`'s exact type has a registered or built-in library reducer (a dict subclass such as scipy's
    dok_matrix is then written through it, not as a dict)."""
    return (_by_type.get(type(obj)) or _library_reducer(type(obj))) is not None


def registered(cls: type) -> Reducer | None:
    """The reducer registered for exactly `cls` (not the generic one), or None."""
    if _in_numpy_ma(getattr(cls, "__module__", None) or ""):
        _register_masked()
    return _by_type.get(cls)


# Types that stand for numpy.ndarray (a backend's TYPE_MAP values), each with the backend's to_numpy hook or None.
_array_form_types: dict = {}


def set_array_form(type_names, hook: Callable | None = None) -> None:
    """Declares that instances of the types named in `type_names` (qualified names, as TYPE_MAP writes them) stand
    for numpy.ndarray: the codec records their array form (array_form) beside their reducer's state, and compare
    checks it against gold's array with every array check. `hook(obj)`, when given, is the backend's to_numpy."""
    for name in type_names:
        _array_form_types[name] = hook


def _as_plain_array(value) -> np.ndarray:
    array = np.asarray(value)
    return array if type(array) is np.ndarray else array.view(np.ndarray)


def array_form(obj) -> np.ndarray | None:
    """The plain ndarray an object of a registered array-form type (set_array_form) stands for, through, in order,
    the backend's to_numpy hook, `obj.__array__()` and DLPack; None when its type is not registered or none of
    them works (compare then reports the leaf `uncompared`, saying why)."""
    name = qualified_name(type(obj))
    if isinstance(obj, np.ndarray) or name not in _array_form_types:
        return None
    hook = _array_form_types[name]
    ways = [hook] if hook is not None else []
    if hasattr(obj, "__array__"):
        ways.append(np.asarray)
    if hasattr(obj, "__dlpack__"):
        ways.append(np.from_dlpack)
    for way in ways:
        try:
            return _as_plain_array(way(obj))
        except Exception:  # the next way may work: a device array refuses __array__ but speaks DLPack
            continue
    return None


# registered_like's answers for types outside the libraries _library_reducer registers on demand, until the next
# registration: the probes ask for every array they walk, and a miss scans every registered type.
_like: dict = {}
_LIBRARIES = ("pandas", "scipy", "sklearn")


def registered_like(cls: type) -> Reducer | None:
    """The reducer registered for `cls`, else one registered for a type of the same qualified name: pint makes a
    Quantity class per unit registry, and an object of another registry's class is still a pint.Quantity."""
    if cls in _like:
        return _like[cls]
    reducer = _by_type.get(cls) or _library_reducer(cls)
    if reducer is None:
        name = qualified_name(cls)
        # By the registered class (a family reducer serves many classes and names none).
        reducer = next((r for c, r in list(_by_type.items()) if qualified_name(c) == name), None)
    if _library(cls.__module__) not in _LIBRARIES:
        _like[cls] = reducer
    return reducer


def volatile_keys(reducer_name: str) -> list:
    """The volatile state keys of the reducer named `reducer_name` (none for unknown names). A built-in library
    reducer is registered on demand, as rebuild() does: what compare checks must not depend on whether an earlier
    scenario of the same compare happened to register it."""
    reducer = _by_name_or_library(reducer_name)
    return list(reducer.volatile) if reducer is not None else []


def loaded_type(type_name: str):
    """The type named `type_name` if its module is already imported, else None. Never imports anything, so a
    type name read from a result file runs no code."""
    parts = type_name.split(".")
    for split in range(len(parts) - 1, 0, -1):
        obj = sys.modules.get(".".join(parts[:split]))
        if obj is None:
            continue
        for part in parts[split:]:
            obj = _static_attribute(obj, part)
        return obj if isinstance(obj, type) else None
    return None


def _static_attribute(obj, name: str):
    """obj.name without running code: a module's own dictionary (NumPy's module __getattr__ imports the submodule it
    is asked for: numpy.f2py, numpy.matlib), a class's attribute as stored (no property, no metaclass __getattr__)."""
    if isinstance(obj, types.ModuleType):
        return vars(obj).get(name)
    return inspect.getattr_static(obj, name, None)


def is_subclass(type_name: str, base_name: str) -> bool:
    """Whether the (loaded) type `type_name` derives from `base_name`; False when either is not loaded."""
    cls, base = loaded_type(type_name), loaded_type(base_name)
    return cls is not None and base is not None and issubclass(cls, base)


# NumPy's own submodules that define ndarray subclasses and that NumPy imports only when first used (np.char's
# chararray, np.rec's recarray): imported here, from this list, for a type of theirs, never for a name a file holds
# alone. A compare had rebuilt one only when some other scenario's module happened to import them first.
_NUMPY_SUBCLASS_MODULES = ("numpy.char", "numpy.rec")


def _resolve_array_type(type_name: str) -> type:
    module = type_name.rpartition(".")[0]
    if not _module_allowed(module):
        raise RebuildError(f"type {type_name} is not rebuilt: module {module!r} is not on the allow-list "
                           f"({', '.join(allowed_modules())}); a backend adds its modules with "
                           "parity.reducers.allow_module()")
    # Only among modules already imported (a trusted backend's, NumPy's): importing a module a file names would
    # run its code (numpy.f2py.__main__ runs f2py's command line).
    obj = loaded_type(type_name)
    if obj is None and module in _NUMPY_SUBCLASS_MODULES:
        importlib.import_module(module)
        obj = loaded_type(type_name)
    if obj is None:
        raise RebuildError(f"type {type_name} is not rebuilt: no module already imported here defines it (compare "
                           "never imports a module a file names)")
    if not (isinstance(obj, type) and issubclass(obj, np.ndarray)):
        raise RebuildError(f"type {type_name} is not an ndarray subclass")
    return obj


def rebuild(reducer_name: str, type_name: str, values, state):
    """Rebuilds one reduced object; `values` is the plain ndarray for ndarray subclasses, else None."""
    if reducer_name == GENERIC:
        obj = values.view(_resolve_array_type(type_name))
        obj.__dict__.update(state or {})
        return obj
    reducer = _by_name_or_library(reducer_name)
    if reducer is None:
        raise RebuildError(f"no reducer named {reducer_name!r} is registered (type {type_name})")
    if reducer.typed:
        return reducer.rebuild(state, type_name)
    return reducer.rebuild(values, state) if reducer.is_array else reducer.rebuild(state)


# ---------------------------------------------------------------------------------------------------------
# Built-in reducers, registered through the public API.

def _masked_reduce(a):
    # The fill value in effect, with its own dtype: numpy.ma makes an integer array's default an int64 whatever
    # the data's dtype, and a / b keeps a's int fill in a float result. Rebuilding through `fill_value=` would
    # cast it to the data's dtype and the reloaded array would differ from the one written, so _masked_rebuild
    # sets it as it was. Read through a view: the getter caches numpy.ma's default into the array it is read
    # from, and the output itself must stay as the scenario left it (it is pickled after being written).
    fill = a.fill_value if a._fill_value is not None else a.view().fill_value
    return {"mask": np.ma.getmask(a), "fill_value": fill, "hardmask": bool(a.hardmask)}


def _masked_rebuild(values, state):
    rebuilt = np.ma.MaskedArray(values, mask=state["mask"], hard_mask=state["hardmask"], copy=False)
    rebuilt._fill_value = np.asarray(state["fill_value"])  # numpy.ma's own storage: a 0-d array of any dtype
    mask = state["mask"]
    if isinstance(mask, np.ndarray) and type(mask) is not np.ndarray and mask.shape == rebuilt.shape:
        # The constructor makes any mask a plain ndarray; a proxy's mask (fsproxy's ProxyNDArray, which its domained
        # ufuncs leave there) is put back as written, so the reloaded output is the one the scenario produced.
        rebuilt._mask = mask
    return rebuilt


def _memmap_reduce(a):
    # An unpickled memmap has no file: filename, offset and mode are all None (the pickle probe reduces it too).
    return {"filename": None if a.filename is None else str(a.filename),
            "offset": None if a.offset is None else int(a.offset), "mode": a.mode}


def _map_recorded_file(values, state):
    """The recorded file mapped read-only, if it still exists and holds exactly these values; else None."""
    filename = state["filename"]
    if not filename or not os.path.isfile(filename) or not (values.flags.c_contiguous or values.flags.f_contiguous):
        return None
    order = "C" if values.flags.c_contiguous else "F"
    try:
        mapped = np.memmap(filename, dtype=values.dtype, mode="r", offset=state["offset"], shape=values.shape,
                           order=order)
    except (OSError, ValueError):
        return None
    # A view's offset attribute is its base's, and the file may have changed since: check the data.
    return mapped if mapped.tobytes(order="A") == values.tobytes(order="A") else None


def _memmap_rebuild(values, state):
    # PARITY_MAP_MEMMAPS=1 asks for the real mapping of the recorded file, read-only, when it still holds
    # these values. Otherwise an in-memory array of type memmap: the file may be gone by the time results
    # are read.
    if os.environ.get("PARITY_MAP_MEMMAPS") == "1":
        mapped = _map_recorded_file(values, state)
        if mapped is not None:
            return mapped
    out = values.view(np.memmap)
    out.filename, out.offset, out.mode = state["filename"], state["offset"], state["mode"]
    return out


def _register_masked() -> None:
    """numpy.ma's reducer, registered when a MaskedArray is first written or rebuilt: importing numpy.ma takes about as
    long as the rest of parity's modules, in every process, most of which never meet a masked array. A MaskedArray
    exists only once numpy.ma is imported, and a file's reducer name selects this code, never a module to import.
    A reducer a backend registered for it first stays."""
    import numpy.ma

    if numpy.ma.MaskedArray not in _by_type:
        register(numpy.ma.MaskedArray, _masked_reduce, _masked_rebuild)


register(np.memmap, _memmap_reduce, _memmap_rebuild, volatile=("filename",))
register(np.matrix, lambda a: None, lambda values, state: values.view(np.matrix))
register(np.recarray, lambda a: None, lambda values, state: values.view(np.recarray))
