"""`parity coverage`: which of NumPy's public callables the selected corpus calls, measured during a gold run.

This module is both halves. As a backend (`parity run --backend parity.coverage`, which `parity coverage` starts) it
is gold with every public callable of numpy, numpy.linalg, numpy.fft and numpy.ma replaced by a recorder, and the
scenario's rng by a Generator whose methods record; a call counts only when corpus code makes it (a scenario module,
or a module that sets `__parity_corpus__ = True`, such as the operation registry), never NumPy's calls to itself.
Each worker appends what each scenario called to a file in $PARITY_COVERAGE_DIR; `report()` adds them up.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy
import numpy.fft
import numpy.linalg
import numpy.ma

__version__ = numpy.__version__

ENV_DIR = "PARITY_COVERAGE_DIR"
GENERATOR = "numpy.random.Generator"
NAMESPACES = ("numpy", "numpy.linalg", "numpy.fft", GENERATOR, "numpy.ma")
# Not operations on arrays: the test runner and what describes the installation.
EXCLUDED = frozenset({"test", "show_config", "show_runtime", "info", "get_include"})


def _public(obj) -> dict:
    """name -> callable for the public, callable, non-class attributes of a module or class."""
    found = {}
    for name in dir(obj):
        if name.startswith("_") or name in EXCLUDED:
            continue
        value = getattr(obj, name, None)
        if callable(value) and not isinstance(value, type):
            found[name] = value
    return found


def public_callables() -> dict:
    """{namespace: {name: callable}} of what coverage measures (NAMESPACES)."""
    return {"numpy": _public(numpy), "numpy.linalg": _public(numpy.linalg), "numpy.fft": _public(numpy.fft),
            GENERATOR: _public(numpy.random.Generator), "numpy.ma": _public(numpy.ma)}


# --- recording, in the gold run's workers ------------------------------------------------------------------------

_called: set = set()  # qualified names the running scenario's code called


def _is_corpus(frame) -> bool:
    from parity.discovery import is_scenario_module

    module_globals = frame.f_globals
    return module_globals.get("__parity_corpus__") is True or is_scenario_module(module_globals)


class _Recorder:
    """Stands in for one public callable: records a call from corpus code, then makes it; attributes (add.reduce,
    nin) are the real callable's."""

    __slots__ = ("_parity_wrapped", "_parity_name")

    def __init__(self, wrapped, name):
        object.__setattr__(self, "_parity_wrapped", wrapped)
        object.__setattr__(self, "_parity_name", name)

    def __call__(self, *args, **kwargs):
        if _is_corpus(sys._getframe(1)):
            _called.add(self._parity_name)
        return self._parity_wrapped(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._parity_wrapped, name)

    def __repr__(self):
        return repr(self._parity_wrapped)

    # Equal to, and hashed as, what it records: dicts keyed by ufuncs (numpy.ma's domains) still find it.
    def __eq__(self, other):
        return self._parity_wrapped == getattr(other, "_parity_wrapped", other)

    def __hash__(self):
        return hash(self._parity_wrapped)

    def __reduce__(self):  # pickled (joblib) as the callable it records
        return (_unwrap_name, (self._parity_name,))


def _unwrap_name(name):
    namespace, _, attr = name.rpartition(".")
    value = getattr(sys.modules[namespace], attr)
    return getattr(value, "_parity_wrapped", value)


