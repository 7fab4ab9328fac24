"""The @parity.scenario decorator, scenario ids, seeds and the per-pass call that the runner makes."""
from __future__ import annotations

import functools
import hashlib
import inspect
import itertools
import json
import numbers
import os
import sys
import threading
import traceback
import types
from dataclasses import dataclass, field

from parity.arguments import finite_number, flag, optional, output_tolerances, str_mapping

PASSES = ("gold", "candidate", "compare")

# Filled by the decorator while discovery imports a module; discovery takes it and resets it.
_collected: list = []


class Skip(Exception):
    """Raised (through parity.skip) by a scenario or backend that does not apply; recorded as status 'skip'."""


def skip(reason: str):
    """Skips the running scenario with `reason`."""
    raise Skip(reason)


# The check names are a public contract (README "Checks", docs/report-json.md).
CHECKS = ("structure", "shape", "dtype", "layout", "strides", "writeable", "type", "attrs", "values", "uncompared",
          "fidelity", "pickle", "assert_eq", "serialize", "missing", "error")

# Comparison policies and their values; the first is the default. `parity compare --<name>-policy` sets one for
# the whole run, a scenario's `policy=` overrides it for that scenario (src/parity/compare/policies.cc reads both).
# CHECKS and POLICIES copy src/parity/base/outcome.h (kChecks, kPolicies); tests/vocabulary holds them to it.
POLICIES = {
    "dtype": ("exact", "native-order-ok", "kind"),
    "layout": ("contiguity", "strides", "ignore"),
    "type": ("exact-or-mapped", "subclass-ok", "ignore"),
    "writeable": ("exact", "ignore"),
    "scalar": ("exact", "0d-ok"),
    "order": ("exact", "sorted"),
    "index": ("exact", "equivalent"),
    "names": ("exact", "ignore"),
}


def _fail(message):
    raise ValueError(f"@parity.scenario: {message}")


def _checked(rule, *args, **kwargs):
    """`rule`'s value (parity.arguments, the rules the Python API shares), its complaint as the decorator's."""
    try:
        return rule(*args, **kwargs)
    except (TypeError, ValueError) as error:
        _fail(str(error))


def _check_policy(policy):
    policy = _checked(str_mapping, "policy", policy)
    for name, value in policy.items():
        if name not in POLICIES:
            _fail(f"policy key {name!r} is not one of {', '.join(POLICIES)}")
        if value not in POLICIES[name]:
            _fail(f"policy[{name!r}] = {value!r} is not one of {', '.join(POLICIES[name])}")
    return policy


def _check_xfail(xfail):
    """{pass: reason} or, for the compare pass, {"compare": {check: reason}} (per check, strict)."""
    xfail = dict(xfail or {})
    for key, reason in xfail.items():
        if key not in PASSES:
            _fail(f"xfail key {key!r} is not one of {', '.join(PASSES)}")
        if key == "compare" and isinstance(reason, dict) and reason:
            for check, why in reason.items():
                if check not in CHECKS:
                    _fail(f"xfail['compare'] key {check!r} is not a check name ({', '.join(CHECKS)})")
                if not isinstance(why, str) or not why:
                    _fail(f"xfail['compare'][{check!r}] must be a non-empty reason string")
            xfail[key] = dict(reason)
        elif not isinstance(reason, str) or not reason:
            _fail(f"xfail[{key!r}] must be a non-empty reason string" +
                  (" or a dict of check names to reasons" if key == "compare" else ""))
    return xfail


def _check_params(params):
    params = dict(params or {})
    for name, values in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            _fail(f"parameter name {name!r} is not an identifier")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") or not list(values):
            _fail(f"params[{name!r}] must be a non-empty list of values")
    return {k: list(v) for k, v in params.items()}


def _check_timeout(timeout):
    """Seconds the scenario may run before the runner stops it (None: the run's --timeout)."""
    # Finite: the manifest's JSON cannot carry infinity (no limit is the run's --timeout 0).
    return _checked(optional, finite_number, "timeout", timeout, positive=True, unit="seconds")


