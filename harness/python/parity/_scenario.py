"""The @parity.scenario decorator, scenario ids, seeds and the per-pass call that the runner makes."""
from __future__ import annotations

import hashlib
import inspect
import itertools
import math
import numbers
import os
import re
import traceback
from dataclasses import dataclass, field

PASSES = ("gold", "candidate", "compare")

# Filled by the decorator while discovery imports a module; discovery takes it and resets it.
_collected: list = []


class Skip(Exception):
    """Raised (through parity.skip) by a scenario or backend that does not apply; recorded as status 'skip'."""


def skip(reason: str):
    """Skips the running scenario with `reason`."""
    raise Skip(reason)


def _check_tolerance(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"@parity.scenario: {name} must be a finite number >= 0, got {value!r}")
    return float(value)


def _check_options(rtol, atol, params, tags, xfail):
    rtol, atol = _check_tolerance("rtol", rtol), _check_tolerance("atol", atol)
    params = dict(params or {})
    for name, values in params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"@parity.scenario: parameter name {name!r} is not an identifier")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") or not list(values):
            raise ValueError(f"@parity.scenario: params[{name!r}] must be a non-empty list of values")
    tags = list(tags or [])
    if not all(isinstance(t, str) and t for t in tags):
        raise ValueError(f"@parity.scenario: tags must be non-empty strings, got {tags!r}")
    xfail = dict(xfail or {})
    for key, reason in xfail.items():
        if key not in PASSES:
            raise ValueError(f"@parity.scenario: xfail key {key!r} is not one of {', '.join(PASSES)}")
        if not isinstance(reason, str) or not reason:
            raise ValueError(f"@parity.scenario: xfail[{key!r}] must be a non-empty reason string")
    return rtol, atol, {k: list(v) for k, v in params.items()}, tags, xfail


def format_param(value) -> str:
    """How a parameter value appears in a scenario id: plain for scalars and strings, repr otherwise."""
    if value is None or isinstance(value, (str, bool, numbers.Number)):
        return str(value)
    return repr(value)


def scenario(fn=None, *, rtol=1e-7, atol=0.0, params=None, tags=None, xfail=None):
    """Declares a scenario: `fn(xp, rng, **params)` returns the outputs to compare.

    One scenario is made per combination of `params` (declaration order). `xfail` maps a pass
    ('gold', 'candidate', 'compare') to the reason it is expected to fail; it is strict.
    """
    rtol, atol, params, tags, xfail = _check_options(rtol, atol, params, tags, xfail)

    def register(func):
        if not callable(func):
            raise TypeError(f"@parity.scenario must decorate a function, got {func!r}")
        names = list(params)
        for combo in itertools.product(*(params[n] for n in names)):
            _collected.append((func, dict(zip(names, combo)), rtol, atol, tags, xfail))
        return func

    return register(fn) if fn is not None else register


_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class Scenario:
    """One runnable scenario: a function, its module, one parameter combination and its policies."""

    module: str
    function: str
    fn: object
    params: dict
    rtol: float
    atol: float
    tags: list
    xfail: dict
    source: str
    line: int = 0
    id: str = field(init=False)

    def __post_init__(self):
        suffix = ",".join(f"{k}={format_param(v)}" for k, v in self.params.items())
        self.id = f"{self.module}.{self.function}" + (f"[{suffix}]" if suffix else "")

    @property
    def digest(self) -> bytes:
        return hashlib.sha256(self.id.encode("utf-8")).digest()

    @property
    def seed(self) -> int:
        """A stable 64-bit seed from the id: the same on every machine and Python version."""
        return int.from_bytes(self.digest[:8], "little")

    @property
    def file_name(self) -> str:
        """Result file name: readable, filesystem-safe, and unique through a digest of the id."""
        return f"{_UNSAFE_FILE_CHARS.sub('_', self.id)[:80]}-{self.digest.hex()[:12]}.parity"

    def metadata(self) -> dict:
        """What the manifest records so that the compare step never imports scenario code."""
        return {
            "module": self.module,
            "function": self.function,
            "params": {k: format_param(v) for k, v in self.params.items()},
            "rtol": self.rtol,
            "atol": self.atol,
            "tags": list(self.tags),
            "xfail": dict(self.xfail),
            "source": self.source,
            "line": self.line,
        }

    def arguments(self, backend) -> dict:
        """Keyword arguments for one call: xp and rng when the function names them, plus the params."""
        import numpy

        wanted = inspect.signature(self.fn).parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in wanted.values())
        kwargs = {}
        if takes_any or "xp" in wanted:
            kwargs["xp"] = backend.namespace()
        if takes_any or "rng" in wanted:
            kwargs["rng"] = numpy.random.default_rng(self.seed)
        kwargs.update(self.params)
        return kwargs

    def call(self, backend) -> dict:
        """Runs the scenario through the backend; never raises except KeyboardInterrupt.

        Returns {"status": "ok", "outputs": obj} or {"status": "skip"|"error", "error": {...}}.
        """
        try:
            outputs = backend.execute(self.fn, **self.arguments(backend))
            return {"status": "ok", "outputs": backend.materialize(outputs)}
        except KeyboardInterrupt:
            raise
        except Skip as exc:
            return {"status": "skip", "error": describe_exception(exc)}
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a scenario is its error too
            return {"status": "error", "error": describe_exception(exc)}


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_traceback(tb):
    """Drops the leading frames that are parity's own machinery: the report starts at user code."""
    while tb is not None and tb.tb_next is not None and tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        tb = tb.tb_next
    return tb


def json_text(obj) -> str:
    """JSON text that is valid UTF-8 even when a message holds lone surrogates (replaced by '?')."""
    import json

    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8")


def describe_exception(exc: BaseException) -> dict:
    """The manifest's error record: type, message and the formatted traceback."""
    return {
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins."),
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(type(exc), exc, _user_traceback(exc.__traceback__))),
    }
