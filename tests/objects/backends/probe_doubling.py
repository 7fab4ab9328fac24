"""Broken on purpose for tests/objects/test_probe.py: doubles the values inside every output object of a class named
Box (a scenario module's own class, rebuilt through the reducer that module registers)."""
__version__ = "0.1.0"


def materialize(obj):
    if isinstance(obj, dict):
        return {key: materialize(value) for key, value in obj.items()}
    if type(obj).__name__ == "Box":
        obj.values = obj.values * 2
    return obj
