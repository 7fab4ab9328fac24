"""joblib for scenarios: Parallel with one fixed set of settings, and what a worker saw of an array.

Shared by scenarios/joblib_parallel.py and scenarios/known_bugs.py; a module of the package rather than of the
corpus, so that each scenario file also runs on its own (`--scenarios known_bugs.py`, as repro commands do).
"""
import contextlib
import importlib
import os
import sys

import joblib

# Real NumPy, whatever `import numpy` gives a scenario module: under a transparent proxy (fsproxy's install())
# the workers would receive proxies whose package they cannot import. What they see, and send back, is NumPy's.
numpy = importlib.import_module("numpy")

# Every Parallel call uses the same settings so the loky workers start once per run and are then reused.
# parity never finalizes its embedded interpreter, so joblib's exit handlers do not stop the workers: they
# outlive the run (a short idle timeout, then up to 30 s waiting for the gone parent). Started with the
# run's stdout/stderr they would hold those pipes open that long, so whoever reads them (ctest, pytest)
# would wait; they are started with /dev/null instead (the tracker's leak warnings at its exit go there too).
N_JOBS = 2
MAX_NBYTES = "1M"
IDLE_WORKER_TIMEOUT = 1


def transportable(a):
    # A backend's ndarray subclass (a proxy) may live in a module the workers cannot import, so they get the
    # plain array behind it: same memory, dtype, strides and flags, which is what the transport must keep.
    return a if type(a) in (numpy.ndarray, numpy.memmap) else numpy.asarray(a)


@contextlib.contextmanager
def _stdio_to_devnull():
    """Points fds 1 and 2 at /dev/null meanwhile, so processes started here do not inherit the run's."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [devnull]:
            os.close(fd)


def parallel(fn, items):
    """joblib.Parallel with this corpus's fixed settings over one array per task; also used by known_bugs."""
    run = joblib.Parallel(n_jobs=N_JOBS, backend="loky", max_nbytes=MAX_NBYTES,
                          idle_worker_timeout=IDLE_WORKER_TIMEOUT)
    with _stdio_to_devnull():
        return run(joblib.delayed(fn)(transportable(item)) for item in items)


def describe(a):
    """What a worker saw: its type, dtype, layout flags, strides and a copy of the values."""
    return {"type": type(a).__name__, "dtype": a.dtype.str, "c": bool(a.flags.c_contiguous),
            "f": bool(a.flags.f_contiguous), "strides": list(a.strides), "values": numpy.array(a)}