def _check_options(rtol, atol, tolerances, signed_zeros, policy, tags, xfail, timeout=None) -> dict:
    tags = list(tags or [])
    if not all(isinstance(t, str) and t for t in tags):
        _fail(f"tags must be non-empty strings, got {tags!r}")
    return {"rtol": _checked(optional, finite_number, "rtol", rtol),
            "atol": _checked(optional, finite_number, "atol", atol),
            "tolerances": _checked(output_tolerances, "tolerances", tolerances),
            "signed_zeros": _checked(flag, "signed_zeros", signed_zeros),
            "policy": _check_policy(policy), "tags": tags, "xfail": _check_xfail(xfail),
            "timeout": _check_timeout(timeout)}


def default_options() -> dict:
    """_check_options' result for a scenario declared with no options, made afresh (it is the scenario's own)."""
    return {"rtol": None, "atol": None, "tolerances": {}, "signed_zeros": False, "policy": {}, "tags": [], "xfail": {},
            "timeout": None}


def xfail_on(by_backend: dict, when: dict = None):
    """The `xfail=` entry for the backend this run loaded: `{backend name: xfail}`, None for any other.

    `when` ({param: [values]}) narrows it to the parameter combinations it names, for a difference that only
    some of a scenario's params meet (joblib copies an F-ordered array, not a C-ordered one); the others must
    not become xpasses.

    An xfail states how one library genuinely differs (numpy.ma's matmul, joblib's pickling), so it must
    not turn the same scenario into an xpass under every other candidate. Resolved when the module is
    imported, which `parity run` does after loading the backend; the manifest records the result.
    """
    from parity import backend

    # Checked whichever backend runs, so a malformed `when` shows under gold and `list` too, not only under its own.
    malformed = not isinstance(when, dict) or not all(isinstance(v, (list, tuple)) for v in when.values())
    if when is not None and malformed:
        _fail(f"xfail_on(when=...) must map parameter names to lists of values, got {when!r}")
    entry = by_backend.get(backend.current_name)
    if entry is None or when is None:
        return entry
    return _ParamsXfail(entry, {name: list(values) for name, values in when.items()})


@dataclass(frozen=True)
class _ParamsXfail:
    """An xfail for the parameter combinations `when` names; scenario() resolves it per combination."""

    entry: dict
    when: dict

    def for_params(self, params: dict):
        unknown = set(self.when) - set(params)
        if unknown:
            _fail(f"xfail_on(when=...) names parameters the scenario does not have: {sorted(unknown)}")
        return self.entry if all(params[k] in values for k, values in self.when.items()) else None


def format_param(value) -> str:
    """How a parameter value appears in a scenario id: plain for scalars and strings, repr otherwise."""
    if value is None or isinstance(value, (str, bool, numbers.Number)):
        return str(value)
    return repr(value)


def scenario(fn=None, *, rtol=None, atol=None, tolerances=None, signed_zeros=False, policy=None, params=None,
             tags=None, xfail=None, timeout=None):
    """Declares a scenario: `fn(xp, rng, **params)` returns the outputs to compare.

    One scenario is made per combination of `params` (declaration order). `rtol`/`atol` override the
    per-dtype default tolerances for every output, `tolerances` for one output path and what is under it.
    `signed_zeros=True` makes -0.0 differ from 0.0. `policy` sets the dtype, layout and type policies.
    `xfail` maps a pass ('gold', 'candidate', 'compare') to the reason it is expected to fail, or the compare
    pass to {check: reason}; it is strict. `timeout` (seconds) replaces the run's --timeout for this scenario.
    """
    if (rtol is None and atol is None and tolerances is None and signed_zeros is False and policy is None
            and params is None and tags is None and xfail is None and timeout is None):
        # Declared with no options, as most are: nothing to check (a module of 5,000 such had spent 8 ms checking
        # them on the serial start of `parity run -j N`: bench/README, issue #20 target 3).
        per_params, options, params = None, default_options(), {}
    else:
        per_params = _params_xfails(xfail)
        options = _check_options(rtol, atol, tolerances, signed_zeros, policy, tags,
                                 None if per_params is not None else xfail, timeout)
        params = _check_params(params)

    def register(func):
        if not callable(func):
            raise TypeError(f"@parity.scenario must decorate a function, got {func!r}")
        # Backends see only the callable (Backend.execute(fn, ...)); its tags let one skip what it cannot run.
        func.__parity_tags__ = tuple(dict.fromkeys((*getattr(func, "__parity_tags__", ()), *options["tags"])))
        names = list(params)
        for combo in itertools.product(*(params[n] for n in names)):
            values = dict(zip(names, combo))
            own = dict(options, xfail=_check_xfail(_first(per_params, values))) if per_params else options
            _collected.append((func, values, own))
        return func

    return register(fn) if fn is not None else register


