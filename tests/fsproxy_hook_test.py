"""Unit tests of fsproxy's import hook: scenario modules importing numpy get the proxy, everyone else real NumPy."""
import builtins
import os
import types
from pathlib import Path

import numpy
import pytest

import parity.backend
from parity import discovery

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))

parity.backend.register_fixtures(str(REPO / "fixtures"))
from parity_fixtures import fsproxy  # noqa: E402

# Every import style the issue names, with what each bound name is read back as.
IMPORTS = """\
import numpy as np
import numpy
import numpy.linalg as la
from numpy.linalg import solve
from numpy import fft, float64, pi, ndarray
rng = np.random.default_rng(7)
a = rng.standard_normal((3, 3))
x = solve(a, np.ones(3))
"""


def module_named(name, source=IMPORTS):
    """Runs `source` as a module called `name`: the hook decides by the importer's __name__."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


@pytest.fixture
def installed():
    fsproxy.install()
    try:
        yield
    finally:
        fsproxy.uninstall()


def test_a_scenario_module_gets_the_proxy_module_and_proxy_results(installed):
    m = module_named(f"{discovery.PACKAGE}.plain")
    assert m.np is m.numpy is fsproxy.namespace(), "`import numpy` and the `xp` hook share one proxy"
    assert m.la is m.np.linalg and m.fft is m.np.fft
    assert isinstance(m.solve, fsproxy._ProxyCallable)
    assert isinstance(m.rng, fsproxy.ProxyGenerator) and isinstance(m.rng, numpy.random.Generator)
    assert type(m.a) is fsproxy.ProxyNDArray and type(m.x) is fsproxy.ProxyNDArray
    assert isinstance(m.a, m.ndarray), "classes and dtypes stay the real ones"
    assert m.float64 is numpy.float64 and m.ndarray is numpy.ndarray and m.pi == numpy.pi


def test_a_generator_from_default_rng_draws_the_same_stream_as_numpy(installed):
    m = module_named(f"{discovery.PACKAGE}.draws", "import numpy as np\ng = np.random.default_rng(3)\n")
    proxied = m.g.standard_normal(5)
    assert type(proxied) is fsproxy.ProxyNDArray
    numpy.testing.assert_array_equal(proxied, numpy.random.default_rng(3).standard_normal(5))


def test_a_nested_scenario_module_is_a_scenario_module_too(installed):
    assert module_named(f"{discovery.PACKAGE}.sub.deeper", "import numpy\n").numpy is fsproxy.namespace()


@pytest.mark.parametrize("name", ["someone_else", "scipy.linalg", f"{discovery.PACKAGE}_lookalike", "__main__"])
def test_any_other_importer_gets_real_numpy(installed, name):
    m = module_named(name)
    assert m.np is numpy and m.la is numpy.linalg and m.solve is numpy.linalg.solve
    assert type(m.rng) is numpy.random.Generator and type(m.x) is numpy.ndarray


def test_install_is_idempotent_and_uninstall_restores_the_import_function():
    original = builtins.__import__
    fsproxy.install()
    hooked = builtins.__import__
    fsproxy.install()
    try:
        assert hooked is not original and builtins.__import__ is hooked, "a second install() must not rewrap"
    finally:
        fsproxy.uninstall()
    assert builtins.__import__ is original
    assert module_named(f"{discovery.PACKAGE}.after").np is numpy
    fsproxy.uninstall()  # a second uninstall() is harmless
    assert builtins.__import__ is original
