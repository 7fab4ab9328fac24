"""Loads the backend named by --backend / PARITY_BACKEND and gives every optional hook its default."""
from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import sys
from pathlib import Path

ROLES = ("gold", "candidate")
FIXTURES_PACKAGE = "parity_fixtures"
# The name of the backend `parity run` loaded last; scenario modules are imported after it (see xfail_on).
current_name = None


class BackendError(Exception):
    """The backend cannot be loaded or is malformed; the CLI exits 2 with this message."""


# The checks a backend may declare in DIFFERENCES: all but `missing` and `fidelity`, parity's own failures
# (a copy of src/parity/base/outcome.h's kDeclarableChecks, which tests/vocabulary holds it to).
DECLARABLE_CHECKS = ("structure", "type", "shape", "dtype", "layout", "strides", "writeable", "values", "uncompared",
                     "attrs", "pickle", "assert_eq", "serialize", "error")
_DIFFERENCE_FIELDS = ("id", "check", "reason", "match", "scenarios")
_PATTERN_SCALARS = (str, bool, int, float, type(None))


def _difference_problem(entry) -> str | None:
    """What is wrong with one DIFFERENCES entry (README, "Declared differences"), or None."""
    if not isinstance(entry, dict):
        return "is not a dict"
    unknown = sorted(set(entry) - set(_DIFFERENCE_FIELDS))
    if unknown:
        return f"has unknown keys {unknown} (allowed: {', '.join(_DIFFERENCE_FIELDS)})"
    for key in ("id", "check", "reason"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            return f"needs a non-empty string {key!r}"
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry["id"]):
        return f"id {entry['id']!r} is not lowercase words joined by '-'"
    if entry["check"] not in DECLARABLE_CHECKS:
        return f"check {entry['check']!r} cannot be declared (one of {', '.join(DECLARABLE_CHECKS)})"
    match = entry.get("match", {})
    if not isinstance(match, dict) or not all(
            isinstance(k, str) and (isinstance(v, _PATTERN_SCALARS) or
                                    (isinstance(v, list) and all(isinstance(p, _PATTERN_SCALARS) for p in v)))
            for k, v in match.items()):
        return "match must be a dict of dotted keys to a value or a list of values"
    scenarios = entry.get("scenarios", [])
    if not (isinstance(scenarios, str) or (isinstance(scenarios, list) and all(isinstance(p, str) for p in scenarios))):
        return "scenarios must be a scenario id or glob, or a list of them"
    return None


def _differences(name: str, module) -> list:
    declared = getattr(module, "DIFFERENCES", []) or []
    if not isinstance(declared, (list, tuple)):
        raise BackendError(f"backend {name!r}: DIFFERENCES must be a list of dicts")
    ids = set()
    for index, entry in enumerate(declared):
        problem = _difference_problem(entry)
        if problem is None and entry["id"] in ids:
            problem = f"repeats the id {entry['id']!r}"
        if problem:
            raise BackendError(f"backend {name!r}: DIFFERENCES[{index}] {problem}")
        ids.add(entry["id"])
    return [dict(entry) for entry in declared]


def _policy(name: str, module) -> dict:
    """The backend's POLICY: {policy: value} with names and values of parity's POLICIES (README, "Policies")."""
    from parity._scenario import POLICIES

    policy = getattr(module, "POLICY", {}) or {}
    if not isinstance(policy, dict):
        raise BackendError(f"backend {name!r}: POLICY must be a dict of policy names to values")
    for key, value in policy.items():
        if key not in POLICIES:
            raise BackendError(f"backend {name!r}: POLICY key {key!r} is not one of {', '.join(POLICIES)}")
        if value not in POLICIES[key]:
            raise BackendError(f"backend {name!r}: POLICY[{key!r}] = {value!r} is not one of "
                               f"{', '.join(POLICIES[key])}")
    return dict(policy)


