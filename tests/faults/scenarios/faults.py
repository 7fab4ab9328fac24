"""Scenarios that fail the hard way, between ordinary ones: the fault-injection suite (tests/faults) runs them."""
import ctypes
import os
import time

import parity


@parity.scenario
def ordinary_first(xp):
    return {"a": xp.arange(12.0).reshape(3, 4).T}


@parity.scenario
def segfaults(xp):
    print("about to read address 0", flush=True)
    ctypes.string_at(0)


@parity.scenario
def aborts(xp):
    os.abort()


@parity.scenario
def exits(xp):
    os._exit(3)


@parity.scenario(timeout=1)
def hangs(xp):
    time.sleep(3600)


@parity.scenario
def hangs_past_the_runs_timeout(xp):
    time.sleep(3600)


@parity.scenario(timeout=120)  # only the memory limit may stop it, however slow a loaded machine is
def leaks(xp):
    # Pages written, so they are resident; bounded so that a runner without a limit still ends (and fails the test).
    kept = []
    for _ in range(200):
        kept.append(xp.ones(10 << 20, dtype=xp.uint8))
        time.sleep(0.01)
    return {"kept": len(kept)}


@parity.scenario
def runs_out_of_memory(xp):
    raise MemoryError("the allocator gave up")


@parity.scenario
def writes_into_the_reply_channel(xp):
    os.write(200, b"this is not a reply\n")  # descriptor 200 carries the worker's replies (src/parity/run/protocol.h)
    return {"a": xp.zeros(2)}


@parity.scenario
def raises(xp):
    raise ValueError("an ordinary failure")


@parity.scenario
def ordinary_last(xp, rng):
    return {"draws": rng.standard_normal(8)}