def _params_xfails(xfail):
    """The per-params xfails `xfail` holds (one xfail_on(..., when=...), or a list of them; entries for other
    backends are None), else None for a plain xfail."""
    items = list(xfail) if isinstance(xfail, (list, tuple)) else [xfail]
    if all(isinstance(x, _ParamsXfail) or x is None for x in items):
        return [x for x in items if x is not None]
    if isinstance(xfail, (list, tuple)):
        _fail("a list given as xfail must hold parity.xfail_on(..., when=...) entries")
    return None


def _first(per_params, values):
    """The first per-params xfail whose `when` these parameter values meet, None when none does."""
    return next((e for e in (x.for_params(values) for x in per_params) if e is not None), None)


def seed_for(scenario_id: str) -> int:
    """A stable 64-bit seed from a scenario's id (native or pytest): the same on every machine and Python version."""
    return int.from_bytes(hashlib.sha256(scenario_id.encode("utf-8")).digest()[:8], "little")


@dataclass
class Scenario:
    """One runnable scenario: a function, its module, one parameter combination and its policies."""

    module: str
    function: str
    fn: object
    params: dict
    options: dict  # rtol, atol, tolerances, signed_zeros, policy, tags, xfail, timeout (see _check_options)
    source: str
    line: int = 0
    id: str = field(init=False)

    def __post_init__(self):
        suffix = ",".join(f"{k}={format_param(v)}" for k, v in self.params.items())
        self.id = f"{self.module}.{self.function}" + (f"[{suffix}]" if suffix else "")

    @property
    def tags(self) -> list:
        return self.options["tags"]

    @property
    def xfail(self) -> dict:
        return self.options["xfail"]

    @property
    def seed(self) -> int:
        return seed_for(self.id)

    def keyword_names(self) -> set:
        """The names `-k` matches against (pytest's KeywordMatcher semantics: a word matches a substring of any)."""
        params = {f"{k}={format_param(v)}" for k, v in self.params.items()}
        return {self.id, self.module, self.function, f"{self.module}.{self.function}", *self.tags, *params}

    def metadata(self) -> dict:
        """What the manifest records so that the compare step never imports scenario code."""
        return {
            "module": self.module,
            "function": self.function,
            "params": {k: format_param(v) for k, v in self.params.items()},
            **self.options,
            "source": self.source,
            "line": self.line,
        }

    def arguments(self, backend) -> dict:
        """Keyword arguments for one call: xp and rng when the function names them, plus the params."""
        try:
            wanted, takes_any = _parameters(self.fn)
        except TypeError:  # an unhashable callable: no cache
            wanted, takes_any = _parameters.__wrapped__(self.fn)
        kwargs = {}
        if takes_any or "xp" in wanted:
            kwargs["xp"] = backend.namespace()
        if takes_any or "rng" in wanted:
            kwargs["rng"] = _default_rng()(self.seed)
        kwargs.update(self.params)
        return kwargs

    def call(self, backend) -> dict:
        """Runs the scenario through the backend; never raises except KeyboardInterrupt.

        Returns {"status": "ok", "outputs": obj} or {"status": "skip"|"error"|"crash", "error": {...}}: crash for a
        MemoryError of any kind (NumPy raises a subclass), after which the process cannot be trusted (README).
        """
        try:
            outputs = backend.execute(self.fn, **self.arguments(backend))
            return {"status": "ok", "outputs": backend.materialize(outputs)}
        except KeyboardInterrupt:
            raise
        except Skip as exc:
            return {"status": "skip", "error": describe_exception(exc)}
        except MemoryError as exc:
            return {"status": "crash", "error": describe_exception(exc)}
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a scenario is its error too
            return {"status": "error", "error": describe_exception(exc)}


