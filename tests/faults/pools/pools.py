"""Scenarios stopped while a joblib (loky) pool of theirs is alive, its memmapping folder and semaphores made in
/dev/shm (faults_test.py, test_a_stopped_workers_joblib_pool_leaves_nothing_in_dev_shm)."""
import os
import pathlib
import time

import joblib
import numpy

import parity


def _pool_then_wait(name):
    data = numpy.ones(200_000)  # above max_nbytes: joblib memmaps it through a folder of its own in /dev/shm
    with joblib.Parallel(n_jobs=2, backend="loky", max_nbytes="1K") as pool:
        pool(joblib.delayed(numpy.sum)(data) for _ in range(2))
        (pathlib.Path(os.environ["PARITY_POOLS_MARKS"]) / name).write_text(str(os.getpid()))
        time.sleep(600)


@parity.scenario(timeout=3)
def times_out(xp):
    _pool_then_wait("times_out")


@parity.scenario()
def is_interrupted(xp):
    _pool_then_wait("is_interrupted")
