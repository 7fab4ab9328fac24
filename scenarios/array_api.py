"""Scenarios written only against the Python Array API standard (tag 'array-api'), runnable by any conforming xp."""
import parity

TAGS = ["array-api"]


@parity.scenario(rtol=1e-12, tags=TAGS)
def reductions(xp):
    x = xp.reshape(xp.linspace(-2.0, 3.0, 24, dtype=xp.float64), (4, 6))
    # Python floats: a 0-d array of another library is not a NumPy scalar, float() is the standard's way.
    return {"sum": float(xp.sum(x)), "mean_axis0": xp.mean(x, axis=0), "max_axis1": xp.max(x, axis=1),
            "min": float(xp.min(x))}


@parity.scenario(rtol=1e-10, atol=1e-12, params={"n": [3, 16]}, tags=TAGS)
def matmul(xp, n):
    a = xp.reshape(xp.arange(n * n, dtype=xp.float64), (n, n)) / (n * n)
    b = xp.eye(n, dtype=xp.float64) + xp.ones((n, n), dtype=xp.float64)
    return {"ab": xp.matmul(a, b), "at_b": xp.matmul(xp.matrix_transpose(a), b), "vec": a @ xp.ones(n, dtype=xp.float64)}


@parity.scenario(rtol=0.0, tags=TAGS)
def integers_and_masks(xp):
    i = xp.arange(-5, 7, dtype=xp.int32)
    mask = (i % 3) == 0
    return {"where": xp.where(mask, i, xp.zeros_like(i)), "count": int(xp.sum(xp.astype(mask, xp.int64))),
            "sorted": xp.sort(xp.flip(i)), "mask": mask, "cumsum": xp.cumulative_sum(i)}


@parity.scenario(rtol=1e-12, atol=1e-15, tags=TAGS)
def elementwise(xp):
    x = xp.linspace(0.1, 4.0, 9, dtype=xp.float64)
    return {"exp": xp.exp(x), "log": xp.log(x), "hypot": xp.hypot(x, 1.0), "clip": xp.clip(x, 1.0, 3.0)}