def register_fixtures(fixtures_dir: str):
    """Makes the repo's fixtures/ importable as the package `parity_fixtures` (built-in backends)."""
    if FIXTURES_PACKAGE in sys.modules:
        return
    init = Path(fixtures_dir) / "__init__.py"
    spec = importlib.util.spec_from_file_location(FIXTURES_PACKAGE, init, submodule_search_locations=[fixtures_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[FIXTURES_PACKAGE] = module
    spec.loader.exec_module(module)


def builtin_names() -> list:
    pkg = sys.modules.get(FIXTURES_PACKAGE)
    if pkg is None:
        return []
    return list(_names_under(pkg.__path__[0]))


@functools.lru_cache(maxsize=4)
def _names_under(folder: str) -> tuple:
    """The backend modules under the built-in backends' folder, walked once per process: a run or compare asks
    several times (each side's backend, its reducers), and the installed folder does not change while it runs."""
    root = Path(folder)
    names = [".".join(p.relative_to(root).with_suffix("").parts) for p in root.rglob("*.py")]
    return tuple(sorted(n for n in names if not any(part.startswith("_") for part in n.split("."))))


def _import_spec(spec: str):
    if spec.endswith(".py") or "/" in spec:
        path = Path(spec).resolve()
        if not path.is_file():
            raise BackendError(f"backend file {spec!r} does not exist")
        name = f"parity_backend_{path.stem}"
        mod_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = module
        mod_spec.loader.exec_module(module)
        return module, str(path)
    if spec in builtin_names():
        return importlib.import_module(f"{FIXTURES_PACKAGE}.{spec}"), spec
    return importlib.import_module(spec), spec


class Backend:
    """A backend module with defaults for the hooks it leaves out (see README, 'Backend API')."""

    def __init__(self, name: str, module, spec: str, role: str):
        self.name, self.module, self.spec, self.role = name, module, spec, role
        self._namespace = None
        type_map = getattr(module, "TYPE_MAP", {}) or {}
        if not isinstance(type_map, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in type_map.items()):
            raise BackendError(f"backend {name!r}: TYPE_MAP must be a dict of type names (str -> str)")
        self.type_map = dict(type_map)
        # Attributes an output of a TYPE_MAP type must still have after a reload (cuDF's `_fsproxy_wrapped`).
        required = getattr(module, "REQUIRED_ATTRS", {}) or {}
        if not isinstance(required, dict) or not all(
                isinstance(k, str) and isinstance(v, (list, tuple)) and all(isinstance(a, str) for a in v)
                for k, v in required.items()):
            raise BackendError(f"backend {name!r}: REQUIRED_ATTRS must be a dict of type names to lists of "
                               "attribute names")
        self.required_attrs = {k: list(v) for k, v in required.items()}
        # What the library genuinely does differently from NumPy; compare explains failed checks with them.
        self.differences = _differences(name, module)
        # Policies the library needs for every scenario (a read-only result, say); compare applies them under the
        # run's flags and the scenario's own policy=.
        self.policy = _policy(name, module)
        # Modules whose versions the manifest records beside pandas, scipy, ... when a run has imported them.
        libraries = getattr(module, "LIBRARIES", []) or []
        if not isinstance(libraries, (list, tuple)) or not all(isinstance(m, str) and m for m in libraries):
            raise BackendError(f"backend {name!r}: LIBRARIES must be a list of module names")
        self.libraries = list(libraries)
        # Whether `parity run` may fork its workers from the process that loaded this backend and imported the
        # scenario modules (README, "Backend API"): False for a library whose import or install() creates what a
        # fork cannot copy (a CUDA context, threads holding locks); its workers then each start and import on their own.
        fork_safe = getattr(module, "FORK_SAFE", True)
        if not isinstance(fork_safe, bool):
            raise BackendError(f"backend {name!r}: FORK_SAFE must be True or False")
        self.fork_safe = fork_safe
        # The generic reducer may rebuild subclasses defined by this backend, and by the types it maps to.
        from parity import reducers

        reducers.allow_module(module.__name__)
        for type_name in self.type_map.values():
            reducers.allow_module(type_name.rpartition(".")[0])
        # The mapped types stand for ndarrays: the codec records their array form for compare's array checks.
        to_numpy = getattr(module, "to_numpy", None)
        if to_numpy is not None and not callable(to_numpy):
            raise BackendError(f"backend {name!r}: to_numpy must be a function obj -> numpy.ndarray")
        reducers.set_array_form(self.type_map.values(), to_numpy)

    @property
    def version(self) -> str:
        version = getattr(self.module, "__version__", None)
        if callable(getattr(self.module, "version", None)):
            version = self.module.version()
        return str(version) if version is not None else "unknown"

    def install(self):
        hook = getattr(self.module, "install", None)
        if hook is not None:
            hook()

    def namespace(self):
        if self._namespace is None:
            hook = getattr(self.module, "namespace", None)
            if hook is None:
                import numpy as hook_result
            else:
                hook_result = hook()
            self._namespace = hook_result
        return self._namespace

    def execute(self, fn, *args, **kwargs):
        hook = getattr(self.module, "execute", None)
        return fn(*args, **kwargs) if hook is None else hook(fn, *args, **kwargs)

    def materialize(self, obj):
        hook = getattr(self.module, "materialize", None)
        return obj if hook is None else hook(obj)

    def info(self) -> dict:
        return {"name": self.name, "spec": self.spec, "version": self.version, "role": self.role,
                "module": self.module.__name__, "type_map": self.type_map, "required_attrs": self.required_attrs,
                "differences": self.differences, "policy": self.policy,
                "libraries": self.libraries}


def load(name: str, role: str = "") -> Backend:
    """Imports backend `name`: a built-in (a file under fixtures/), a dotted module path, or a .py path."""
    if not name:
        raise BackendError("no backend given: pass --backend NAME or set PARITY_BACKEND "
                           f"(built-ins: {', '.join(builtin_names())})")
    role = role or ("gold" if name == "gold" else "candidate")
    if role not in ROLES:
        raise BackendError(f"role {role!r} is not one of {', '.join(ROLES)}")
    try:
        module, spec = _import_spec(name)
    except BackendError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise BackendError(f"cannot load backend {name!r}: it is not a built-in backend "
                               f"({', '.join(builtin_names())}) and no module of that name can be imported "
                               f"({exc})") from exc
        raise BackendError(f"backend {name!r} failed to import: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise BackendError(f"backend {name!r} failed to import: {type(exc).__name__}: {exc}") from exc
    global current_name
    current_name = name
    return Backend(name, module, spec, role)
