"""A candidate for the report tests that breaks outputs by their key, so one run fails several different checks.

Keys starting `noisy_` get a few values moved, `zeroed_` a block zeroed (the IPC bug), `forder_` come back
F-ordered, `native_` in native byte order, and `explode_` make the candidate raise.
"""
import numpy as np

__version__ = "0.1.0"


def _noisy(a):
    out = a.copy(order="K")
    flat = out.reshape(-1)  # a view: the arrays these scenarios return are contiguous
    flat[:: max(1, flat.size // 7)] += 0.5
    return out


def _zeroed(a):
    out = a.copy(order="K")
    out[a.shape[0] // 2 :, : a.shape[-1] // 3] = 0
    return out


BREAKERS = {
    "noisy_": _noisy,
    "zeroed_": _zeroed,
    "forder_": np.asfortranarray,
    "native_": lambda a: a.astype(a.dtype.newbyteorder("="), order="K"),
}


def _break(key, value):
    if key.startswith("explode_"):
        # Markup in the message: the HTML report must show it as text.
        raise RuntimeError(f"the mixed candidate refuses output {key!r} </script><b>not bold</b>")
    for prefix, breaker in BREAKERS.items():
        if key.startswith(prefix):
            return breaker(value)
    return value


def materialize(obj):
    if isinstance(obj, dict):
        return {key: _break(key, value) for key, value in obj.items()}
    return obj