def _recording_method(name):
    real = getattr(numpy.random.Generator, name)
    qualified = f"{GENERATOR}.{name}"

    def method(self, *args, **kwargs):
        if _is_corpus(sys._getframe(1)):
            _called.add(qualified)
        return real(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


class RecordingGenerator(numpy.random.Generator):
    """A Generator on the same bit generator (the same stream) whose public methods record their calls."""


for _name in _public(numpy.random.Generator):
    setattr(RecordingGenerator, _name, _recording_method(_name))


def recording_generator(generator):
    return RecordingGenerator(generator.bit_generator)


_MODULES = {"numpy": numpy, "numpy.linalg": numpy.linalg, "numpy.fft": numpy.fft, "numpy.ma": numpy.ma}
_installed = False


def install():
    """Puts the recorders in place before scenario modules import numpy's names (the backend's install hook)."""
    global _installed
    if _installed:
        return
    _installed = True
    for namespace, names in public_callables().items():
        module = _MODULES.get(namespace)
        for name, value in names.items():
            if module is not None:
                setattr(module, name, _Recorder(value, f"{namespace}.{name}"))
    real_default_rng = numpy.random.default_rng
    numpy.random.default_rng = lambda *args, **kwargs: recording_generator(real_default_rng(*args, **kwargs))


def _scenario_id(fn) -> str:
    """The id of the scenario being run: Scenario.call's `self`, a few frames up; else the function's name."""
    from parity._scenario import Scenario

    frame = sys._getframe(1)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, Scenario):
            return owner.id
        frame = frame.f_back
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"


def execute(fn, *args, **kwargs):
    """Runs the scenario as gold does, with a recording rng, and appends what it called to this worker's file."""
    if isinstance(kwargs.get("rng"), numpy.random.Generator):
        kwargs["rng"] = recording_generator(kwargs["rng"])
    _called.clear()
    try:
        return fn(*args, **kwargs)
    finally:
        _flush(_scenario_id(fn))


def _flush(scenario_id):
    folder = os.environ.get(ENV_DIR)
    if not folder:
        return
    line = json.dumps({"scenario": scenario_id, "called": sorted(_called)}) + "\n"
    with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as file:
        file.write(line)


# --- the report -------------------------------------------------------------------------------------------------


def read_calls(folder) -> dict:
    """{qualified name: sorted scenario ids} from the workers' files in `folder`."""
    reached = {}
    for path in sorted(Path(folder).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                for name in record["called"]:
                    reached.setdefault(name, set()).add(record["scenario"])
    return {name: sorted(ids) for name, ids in reached.items()}


def _percent(covered, total) -> float:
    return round(100.0 * covered / total, 2) if total else 100.0


def report(calls_folder) -> dict:
    """The coverage JSON: percent overall and per namespace, each covered callable with its scenarios, the rest."""
    reached = read_calls(calls_folder)
    namespaces, callables, uncovered = {}, {}, []
    for namespace, names in public_callables().items():
        qualified = [f"{namespace}.{name}" for name in sorted(names)]
        hit = [q for q in qualified if q in reached]
        missed = [q for q in qualified if q not in reached]
        namespaces[namespace] = {"covered": len(hit), "total": len(qualified),
                                 "percent": _percent(len(hit), len(qualified)), "uncovered": missed}
        callables.update({q: reached[q] for q in hit})
        uncovered.extend(missed)
    covered, total = len(callables), len(callables) + len(uncovered)
    return {"numpy_version": numpy.__version__, "covered": covered, "total": total,
            "percent": _percent(covered, total), "namespaces": namespaces, "callables": callables,
            "uncovered": uncovered, "excluded": sorted(EXCLUDED)}


def summary_text(result: dict) -> str:
    lines = [f"{ns}: {v['covered']}/{v['total']} ({v['percent']}%)" for ns, v in result["namespaces"].items()]
    lines.append(f"total: {result['covered']}/{result['total']} public callables reached ({result['percent']}%)")
    if result["uncovered"]:
        lines.append("uncovered: " + " ".join(result["uncovered"]))
    return "\n".join(lines) + "\n"


def texts(calls_folder) -> tuple:
    """What `parity coverage` makes after the gold run (coverage.cc): the JSON's text, which it writes where --json
    says as it writes every report, and the summary it prints."""
    result = report(calls_folder)
    return json.dumps(result, indent=1) + "\n", summary_text(result)

