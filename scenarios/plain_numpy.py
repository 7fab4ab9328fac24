"""Scenarios written against plain NumPy (no `xp`): a transparent candidate must proxy them through `import numpy`."""
import numpy as np
import numpy.fft as npfft
from numpy.linalg import solve

import parity

# These functions name no `xp`: under fsproxy the imports above are what make their results proxies, as
# cudf.pandas.install() does for code that imports numpy (or pandas) directly.


@parity.scenario(rtol=1e-10, atol=1e-10, params={"n": [8, 33]}, tags=["numpy", "linalg"])
def solve_system(rng, n):
    a = rng.standard_normal((n, n)) + n * np.eye(n)  # diagonally dominant: well conditioned
    b = rng.standard_normal((n, 2))
    x = solve(a, b)
    return {"x": x, "residual": float(np.linalg.norm(a @ x - b)), "det_sign": float(np.sign(np.linalg.det(a)))}


@parity.scenario(rtol=0.0, params={"seed": [0, 12345]}, tags=["numpy", "random"])
def seeded_generator(seed):
    # A Generator made here (not the harness's `rng`): its draws must be proxies under a transparent candidate.
    gen = np.random.default_rng(seed)
    return {"normal": gen.standard_normal((4, 3)), "integers": gen.integers(0, 100, size=7, dtype=np.int64),
            "permutation": gen.permutation(10), "choice": gen.choice(np.arange(20), size=5, replace=False)}


@parity.scenario(rtol=1e-10, atol=1e-10, tags=["numpy", "fft"])
def spectrum(rng):
    signal = np.sin(2 * np.pi * 5 * np.linspace(0.0, 1.0, 64, endpoint=False)) + 0.1 * rng.standard_normal(64)
    spec = npfft.rfft(signal)
    return {"power": np.abs(spec) ** 2, "freq": npfft.rfftfreq(64, d=1 / 64), "roundtrip": npfft.irfft(spec, n=64)}


@parity.scenario(rtol=1e-12, atol=1e-12, params={"order": ["C", "F"]}, tags=["numpy", "reductions"])
def methods_and_dtypes(rng, order):
    a = np.array(rng.standard_normal((6, 5)), dtype=np.float32, order=order)
    return {"sum0": a.sum(axis=0), "cummax": np.maximum.accumulate(a, axis=1), "where": np.where(a > 0, a, np.nan),
            "as_int": a.astype(np.int16), "transposed": a.T.copy(order="K"), "argmax": int(a.argmax()),
            "is_array": isinstance(a, np.ndarray), "finfo_eps": float(np.finfo(a.dtype).eps)}
