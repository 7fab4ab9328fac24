"""Unit tests of the pickle probe's loss finder and of the reducers it reads state through."""
import os
import pickle
import sys
from pathlib import Path

import numpy
import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(REPO / "harness" / "python"))

from parity import probe, reducers  # noqa: E402 - needs the sys.path entry above


def round_trip(obj):
    return pickle.loads(pickle.dumps(obj, protocol=probe.PROTOCOL))


def test_writing_a_masked_array_leaves_its_fill_value_unchosen():
    a = numpy.ma.array(numpy.arange(3, dtype=numpy.int32))
    name, state = reducers.reduce(a)
    assert a._fill_value is None  # the getter would have cached an int64 default into the output
    assert state["fill_value"] == 999999 and numpy.asarray(state["fill_value"]).dtype == numpy.int64


def test_a_masked_array_over_a_memmap_loses_nothing_private(tmp_path):
    mapped = numpy.memmap(tmp_path / "m.dat", dtype="f8", mode="w+", shape=(4,))
    mapped[:] = numpy.arange(4)
    a = numpy.ma.array(mapped, mask=[0, 1, 0, 0])
    assert a._baseclass is numpy.memmap  # numpy.ma keeps the subclass; its namespace is no output's state
    found = probe.losses(a, round_trip(a))
    assert not [f for f in found if "_baseclass" in f["path"] or "_optinfo" in f["path"]], found


def test_the_probe_compares_what_the_reducer_records():
    a = numpy.ma.array(numpy.arange(4.0).reshape(2, 2), mask=numpy.ma.nomask)
    found = probe.losses(a, round_trip(a))
    # numpy.ma pickles `nomask` as a full all-False mask: a real change of the recorded state, at `.mask`.
    assert {(f["path"], f["aspect"]) for f in found} == {("outputs.mask", "type")}, found


def test_classes_and_functions_are_compared_by_name_not_walked():
    class Holder(numpy.ndarray):
        pass

    def holder(kind, fn):
        h = numpy.zeros(2).view(Holder)
        h.kind, h.fn = kind, fn
        return h

    assert probe.losses(holder(numpy.ndarray, len), holder(numpy.ndarray, len)) == []
    found = probe.losses(holder(numpy.ndarray, len), holder(numpy.memmap, len))
    assert found == [{"path": "outputs.kind", "aspect": "values", "faithful": "numpy.ndarray",
                      "unpickled": "numpy.memmap"}]


@pytest.mark.parametrize("mode", ["r+", "r"])
def test_an_unpickled_memmap_reduces_without_its_file(tmp_path, mode):
    numpy.memmap(tmp_path / "m.dat", dtype="i4", mode="w+", shape=(3,)).flush()
    back = round_trip(numpy.memmap(tmp_path / "m.dat", dtype="i4", mode=mode, shape=(3,)))
    assert reducers.reduce(back)[1] == {"filename": None, "offset": None, "mode": None}
