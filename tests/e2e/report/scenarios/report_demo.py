"""Scenarios for the report tests: under tests/e2e/report/mixed.py they pass, fail several checks, error and xfail."""
import parity


@parity.scenario(tags=["demo", "numpy"], params={"n": [3, 8]})
def passes(xp, rng, n):
    return {"a": xp.asarray(rng.standard_normal(n)), "label": "<b>not markup</b> & friends"}


@parity.scenario(tags=["demo", "values"])
def strip_1d(xp, rng):
    return {"noisy_v": xp.asarray(rng.standard_normal(500))}


@parity.scenario(tags=["demo", "values", "ipc"])
def zeroed_block_2d(xp):
    return {"zeroed_m": xp.arange(1.0, 1 + 40 * 90).reshape(40, 90)}


@parity.scenario(tags=["demo", "layout"])
def fortran_order(xp, rng):
    return {"forder_m": xp.asarray(rng.standard_normal((6, 4)))}


@parity.scenario(tags=["demo", "byteorder"])
def byte_order(xp):
    return {"native_be": xp.arange(12, dtype=">f8").reshape(3, 4)}


@parity.scenario(tags=["demo"])
def candidate_raises(xp):
    return {"explode_x": xp.zeros(3)}


@parity.scenario(tags=["demo"], xfail={"compare": {"values": "the candidate rounds differently, tracked upstream"}})
def known_difference(xp, rng):
    return {"noisy_w": xp.asarray(rng.standard_normal(50))}


@parity.scenario(tags=["demo"])
def not_here(xp):
    parity.skip("needs a GPU")
