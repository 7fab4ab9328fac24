"""The faithful twin of fixtures/broken/wrapper_values.py: the same TYPE_MAP wrapper, values kept; must pass."""
from parity_fixtures.broken.wrapper_values import TYPE_MAP, wrap_arrays  # noqa: F401 - TYPE_MAP is the backend's

__version__ = "0.1.0"


def materialize(obj):
    return wrap_arrays(obj, 1)
