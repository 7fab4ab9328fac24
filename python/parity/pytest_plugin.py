"""A pytest plugin that runs a parity pytest suite under plain pytest as its gold pass, so it stays valid pytest.

Usage: `python -m pytest -p parity.pytest_plugin scenarios/pytest_style` (README, "Running an existing pytest suite").
"""
import pytest

from parity import pytest_suite


def pytest_addoption(parser):
    # The compare pass needs both results, which only parity has.
    parser.addoption("--parity-pass", choices=("gold", "candidate"), default="gold",
                     help="whose xfail marker becomes a real xfail: gold (default) or candidate (with the candidate "
                          "installed by another plugin, as -p cudf.pandas does)")


def pytest_configure(config):
    pytest_suite.register_markers(config)


def pytest_collection_modifyitems(session, config, items):
    pytest_suite.swap_xfail_markers(items, config.getoption("--parity-pass"))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Calls the test as parity does: it must return its result, which plain pytest would warn about."""
    called, result = pytest_suite.call_test(pyfuncitem, lambda fn, **kwargs: fn(**kwargs))
    if called and result is None:
        pytest.fail(pytest_suite.returned_none(pyfuncitem.nodeid), pytrace=False)
    return True if called else None