@functools.lru_cache(maxsize=1)
def _default_rng():
    """numpy.random.default_rng, imported once: an import statement per call goes through every import hook a
    candidate installs (fsproxy's, cudf.pandas'), and parity itself must not import NumPy before it is needed."""
    import numpy

    return numpy.random.default_rng


@functools.lru_cache(maxsize=None)
def _parameters(fn) -> tuple:
    """fn's parameter names and whether it takes **kwargs. A plain function's code object says so directly;
    inspect.signature (for wrapped functions and other callables) cost 8% of a batch run of small scenarios."""
    code = getattr(fn, "__code__", None)
    if type(fn) is not types.FunctionType or code is None or hasattr(fn, "__wrapped__"):  # methods, partials, ...
        parameters = inspect.signature(fn).parameters
        return frozenset(parameters), any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    star = bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount + star]  # *args, **kw come last
    return frozenset(names), bool(code.co_flags & inspect.CO_VARKEYWORDS)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_traceback(tb):
    """Drops the leading frames that are parity's own machinery: the report starts at user code."""
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        tb = tb.tb_next
    return tb


def json_text(obj, allow_nan: bool = True) -> str:
    """JSON text that is valid UTF-8 even when a message holds lone surrogates (replaced by '?'). `allow_nan`: as
    json.dumps's (False: a NaN or an infinity raises ValueError instead of writing text no JSON parser takes)."""
    return valid_utf8(json.dumps(obj, ensure_ascii=False, allow_nan=allow_nan))


def valid_utf8(text: str) -> str:
    """`text` with its lone surrogates replaced by '?', so that it encodes as UTF-8 (what a JSON reader takes)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def describe_exception(exc: BaseException) -> dict:
    """The manifest's error record: type, message and the formatted traceback."""
    return {
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins."),
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, _user_traceback(exc.__traceback__))),
    }


# loky, vendored by joblib and on its own: the reusable executor (joblib's process pool).
_LOKY_PACKAGES = ("joblib.externals.loky", "loky")


def stop_process_pools(timeout: float = 10.0) -> None:
    """Ends the loky process pools this process started (a scenario's or a backend's joblib.Parallel), killing their
    workers, which are done. Left to the exit handlers (parity never finalizes its interpreter; the run's worker runs
    them), the pools' shutdown joins them, which made the end of a corpus run 0.5-0.8 s longer. Their resource tracker
    goes on: the worker's process group is killed when the worker ends (src/parity/run/process.cc) but for the trackers,
    which then remove what the pools' processes registered and left (joblib's memmapping folders and loky's semaphores
    in /dev/shm) and end. Stopped here instead, it was started again by joblib's exit handler, a new process to start up
    and wait for at the end of every run that used a pool. At most `timeout` seconds in all. Imports nothing: a package
    never imported started nothing. Called by the run's worker at its end (src/parity/run/worker.cc)."""

    def stop():
        for package in _LOKY_PACKAGES:
            executor = getattr(sys.modules.get(package + ".reusable_executor"), "_executor", None)
            if executor is not None:
                executor.shutdown(wait=True, kill_workers=True)

    stopping = threading.Thread(target=stop, name="parity-stop-process-pools", daemon=True)
    stopping.start()
    stopping.join(timeout)
