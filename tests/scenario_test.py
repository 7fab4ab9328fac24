"""Unit tests of the scenario module's shortcuts: parameter names from code objects, lines without inspect."""
import functools
import inspect

import pytest

from parity import _scenario, discovery


def plain(xp, rng, n=3, *args, k, **kw):
    return xp, rng, n, args, k, kw


def positional_only(xp, /, rng, *rest):
    return xp


def keywords_only(**kw):
    local = 1
    return local, kw


@functools.wraps(plain)
def wrapper(*args, **kwargs):
    return plain(*args, **kwargs)


class Callable:
    def __call__(self, xp):
        return xp


@pytest.mark.parametrize("fn", [plain, positional_only, keywords_only, wrapper, Callable(), Callable().__call__,
                                functools.partial(plain, 1), lambda rng: rng])
def test_parameters_agree_with_inspect_signature(fn):
    names, takes_any = _scenario._parameters(fn)
    parameters = inspect.signature(fn).parameters
    assert names == frozenset(parameters)
    assert takes_any == any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def test_discovery_records_the_line_inspect_would(tmp_path):
    module = tmp_path / "lines.py"
    module.write_text('"""Lines."""\nimport parity\n\n\n@parity.scenario(params={"n": [1]})\n'
                      '# a comment between\ndef first(n):\n    return {"n": n}\n\n\n'
                      '@parity.scenario()\ndef second():\n    return {}\n')
    found = discovery.discover([str(module)])
    assert not found.errors, found.errors
    lines = {s.function: s.line for s in found.scenarios}
    assert lines == {"first": 5, "second": 11}
    for s in found.scenarios:
        assert s.line == inspect.getsourcelines(s.fn)[1]
