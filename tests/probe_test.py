"""Unit tests of the pickle probe's loss finder and of the reducers it reads state through."""
import collections
import os
import pickle
import struct
import sys
import threading
import weakref

import numpy
import pytest

from parity import probe, reducers


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


# Objects that are no arrays, as library types plug in through reducers (issue #17, item 6).

class Handle:
    """An engine-side handle: a name made from a counter, and the default repr, which shows an address."""
    count = 0

    def __init__(self):
        Handle.count += 1
        self.name = f"%v{Handle.count}"


class Frame:
    """Like a fireducks frame: its __dict__ holds a weakref and an id-bearing handle beside the values."""

    def __init__(self, values, owner=None):
        self.values = values
        self._owner = weakref.ref(owner or Handle)
        self._handle = Handle()

    def __reduce__(self):
        return Frame, (self.values,)


class Measured:
    """Its pickling drops the unit (the class default, None, comes back in its place)."""
    unit = None

    def __init__(self, values, unit):
        self.values, self.unit = values, unit

    def __getstate__(self):
        return {"values": self.values}


class QuantityBase:
    def __init__(self, magnitude, units):
        self.magnitude, self.units = magnitude, units


def quantity_class():
    """A Quantity class of its own, as pint builds one per unit registry: one qualified name, distinct classes."""
    return type("Quantity", (QuantityBase,), {"__module__": __name__})


Quantity, OtherRegistryQuantity = quantity_class(), quantity_class()
reducers.register(Frame, lambda f: {"values": f.values}, lambda state: Frame(state["values"]))
reducers.register(Measured, lambda m: {"values": m.values, "unit": m.unit},
                  lambda state: Measured(state["values"], state["unit"]))
reducers.register(Quantity, lambda q: {"magnitude": q.magnitude, "units": q.units},
                  lambda state: Quantity(state["magnitude"], state["units"]))


def test_an_object_with_a_reducer_is_compared_by_its_state_not_its_weakrefs_or_ids():
    f = Frame(numpy.arange(3.0))
    assert probe.losses({"df": f}, round_trip({"df": f})) == []


def test_an_attribute_without_a_reducer_is_compared_by_its_type_name_only():
    class Tagged(numpy.ndarray):
        pass

    a = numpy.zeros(2).view(Tagged)
    a.handle, a.ref, a.lock = Handle(), weakref.ref(Handle), threading.Lock()
    b = numpy.zeros(2).view(Tagged)
    b.handle, b.ref, b.lock = Handle(), weakref.ref(Frame), threading.Lock()
    assert probe.losses(a, b) == []
    b.handle = Frame(None)
    assert probe.losses(a, b) == [{"path": "outputs.handle", "aspect": "type", "faithful": f"{__name__}.Handle",
                                   "unpickled": f"{__name__}.Frame"}]


def test_a_type_of_the_same_qualified_name_is_no_type_loss_and_its_state_is_compared():
    assert Quantity is not OtherRegistryQuantity
    assert probe.losses(Quantity(2.0, "m"), OtherRegistryQuantity(2.0, "m")) == []
    assert probe.losses(Quantity(2.0, "m"), OtherRegistryQuantity(4.0, "m")) == [
        {"path": "outputs.magnitude", "aspect": "values", "faithful": "2.0", "unpickled": "4.0"}]


def test_string_dtype_arrays_are_judged_by_their_strings_not_their_bytes():
    # StringDType's element bytes say where a string is held, not what it is: two arrays of different strings of
    # one length can hold the same bytes, and equal strings different ones.
    strings = numpy.dtypes.StringDType()
    a, b = numpy.array(["x" * 40], dtype=strings), numpy.array(["y" * 40], dtype=strings)
    assert a.tobytes() == b.tobytes()
    assert probe.losses(a, b) == [{"path": "outputs", "aspect": "values", "faithful": "as written",
                                   "unpickled": "different"}]
    written = numpy.array(["q" * 20, "w" * 50], dtype=strings)
    written[0] = "x" * 40  # longer than the string it replaces: held elsewhere than in a fresh array
    assert written[:1].tobytes() != a.tobytes()
    assert probe.losses(a, written[:1]) == []
    assert probe.losses(written[:1], a) == []


def test_a_string_dtype_array_with_a_nan_missing_value_loses_nothing_in_a_pickle_round_trip():
    # Review finding: its NaN marker came back as another NaN object, unequal to the first, and was reported lost.
    nan_strings = numpy.dtypes.StringDType(na_object=numpy.nan)
    a = numpy.array([["x", numpy.nan], ["y" * 40, "z"]], dtype=nan_strings)
    assert probe.losses(a, round_trip(a)) == []
    b = a.copy()
    b[0, 1] = "w"
    assert [loss["aspect"] for loss in probe.losses(a, b)] == ["values"]


def test_a_string_dtype_array_with_pandas_na_as_its_missing_value_loses_nothing_in_a_pickle_round_trip():
    # pandas.NA unpickles to itself and has no truth value: compared by ==, it raised.
    pd = pytest.importorskip("pandas")
    a = numpy.array(["x", pd.NA, "y" * 40], dtype=numpy.dtypes.StringDType(na_object=pd.NA))
    assert probe.losses(a, round_trip(a)) == []


def test_an_attribute_the_pickling_drops_is_reported_at_its_state_path():
    found = probe.losses({"m": Measured(numpy.arange(2), "m")}, round_trip({"m": Measured(numpy.arange(2), "m")}))
    assert found == [{"path": "outputs['m'].unit", "aspect": "type", "faithful": "builtins.str",
                      "unpickled": "builtins.NoneType"}]


def test_floats_and_plain_arrays_are_judged_exactly_by_losses():
    nan, other_nan = float("nan"), struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    found = probe.losses({"z": 0.0, "n": nan, "p": nan, "a": numpy.arange(3.0), "b": numpy.arange(3.0)},
                         {"z": -0.0, "n": nan, "p": other_nan, "a": numpy.arange(3.0), "b": -numpy.arange(3.0)})
    assert found == [{"path": "outputs['z']", "aspect": "values", "faithful": "0.0", "unpickled": "-0.0"},
                     {"path": "outputs['p']", "aspect": "values", "faithful": "nan", "unpickled": "nan"},
                     {"path": "outputs['b']", "aspect": "values", "faithful": "as written", "unpickled": "different"}]
    assert probe.losses(numpy.arange(3.0), numpy.arange(3.0).astype(">f8"))[0]["aspect"] == "dtype"


def test_an_unpickled_object_its_reducer_cannot_read_is_a_state_loss():
    broken = Measured(1, "m")
    del broken.values  # what a lossy __setstate__ leaves: the reducer raises on it
    found = probe.losses(Measured(1, "m"), broken)
    assert [(f["path"], f["aspect"], f["faithful"]) for f in found] == [("outputs", "state", "reducible")]
    assert "AttributeError" in found[0]["unpickled"]


# Fidelity digests of objects with reducers (issue #17, item 5): part by part, never through repr().

class Labels:
    def __init__(self, values, name):
        self.values, self.name = values, name


class Table:
    def __init__(self, column, index):
        self.column, self.index = column, index


reducers.register(Labels, lambda i: {"values": i.values, "name": i.name}, lambda s: Labels(s["values"], s["name"]))
reducers.register(Table, lambda t: {"['col']": t.column, "index": t.index}, lambda s: Table(s["['col']"], s["index"]))


def test_a_rebuild_that_drops_an_index_name_differs_only_at_that_part():
    table = Table(numpy.arange(3.0), Labels(numpy.arange(3), "idx"))
    rebuilt = Table(table.column.copy(), Labels(table.index.values.copy(), None))  # what a lossy rebuild returns
    written_shown, reloaded_shown = {}, {}
    written = probe.digests({"df": table}, shown=written_shown)
    reloaded = probe.digests({"df": rebuilt}, shown=reloaded_shown)
    assert [p for p in written if written[p] != reloaded.get(p)] == ["outputs['df'].index.name"]
    assert "outputs['df']['col']" in written  # a state key starting with '[' is a path suffix
    assert written_shown["outputs['df'].index.name"] == "builtins.str 'idx'"
    assert reloaded_shown["outputs['df'].index.name"] == "builtins.NoneType None"


def test_descriptions_are_what_digests_shows_without_hashing():
    # compare describes the reloaded outputs only when a digest differs (descriptions()): the same texts, every node.
    shared = numpy.arange(4)
    objects = numpy.empty(2, dtype=object)
    objects[:] = [1.5, "x"]
    outputs = {"df": Table(numpy.arange(3.0), Labels(numpy.arange(3), "idx")), "a": shared, "again": [shared, shared],
               "big": numpy.zeros((20, 3), ">f4"), "obj": objects, "s": "t" * 200, "n": None, "t": (1, 2.5, 3j)}
    shown = {}
    probe.digests(outputs, shown=shown)
    assert probe.descriptions(outputs) == shown and len(shown) > 10


def small_float_rows():
    """Rows of at most 8 float64 values, written by _small_values_text itself or left to NumPy: every notation and
    width array2string chooses among (exponents, nan and inf, negative zero, wrapped rows, both byte orders)."""
    rng = numpy.random.default_rng(20)
    # Ties at the ninth digit after the point (1/512 = 0.001953125), repr's 9 digits ending in 5 that are no tie, and
    # values rounded up to a whole number at the eighth digit.
    tricky = [0.0, -0.0, 1.0, 0.5, 1e-4, 9.9999e-5, 1e8, 99999999.99, 1000.0, 0.1, 1 / 3, -1e-4, 123.456, 0.1 + 0.2,
              numpy.nan, numpy.inf, -numpy.inf, 5e-324, 1.7976931348623157e308, 1 / 512, 3 / 512, 1 + 7 / 512,
              0.123456785, 2.000000005, 0.999999999999, -0.999999999999, 67108864.5, 99999999.995]
    makers = [lambda n: rng.random(n), lambda n: rng.standard_normal(n) * 100,
              lambda n: rng.integers(-5, 5, n).astype(float),
              lambda n: rng.random(n) * 10.0 ** int(rng.integers(-6, 10)),
              lambda n: numpy.round(rng.random(n) * 1000, int(rng.integers(0, 10))), lambda n: rng.choice(tricky, n),
              lambda n: numpy.frombuffer(rng.bytes(8 * n), "<f8").copy()]
    for i in range(4000):
        row = makers[i % len(makers)](int(rng.integers(1, 9)))
        yield row.astype(">f8") if i % 5 == 0 else row


def small_integer_and_bool_rows():
    """Rows of at most 8 integers of every width and signedness, both byte orders, and of bools: every width
    array2string pads to, and rows it wraps (twenty-digit values)."""
    rng = numpy.random.default_rng(21)
    for i in range(3000):
        dtype = numpy.dtype(["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "?"][i % 9])
        n = int(rng.integers(1, 9))
        if dtype.kind == "b":
            row = rng.random(n) < [0.0, 0.5, 1.0][i % 3]
        else:
            info = numpy.iinfo(dtype)
            high = min([10, 1000, int(info.max)][i % 3], int(info.max))
            row = rng.integers(max(int(info.min), -high), high, n, dtype=dtype, endpoint=True)
            if i % 7 == 0:
                row[0] = info.min if i % 2 else info.max
        yield row.astype(dtype.newbyteorder(">")) if i % 4 == 0 else row


def assert_small_rows_described_as_array2string_writes_them(rows):
    for row in rows:
        assert probe._small_values_text(row) == numpy.array2string(row, threshold=8), repr(row)
    for options in ({"precision": 3}, {"legacy": "1.13"}, {"sign": "+"}, {"sign": " "}, {"floatmode": "fixed"},
                    {"linewidth": 40}, {"suppress": True}, {"formatter": {"int": hex, "bool": str}}):
        with numpy.printoptions(**options):
            for row in rows[:200]:
                assert probe._small_values_text(row) == numpy.array2string(row, threshold=8), (options, repr(row))


def test_a_small_float_row_is_described_as_array2string_writes_it():
    rows = list(small_float_rows())
    assert sum(probe._small_row_text(row) is not None for row in rows) > len(rows) // 2  # the fast path ran
    assert_small_rows_described_as_array2string_writes_them(rows)


def test_a_small_subclass_row_is_described_as_array2string_writes_it():
    # A masked array prints its masked elements as "--" (its fill value's text in a float row): not a plain row.
    row = numpy.ma.array([1.0, 2.5], mask=[0, 1])
    assert probe._small_row_text(row) is None
    assert probe._small_values_text(row) == numpy.array2string(row, threshold=8)


def test_a_small_integer_or_bool_row_is_described_as_array2string_writes_it():
    rows = list(small_integer_and_bool_rows())
    assert any("\n" in probe._small_values_text(row) for row in rows)  # wrapped rows among them
    assert_small_rows_described_as_array2string_writes_them(rows)
    # The fast path writes them: NumPy's own machinery is not called for any.
    original = numpy.array2string
    try:
        numpy.array2string = None
        for row in rows[:300]:
            probe._small_values_text(row)
    finally:
        numpy.array2string = original


def test_an_object_is_digested_without_its_repr():
    class Opaque:
        pass

    # Two equal objects whose reprs differ (addresses) digest alike; a reduced object's own digest is its type and
    # its state's keys.
    assert probe.digests(Opaque()) == probe.digests(Opaque())
    assert probe.digests(Labels(1, "a"))["outputs"] == probe.digests(Labels(1, "b"))["outputs"]
    assert probe.digests(Labels(1, "a"))["outputs.name"] != probe.digests(Labels(1, "b"))["outputs.name"]


def test_fidelity_descriptions_never_repr_a_long_value():
    shown = {}
    probe.digests({"s": "x" * 10**6, "n": 2**20000, "a": numpy.arange(100)}, shown=shown)
    assert shown["outputs['s']"] == "builtins.str of length 1000000"
    assert shown["outputs['n']"] == "builtins.int of 20001 bits"
    assert shown["outputs['a']"] == "numpy.ndarray <i8 shape (100,)"


# The pickle file (format 2): array data the result file holds is referenced by path and digest, never copied.

class Proxy(numpy.ndarray):
    """cudf.pandas' proxy ndarray: a subclass, so NumPy pickles its data as bytes in its state, in band."""

    def __array_finalize__(self, obj):
        if obj is not None:
            self._fsproxy_wrapped = obj.view(numpy.ndarray) if isinstance(obj, numpy.ndarray) else None


class Negating(numpy.ndarray):
    """A lossy reducer: its pickle carries the values negated, so no stored array matches its bytes."""

    def __reduce__(self):
        return as_type, (-self.view(numpy.ndarray), Negating)


class Halving(numpy.ndarray):
    """A lossy reconstructor: given its own buffer out of band, it reads it as float32."""

    def __reduce_ex__(self, protocol):
        return as_type, (pickle.PickleBuffer(self.view(numpy.ndarray)), Halving, "f4")


def _refuse():
    raise RuntimeError("this pickle unpickles nowhere")


def as_type(data, kind, dtype=None):
    return (numpy.frombuffer(data, dtype) if dtype else data).view(kind)


LARGE = {
    "plain": lambda: numpy.arange(200_000, dtype="f8"),
    "big-endian": lambda: numpy.arange(200_000, dtype=">f8"),
    "fortran": lambda: numpy.asfortranarray(numpy.arange(200_000, dtype="f4").reshape(400, 500)),
    "subclass": lambda: numpy.arange(200_000, dtype="f8").view(Proxy),
    "masked": lambda: numpy.ma.array(numpy.arange(200_000.0), mask=numpy.arange(200_000) % 3 == 0),
}


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("PARITY_PROBE_KEY", "k" * 40)


def written_and_rebuilt(outputs, tmp_path):
    """(the pickle file's bytes, outputs as the result file rebuilds them: copies in the same layout)."""
    arrays = {}
    probe.digests(outputs, arrays=arrays)
    assert probe.pickle_outputs(outputs, str(tmp_path / "p.pickle"), arrays) is None
    rebuilt = {name: numpy.copy(value, order="K", subok=True) for name, value in outputs.items()}
    return (tmp_path / "p.pickle").read_bytes(), rebuilt


def test_an_output_that_refuses_pickling_leaves_no_file_behind(key, tmp_path):
    error = probe.pickle_outputs({"ok": numpy.arange(3), "f": lambda: 0}, str(tmp_path / "p.pickle"))
    assert error["path"] == "outputs['f']", error
    assert list(tmp_path.iterdir()) == []  # neither the pickle nor its temporary file


def _appended(result, codec_bytes, outputs, and_then=b""):
    """append_pickle(outputs) as a run's worker calls it: through the descriptor it wrote `codec_bytes` with, kept open
    (and written on after it: `and_then`, where the pickle failed and was cut off)."""
    fd = os.open(result, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, codec_bytes)
        answer = probe.append_pickle(outputs, fd, len(codec_bytes))
        os.write(fd, and_then)
    finally:
        os.close(fd)
    return answer


@pytest.mark.parametrize("held", [True, False], ids=["held whole", "streamed"])
def test_a_pickle_appended_to_a_result_file_is_the_pickle_file_and_a_failed_one_is_cut_off(held, key, monkeypatch,
                                                                                         tmp_path):
    """A run's worker appends the pickle to the result file it has just written, through the descriptor it wrote it
    with (one file a scenario and side, not opened again by name): the bytes from the offset on are those
    pickle_outputs writes in a file of its own; the codec's before them untouched; a pickle that fails leaves the
    result file as it was, and the descriptor where it was."""
    if not held:
        monkeypatch.setattr(probe, "_PICKLE_BUFFER", 64)  # written at the first writes and streamed
    outputs = {"x": numpy.arange(40.0), "s": "text" * 50}
    result = tmp_path / "r.parity"
    offset, error = _appended(result, b"the codec's bytes" * 7, outputs)
    assert error is None and offset == 7 * 17, error
    assert probe.pickle_outputs(outputs, str(tmp_path / "own.pickle")) is None
    assert result.read_bytes() == b"the codec's bytes" * 7 + (tmp_path / "own.pickle").read_bytes()
    obj, error, why = probe.unpickle(result.read_bytes()[offset:], outputs)
    assert error is None and why is None and probe.losses(outputs, obj) == []
    failed = tmp_path / "failed.parity"
    # Past a frame of pickle's (64 KiB), so that a streamed pickle has written to the file when it fails.
    offset, error = _appended(failed, b"the codec's bytes", {"x": numpy.arange(20_000.0), "f": lambda: 0},
                              b"; what its writer adds after")
    assert offset is None and error["path"] == "outputs['f']", error
    assert failed.read_bytes() == b"the codec's bytes; what its writer adds after"


class _Exits:
    def __reduce__(self):
        raise SystemExit("a reducer that ends the process")


def test_a_pickle_ended_by_what_is_no_exception_leaves_the_result_file_as_it_was(key, monkeypatch, tmp_path):
    """SystemExit from a candidate's reducer is not caught as a finding (it ends the worker), but what was appended
    before it is cut off first: the file the record would name stays the codec's own."""
    monkeypatch.setattr(probe, "_PICKLE_BUFFER", 64)  # streamed: the file holds part of the pickle when it raises
    result = tmp_path / "r.parity"
    with pytest.raises(SystemExit):
        _appended(result, b"the codec's bytes", {"x": numpy.arange(40.0), "e": _Exits()})
    assert result.read_bytes() == b"the codec's bytes"


@pytest.mark.parametrize("signed", [True, False])
def test_a_pickle_held_whole_and_one_streamed_past_the_buffer_are_the_same_file(signed, monkeypatch, tmp_path):
    if signed:
        monkeypatch.setenv("PARITY_PROBE_KEY", "k" * 40)
    else:  # no usable key: the pickle is written unsigned
        monkeypatch.delenv("PARITY_PROBE_KEY", raising=False)
        monkeypatch.setenv("PARITY_KEY_FILE", str(tmp_path / "no-such-dir" / "key"))
        monkeypatch.setattr(probe.trust, "_create_key", lambda path: (_ for _ in ()).throw(OSError("read-only")))
    outputs = {"x": numpy.arange(40.0), "s": "text" * 50, "n": [1, None, 2.5]}
    assert probe.pickle_outputs(outputs, str(tmp_path / "whole.pickle")) is None
    monkeypatch.setattr(probe, "_PICKLE_BUFFER", 64)  # past it at the first writes: created and streamed
    assert probe.pickle_outputs(outputs, str(tmp_path / "streamed.pickle")) is None
    whole = (tmp_path / "whole.pickle").read_bytes()
    assert whole == (tmp_path / "streamed.pickle").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["streamed.pickle", "whole.pickle"]
    obj, error, why = probe.unpickle(whole, outputs)
    if signed:
        assert error is None and why is None and probe.losses(outputs, obj) == []
    else:
        assert obj is None and "carries no MAC" in why


def test_digests_describe_the_leaves_only_when_descriptions_are_asked_for(monkeypatch):
    # compare digests every reload with shown=None; a small array's description is a call of _description
    # (array2string), which cost it that call at every such leaf of every scenario for nothing.
    described = []

    def counting(obj, shown):
        described.append(obj)
        return probe._description(obj, shown)

    digest_into, _, *rest = probe._WALK_HOOKS
    monkeypatch.setattr(probe, "_WALK_HOOKS", (digest_into, counting, *rest))
    outputs = {"a": numpy.arange(3.0), "f": 1.5, "s": "text", "n": [1, None, True]}
    quiet = probe.digests(outputs, "outputs", None, {})
    assert described == []
    shown = {}
    told = probe.digests(outputs, "outputs", shown, {})
    assert told == quiet  # the digests do not depend on the descriptions
    assert len(described) == 1 and shown["outputs['a']"].startswith("numpy.ndarray")
    assert shown["outputs['f']"] == "builtins.float 1.5" and shown["outputs['s']"] == "builtins.str 'text'"
    assert shown["outputs['n']"] == "builtins.list of 3" and shown["outputs['n'][1]"] == "builtins.NoneType None"


@pytest.mark.parametrize("kind", sorted(LARGE))
def test_a_large_array_is_referenced_not_copied_and_loses_nothing(kind, key, tmp_path):
    outputs = {"x": LARGE[kind]()}
    blob, rebuilt = written_and_rebuilt(outputs, tmp_path)
    assert len(blob) <= 0.1 * outputs["x"].nbytes, (kind, len(blob))
    obj, error, why = probe.unpickle(blob, rebuilt)
    assert error is None and why is None
    found = probe.losses(rebuilt, obj)
    assert found == ([{"path": "outputs['x']._fsproxy_wrapped", "aspect": "attribute", "faithful": "present",
                       "unpickled": "missing"}] if kind == "subclass" else []), found
    numpy.testing.assert_array_equal(numpy.asarray(obj["x"]), numpy.asarray(outputs["x"]))
    assert obj["x"].dtype == outputs["x"].dtype and obj["x"].strides == outputs["x"].strides


def test_an_unpickled_plain_array_maps_the_rebuilt_memory(key, tmp_path):
    blob, rebuilt = written_and_rebuilt({"x": LARGE["plain"]()}, tmp_path)
    obj, _, _ = probe.unpickle(blob, rebuilt)
    assert numpy.shares_memory(obj["x"], rebuilt["x"]) and obj["x"].flags.writeable


def test_a_reducer_that_changes_the_values_is_still_caught(key, tmp_path):
    outputs = {"x": numpy.arange(1.0, 100_001.0).view(Negating)}
    blob, rebuilt = written_and_rebuilt(outputs, tmp_path)
    assert len(blob) > outputs["x"].nbytes  # nothing stored matches: its bytes are in the stream
    obj, error, why = probe.unpickle(blob, rebuilt)
    assert error is None and why is None
    assert {(f["path"], f["aspect"]) for f in probe.losses(rebuilt, obj)} == {("outputs['x']", "values")}


def test_a_reinterpreting_reconstructor_over_a_referenced_buffer_is_caught(key, tmp_path):
    outputs = {"x": numpy.arange(100_000.0).view(Halving)}
    blob, rebuilt = written_and_rebuilt(outputs, tmp_path)
    assert len(blob) <= 0.1 * outputs["x"].nbytes  # its buffer is the stored array's memory: referenced
    obj, _, _ = probe.unpickle(blob, rebuilt)
    assert {f["aspect"] for f in probe.losses(rebuilt, obj)} == {"dtype", "shape", "strides"}


def test_an_altered_result_array_is_never_given_to_unpickling(key, tmp_path):
    blob, rebuilt = written_and_rebuilt({"x": LARGE["plain"]()}, tmp_path)
    rebuilt["x"][7] = -1.0
    obj, error, why = probe.unpickle(blob, rebuilt)
    assert obj is None and error is None and "outputs['x']" in why and "not unpickled" in why


def test_a_pickle_of_format_1_still_unpickles(key):
    from parity import trust
    outputs = {"x": numpy.arange(10.0)}
    payload = pickle.dumps(outputs, protocol=5)
    digest = trust.mac(trust.key())
    digest.update(payload)
    obj, error, why = probe.unpickle(payload + trust.trailer(digest), outputs)
    assert error is None and why is None and probe.losses(outputs, obj) == []


def test_a_damaged_buffer_table_is_refused_not_unpickled(key, tmp_path):
    from parity import trust
    stream = pickle.dumps(1, protocol=5)
    payload = probe.MAGIC + stream + b"{}" + probe._FOOTER.pack(len(stream), 2)  # a table that is no list
    digest = trust.mac(trust.key())
    digest.update(payload)
    obj, error, why = probe.unpickle(payload + trust.trailer(digest), {})
    assert obj is None and "damaged" in why


@pytest.mark.parametrize("table, footer, says", [
    (b"", None, "shorter than its header and footer"), (b"[]", (4, 2), "lengths do not add up"),
    (b"[1]", None, "not a list of entries"), (b"[}", None, "Expecting value"), (b"\xff]", None, "decode")])
def test_a_damaged_pickle_file_is_refused_saying_how(key, table, footer, says):
    from parity import trust
    stream = pickle.dumps(1, protocol=5) if footer or table else b""
    end = probe._FOOTER.pack(*(footer or (len(stream), len(table)))) if table else b""
    payload = probe.MAGIC + stream + table + end
    digest = trust.mac(trust.key())
    digest.update(payload)
    obj, error, why = probe.unpickle(payload + trust.trailer(digest), {})
    assert obj is None and error is None and why.startswith("the pickle file is damaged (") and says in why, why


def test_both_sides_verify_with_one_key_lookup_and_unpickle_as_one_at_a_time(key, monkeypatch, tmp_path):
    from parity import trust
    (tmp_path / "g").mkdir(), (tmp_path / "c").mkdir()
    gold, gold_rebuilt = written_and_rebuilt({"x": numpy.arange(5.0), "big": LARGE["plain"]()}, tmp_path / "g")
    cand, cand_rebuilt = written_and_rebuilt({"x": numpy.arange(5.0).view(Negating)}, tmp_path / "c")
    lookups = []
    monkeypatch.setattr(trust, "key", lambda create=False: lookups.append(create) or b"k" * 40)
    g, c = probe.verify_both(gold, gold_rebuilt, None, cand, cand_rebuilt, None)
    assert lookups == [False]  # one lookup serves both MACs
    for (prepared, why, damaged), blob, rebuilt in ((g, gold, gold_rebuilt), (c, cand, cand_rebuilt)):
        assert why is None is damaged
        obj, error = probe.unpickle_prepared(prepared)
        alone = probe.unpickle(blob, rebuilt)
        assert error is None and alone[1:] == (None, None)
        assert probe.losses(rebuilt, obj) == probe.losses(rebuilt, alone[0])
    assert probe.losses(gold_rebuilt, probe.unpickle_prepared(g[0])[0]) == []
    assert probe.losses(cand_rebuilt, probe.unpickle_prepared(c[0])[0]) != []


def test_a_prepared_pickle_that_raises_unpickles_to_its_error(key, tmp_path):
    class Refusing:
        def __reduce__(self):
            return (_refuse, ())

    blob, rebuilt = written_and_rebuilt({"r": Refusing()}, tmp_path)
    (prepared, why, _), _ = probe.verify_both(blob, rebuilt, None, blob, rebuilt, None)
    obj, error = probe.unpickle_prepared(prepared)
    assert why is None and obj is None and error["type"] == "RuntimeError", error
    assert probe.unpickle(blob, rebuilt) == (None, error, None)


def test_a_pickle_from_a_result_file_is_checked_whole_before_it_is_verified(key, tmp_path):
    """verify_both's `whole`: a pickle read from the end of a result file that is not whole (cut short, or added to) is
    said to be so, which compare makes the scenario's error, and then neither side is verified (no work a deadline
    could cut short first); one that is whole is verified as ever."""
    result = tmp_path / "r.parity"
    offset, error = _appended(result, b"the codec's bytes", {"x": numpy.arange(4.0)})
    assert error is None
    stored = result.read_bytes()[offset:]
    for blob, says in ((stored[:-100], "lengths do not add up"), (stored + b"added", "lengths do not add up"),
                       (b"not a pickle", "does not begin as parity's pickles do")):
        (prepared, why, damaged), cand = probe.verify_both(blob, {}, None, stored, {}, None, (True, True))
        assert prepared is None is why and says in damaged, damaged
        assert cand == (None, None, None), cand  # whole, but not verified: the scenario is an error either way
        gold, (prepared, why, damaged) = probe.verify_both(stored, {}, None, blob, {}, None, (True, True))
        assert gold == (None, None, None) and prepared is None is why and says in damaged, damaged
        unchecked, _ = probe.verify_both(blob, {}, None, None, None, None)
        assert unchecked[0] is None is unchecked[2] and unchecked[1], unchecked  # not whole: its MAC fails
    assert probe.verify_both(stored, {}, None, None, None, None, (True, False))[1] == (None, None, None)


def test_both_sides_without_a_key_say_why_alike(monkeypatch, tmp_path):
    from parity import trust
    monkeypatch.setenv("PARITY_PROBE_KEY", "k" * 40)
    blob, rebuilt = written_and_rebuilt({"x": numpy.arange(3)}, tmp_path)
    monkeypatch.delenv("PARITY_PROBE_KEY")
    monkeypatch.setenv("PARITY_KEY_FILE", str(tmp_path / "absent"))
    g, c = probe.verify_both(blob, rebuilt, None, blob, rebuilt, None)
    assert g == c == (None, probe.unpickle(blob, rebuilt)[2], None) and "no key" in g[1], g
    unsigned = probe.verify_both(b"x", {}, None, blob, rebuilt, None)
    assert "carries no MAC" in unsigned[0][1] and "no key" in unsigned[1][1], unsigned


# The digests' algorithm (docs/results-directory.md, `fidelity`).

def test_xxh3_is_xxh3_128_in_canonical_form_over_any_contiguous_buffer():
    empty = probe.Xxh3()
    assert empty.hexdigest() == "99aa06d3014798d86001c324468d497f"  # XXH3-128 of no bytes, seed 0 (xxHash's own)
    whole, parts = probe.Xxh3(), probe.Xxh3()
    data = numpy.arange(100_000, dtype=">f8")  # large: hashed with the GIL released
    whole.update(data.tobytes())
    parts.update(data[:10].view(numpy.uint8))
    parts.update(memoryview(data[10:].tobytes()))
    assert whole.hexdigest() == parts.hexdigest() != empty.hexdigest()
    with pytest.raises((BufferError, ValueError)):
        probe.Xxh3().update(data[::2])  # strided memory is refused, never hashed as if contiguous


@pytest.mark.parametrize("algorithm", ["xxh3:", ""])
def test_an_array_hashed_in_place_digests_as_its_blocks(algorithm):
    class Sub(numpy.ndarray):
        pass

    arrays = [numpy.arange(10.0), numpy.arange(10.0).astype(">f8"), numpy.zeros((3, 4), order="F"), numpy.array(3.5),
              numpy.arange(12).reshape(3, 4)[:, ::2], numpy.zeros((2, 0)), numpy.arange(5, dtype=numpy.longdouble),
              numpy.arange(6, dtype=numpy.clongdouble), numpy.array(["ab", "c"]), numpy.array([b"x", b"yz"]),
              numpy.arange(4).astype("M8[ns]"), numpy.zeros(3, dtype=[("a", "f8"), ("b", "i2")]), numpy.zeros(3, "V4"),
              numpy.broadcast_to(numpy.arange(3.0), (4, 3)), numpy.ones(5, dtype=bool), numpy.float16([1, 2]),
              numpy.arange(6, dtype=numpy.complex64), numpy.arange(7.0)[::-1], numpy.arange(200_000.0)]
    for a in arrays + [a.view(Sub) for a in arrays]:
        blocks = probe._ALGORITHMS[algorithm](b"head|")
        for part in probe._value_blocks(a):
            blocks.update(part)
        assert probe._array_digest(algorithm, b"head|", a) == algorithm + blocks.hexdigest(), (a.dtype, a.shape)


def test_array_heads_from_the_table_are_those_made_afresh():
    class Sub(numpy.ndarray):
        pass

    frozen = numpy.arange(10.0)
    frozen.flags.writeable = False  # the same layout as a writable one: another head
    arrays = [numpy.arange(10.0), frozen, numpy.arange(10.0).astype(">f8"), numpy.zeros((3, 4), order="F"),
              numpy.array(3.5), numpy.arange(12).reshape(3, 4)[:, ::2], numpy.zeros((2, 0)),
              numpy.arange(5, dtype=numpy.longdouble), numpy.array(["ab", "c"]), numpy.arange(4).astype("M8[ns]"),
              numpy.arange(4).astype("M8[s]"), numpy.zeros(3, dtype=[("a", "f8"), ("b", "i2")]), numpy.zeros(3, "V4"),
              numpy.broadcast_to(numpy.arange(3.0), (4, 3)), numpy.zeros(0)]
    arrays += [a.view(Sub) for a in arrays]

    def afresh(a):  # what _array_head makes for an array it has not met, as the digests always made it
        f = a.flags
        aspects = (a.dtype.str, probe._dtype_description(a.dtype), a.shape, a.strides,
                   (f.c_contiguous, f.f_contiguous, f.writeable, f.aligned))
        head = f"{type(a).__module__}.{type(a).__qualname__}|{aspects!r}|".encode()
        return head, probe._referable(a), bool(a.size and f.c_contiguous and probe._bytes_are_values(a.dtype))

    probe._HEADS.clear()
    for _ in range(2):  # the second time from the table
        assert [probe._array_head(a) for a in arrays] == [afresh(a) for a in arrays]
    assert len({probe._array_head(a)[0] for a in arrays}) == len(arrays)
    named = numpy.zeros(2, dtype=[("a", "f8")])
    before = probe._array_head(named)[0]
    named.dtype.names = ("b",)  # a structured dtype renamed in place: never taken from the table
    assert probe._array_head(named)[0] != before and probe._array_head(named) == afresh(named)


def test_container_digests_from_the_table_are_those_made_afresh():
    class Mapping(dict):
        pass

    outputs = {"l": [1, [2]], "t": (1, (2,)), "d": Mapping(a=1), "e": {"a": 1}, "o": numpy.array([None, 1]),
               "p": numpy.array([None]), "n": []}
    for algorithm in ("xxh3:", ""):
        probe._CONTAINERS.clear()
        cold = probe.digests(outputs, algorithm=algorithm)
        assert probe.digests(outputs, algorithm=algorithm) == cold
        for path in ("outputs['l']", "outputs['t']", "outputs['d']", "outputs['e']", "outputs['o']", "outputs['n']"):
            obj = eval(path, {"outputs": outputs})  # noqa: S307 - the test's own paths
            head = (repr(probe._array_aspects(obj)) if isinstance(obj, numpy.ndarray)
                    else f"{type(obj).__module__}.{type(obj).__qualname__}")
            assert cold[path] == probe._hash(algorithm, f"{head}:{len(obj)}".encode())[:len(algorithm) + 16]
        assert len({cold[p] for p in ("outputs['l']", "outputs['t']", "outputs['d']", "outputs['e']")}) == 4


def test_digests_name_their_algorithm_and_sha256_is_still_made_as_before():
    outputs = {"a": numpy.arange(4.0), "s": "x"}
    now, before = probe.digests(outputs), probe.digests(outputs, algorithm="")
    assert all(d.startswith("xxh3:") and len(d) == 21 for d in now.values()), now
    assert all(len(d) == 16 and probe.algorithm_of(d) == "" for d in before.values()), before
    assert {probe.algorithm_of(d) for d in now.values()} == {"xxh3:"}
    # SHA-256 as parity recorded it: over the same description of the leaf.
    import hashlib
    assert before["outputs['s']"] == hashlib.sha256(b"builtins.str|x").hexdigest()[:16]


def _readonly(a):
    a.flags.writeable = False
    return a


CHANGES = {
    "value": lambda a: a + (numpy.arange(12).reshape(3, 4) == 11),  # the last element only
    "byte order": lambda a: a.astype(">f8"),
    "strides": lambda a: numpy.asfortranarray(a),
    "flag": lambda a: _readonly(a.copy()),
}


@pytest.mark.parametrize("algorithm", ["xxh3:", ""])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_fidelity_sees_a_changed_value_byte_order_stride_or_flag(change, algorithm):
    a = numpy.arange(12.0).reshape(3, 4)
    changed = CHANGES[change](a.copy())
    assert numpy.array_equal(changed, a) == (change != "value")
    assert probe.digests(a, algorithm=algorithm) == probe.digests(a.copy(), algorithm=algorithm)
    assert probe.digests(changed, algorithm=algorithm)["outputs"] != probe.digests(a, algorithm=algorithm)["outputs"]


def test_two_large_sides_are_digested_on_two_threads_as_on_one(monkeypatch):
    sides = [({"a": numpy.arange(300_000.0), "s": "x"}, {}, {}, "xxh3:"), (numpy.arange(5), {}, {}, "")]
    alone = [probe.digests(o, "outputs", {}, {}, algorithm) for o, _, _, algorithm in sides]
    threads = []
    real = probe._settle  # where the large arrays' bytes are hashed when compare's values kernel did not
    monkeypatch.setattr(probe, "_settle", lambda *a: threads.append(threading.current_thread().name) or real(*a))
    assert probe.finish_digests(probe.begin_digests(sides)[0], nbytes=1 << 20) == alone  # small results: one thread
    assert len(set(threads)) == 1
    threads.clear()
    assert probe.finish_digests(probe.begin_digests(sides)[0], nbytes=1 << 30) == alone and len(set(threads)) == 2
    assert sides[0][1]["outputs['s']"] == "builtins.str 'x'" and "outputs['a']" in sides[0][2]  # shown, arrays filled


def test_the_time_limit_stops_both_threads_of_the_digests():
    sides = [({"a": numpy.arange(300_000.0)}, {}, {}, "xxh3:")] * 2
    begun = probe.begin_digests(sides)[0]
    probe.set_deadline(1e-9)
    try:
        with pytest.raises(probe.DeadlineExceeded):
            probe.finish_digests(begun, nbytes=1 << 30)
    finally:
        probe.set_deadline(None)


LAYOUTS = {
    "C order": lambda: numpy.arange(200_000.0),
    "F order": lambda: numpy.asfortranarray(numpy.arange(200_000.0).reshape(400, 500)),
    "strided": lambda: numpy.arange(600_000.0)[::3],
    "big-endian": lambda: numpy.arange(200_001, dtype=">f8"),
    "empty": lambda: numpy.zeros((0, 300_000)),
    "long double": lambda: numpy.arange(200_000, dtype=numpy.longdouble),
}


@pytest.mark.parametrize("algorithm", ["xxh3:", ""])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_digests_begun_for_the_values_kernel_and_finished_without_it_are_the_digests(layout, algorithm, monkeypatch):
    monkeypatch.setattr(probe, "_FUSED_FROM", 0)  # every array pending
    a = LAYOUTS[layout]()
    shown, arrays = {}, {}
    begun, taps = probe.begin_digests([({"a": a, "same": a}, shown, arrays, algorithm)])
    assert len(begun[0][2]) == 1 and isinstance(begun[0][0]["outputs['same']"], probe._Pending)  # one leaf, met twice
    # A tap (an array whose memory is the digest's bytes, in order) only for XXH3 in C order, large long doubles aside.
    assert bool(taps) == (algorithm == "xxh3:" and layout in ("C order", "big-endian"))
    expected_arrays = {}
    assert probe.finish_digests(begun) == [probe.digests({"a": a, "same": a}, "outputs", {}, expected_arrays, algorithm)]
    assert {path: whole for path, (_, whole) in arrays.items()} == {p: w for p, (_, w) in expected_arrays.items()}


def _python_walk(obj, shown, arrays, pending=None):
    """digests() as probe.py's own walk makes it, every node in Python."""
    out = {}
    probe._digest_into(obj, "outputs", out, 0, {}, shown, arrays, probe.DIGEST, pending)
    return out


_Point = __import__("collections").namedtuple("_Point", "x y")  # module level: the loss pairs pickle it


class _Tagged(numpy.ndarray):
    """An ndarray subclass no reducer is registered for, whose pickle keeps its instance dict (as fsproxy's keeps its
    view): the C++ walks take it as an array, then its attributes."""

    def __reduce__(self):
        return _tagged, (self.view(numpy.ndarray), dict(vars(self)), type(self))


class _Other(_Tagged):
    """Another such subclass: an array of _Tagged's layout has another head (its type's name)."""


class _Slotted(numpy.ndarray):
    """Such a subclass with no instance dict: reducers.reduce's vars() refuses it, in Python."""

    __slots__ = ()


class _Ordered(numpy.ndarray):
    """Such a subclass with a reducer whose state is a dict subclass, reordered after it was made: walked in its own
    order (items()), not the order of the dict beneath it."""


_ORDERED_PART = numpy.arange(3)  # one object in every state made (the walks' `arrays` are compared by identity)


def _ordered_state(_array):
    state = collections.OrderedDict(first=1.0, second=[2.0], third=_ORDERED_PART)
    state.move_to_end("first")
    return state


reducers.register(_Ordered, reduce=_ordered_state, rebuild=lambda values, state: values.view(_Ordered))


class _Bare(numpy.ndarray):
    """Such a subclass with ndarray's own pickle, which drops the instance dict: the attributes are lost."""


def _tagged(plain, attributes=None, cls=_Tagged):
    made = plain.view(cls)
    made.__dict__.update(attributes or {})
    return made


def _generic_subclasses():
    """Arrays of ndarray subclasses: the ones the C++ walks take (small, hashed in place; an instance dict with text
    keys, met twice, nested, two types of one layout, a reducer's state) and the ones they hand back."""
    proxy = _tagged(numpy.arange(6.0), {"tag": "x", "inner": [1.5, numpy.arange(3)], "none": None})
    proxy.plain = proxy.view(numpy.ndarray)  # a view of its own memory, as fsproxy's _fsproxy_view
    bare = numpy.arange(4.0).view(_Bare)
    bare.note = "dropped by its pickle"
    return [_tagged(numpy.arange(6.0)), proxy, proxy, _tagged(numpy.arange(6.0), {"tag": "x"}, _Other),
            _tagged(numpy.arange(10, dtype=">i4"), {"n": 1}), _tagged(numpy.arange(9.0), {"t": 2}),
            _tagged(numpy.arange(3.0), {"child": _tagged(numpy.arange(2.0), {"leaf": 2.5, "more": [proxy]})}),
            _tagged(numpy.arange(12.0).reshape(3, 4)[:, ::2], {"tag": "strided"}),
            _tagged(numpy.array([None, 1]), {"tag": "objects"}), _tagged(numpy.arange(200_000.0), {"tag": "large"}),
            bare, numpy.arange(5.0).view(_Bare), numpy.arange(4.0).view(_Ordered)]


def _walked_outputs():
    """Outputs for the C++ walk of digests() against the Python one: every kind of node it walks itself, every kind it
    hands back, objects met twice under either, and nesting past the depth the walk stops at."""
    import collections

    shared, again = numpy.arange(12.0), 0.25
    frozen = numpy.arange(9, dtype="i2")
    frozen.flags.writeable = False
    deep = [1.5]
    for _ in range(600):
        deep = [deep]
    arrays = [numpy.arange(10.0), numpy.arange(10.0).astype(">f8"), numpy.zeros((3, 4), order="F"), numpy.array(3.5),
              numpy.arange(12).reshape(3, 4)[:, ::2], numpy.zeros((2, 0)), numpy.arange(5, dtype=numpy.longdouble),
              numpy.array(["ab", "c"]), numpy.array([b"x", b"yz"]), numpy.arange(4).astype("M8[ns]"),
              numpy.zeros(3, dtype=[("a", "f8"), ("b", "i2")]), numpy.broadcast_to(numpy.arange(3.0), (4, 3)),
              numpy.ones(5, dtype=bool), numpy.float16([1, 2]), numpy.arange(6, dtype=numpy.complex64), frozen,
              numpy.arange(7.0)[::-1], numpy.arange(200_000.0), numpy.array([None, 1]), numpy.ma.array([1.0, 2.0]),
              numpy.arange(8, dtype="u1"), numpy.arange(9, dtype="i8"), numpy.array([0.1, float("nan"), -0.0])]
    return {
        "floats": [0.5, -0.0, float("nan"), float("inf"), 1e300, 5e-324, again, again],
        "ints": [0, -1, 7, 7, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**70, 10**200, 10**5000, True, False, True],
        "none": None,
        "text": ["", "abc", "it's \\ here", "h\u00e9llo \u2603", "x" * 81, "\u00e9" * 60, "\ud800", b"xy", 1 + 2j],
        "keys": {1: 2.0, (1, 2): "t"},
        "empty": [{}, [], ()],
        "subclasses": [collections.OrderedDict(a=1.0), _Point(1.0, [2.0]),
                       collections.defaultdict(list, b=[3.0]), numpy.float64(2.5), numpy.int32(3)],
        "arrays": arrays,
        "shared": [shared, shared, collections.OrderedDict(s=shared, f=again), (shared,)],
        "first in python": [collections.OrderedDict(a=frozen), frozen],
        "generic subclasses": _generic_subclasses(),
        "deep": deep,
        "it's": {"a'b": {"c\\d": 1.0}},
        "t": (1.0, (2.0, [3.0])),
    }


@pytest.mark.parametrize("pending", [False, True])
def test_the_c_walk_of_digests_is_the_python_walk_entry_for_entry(pending):
    # What the walk records goes into manifests: the same entries, values and order, or runs of two parity versions
    # would differ; `arrays` must hold the very objects, as the pickle's buffer table maps their memory.
    outputs = _walked_outputs()
    shown, arrays, python_pending = {}, {}, [] if pending else None
    c_shown, c_arrays, c_pending = {}, {}, [] if pending else None
    c_out = probe.digests(outputs, "outputs", c_shown, c_arrays, pending=c_pending)
    out = _python_walk(outputs, shown, arrays, python_pending)

    def plain(digest):  # a pending leaf by what it will hash: its array and its head
        return ("pending", id(digest.array), digest.head) if isinstance(digest, probe._Pending) else digest

    assert [(p, plain(d)) for p, d in c_out.items()] == [(p, plain(d)) for p, d in out.items()]
    assert list(c_shown.items()) == list(shown.items())
    assert [(p, id(a), plain(d)) for p, (a, d) in c_arrays.items()] == [
        (p, id(a), plain(d)) for p, (a, d) in arrays.items()]
    assert [plain(leaf) for leaf in c_pending or []] == [plain(leaf) for leaf in python_pending or []]
    assert bool(c_pending) == pending
    assert "outputs['deep']" + "[0]" * 499 in out and "outputs['deep']" + "[0]" * 502 not in out


def test_the_c_walk_hands_back_only_what_it_does_not_walk(monkeypatch):
    handed, leaves = [], []

    def digest_into(obj, *rest):
        handed.append(type(obj).__name__)
        return probe._digest_into(obj, *rest)

    def leaf_into(obj, *rest):
        leaves.append(type(obj).__name__)
        return probe._leaf_into(obj, *rest)

    monkeypatch.setattr(probe, "_WALK_HOOKS", (digest_into,) + probe._WALK_HOOKS[1:-1] + (leaf_into,))
    outputs = {"a": numpy.arange(20.0), "b": [1.5, 2, True, None, "x"], "c": (numpy.arange(3),), "m": numpy.ma.array([1]),
               "g": _tagged(numpy.arange(3.0), {"tag": "x", "inner": [numpy.arange(2)]}),
               "strided": _tagged(numpy.arange(6.0)[::2], {"tag": "y"}), "o": _tagged(numpy.array([None]), {"t": 1})}
    probe.digests(outputs, "outputs", {}, {})
    # An ndarray subclass's state and array are walked in C++ (a proxy's: every leaf of such a backend's scenarios);
    # what its state holds that the walk does not take (a masked array's mask and fill value, NumPy scalars) goes to
    # Python, as does the leaf of a subclass whose bytes are not hashed in place (its state still walked here), and a
    # subclass's object array whole (a container to probe.py).
    assert handed == ["bool", "int64", "_Tagged"] and leaves == ["_Tagged"]


def test_the_c_walk_of_digests_stops_at_the_time_limit():
    probe.set_deadline(1e-9)
    try:
        with pytest.raises(probe.DeadlineExceeded):
            probe.digests({"a": [1.0, 2.0]})
    finally:
        probe.set_deadline(None)


class _Live(numpy.ndarray):
    """A subclass whose reducer's state is its live instance dict."""


class _Mutator:
    """An object whose reducer replaces an attribute in another array's live instance dict as it is walked."""

    def __init__(self, target=None):
        self.target = target


def _mutate(mutator):
    if mutator.target is not None:
        mutator.target.__dict__["b"] = [9.0] * 3  # the old value's last reference goes
    return {"t": 1.0}


class _Freezer(numpy.ndarray):
    """A subclass whose reducer makes its array read-only: the array's head is read after it (as _leaf_digest does)."""


def _freeze(array):
    array.flags.writeable = False


reducers.register(_Live, reduce=lambda a: a.__dict__, rebuild=lambda values, state: values.view(_Live))
reducers.register(_Mutator, reduce=_mutate, rebuild=lambda state: _Mutator())
reducers.register(_Freezer, reduce=_freeze, rebuild=lambda values, state: values.view(_Freezer))


def _live(target_of_its_mutator):
    live = numpy.arange(3.0).view(_Live)
    live.a, live.b = _Mutator(live if target_of_its_mutator else None), [1.0, 2.0, 3.0]
    return live


def test_reducers_that_change_what_is_walked_walk_alike_in_c_and_python(monkeypatch):
    """The C++ walks read what a reducer returns when Python would, and as Python does: a live state changed as it is
    walked, an array changed by its reducer, a class renamed since its arrays' heads were cached. (A review found the
    loss walk reading a freed value here, and the digest walk reading the state and the head too early.)"""
    assert probe.digests({"x": _live(True)}, "outputs", {}, {}) == _python_walk({"x": _live(True)}, {}, {})
    assert probe.digests({"x": numpy.arange(3.0).view(_Freezer)}, "outputs", {}, {}) == _python_walk(
        {"x": numpy.arange(3.0).view(_Freezer)}, {}, {})

    class Renamed(numpy.ndarray):
        pass

    array = numpy.arange(9.0).view(Renamed)
    probe.digests({"a": array}, "outputs", {}, {})  # its head cached under the first name
    Renamed.__qualname__ = "Renamed again"
    shown, python_shown = {}, {}
    probe.digests({"a": array}, "outputs", shown, {})
    _python_walk({"a": array}, python_shown, {})
    assert shown == python_shown and shown["outputs['a']"].startswith("probe_test.Renamed again ")
    c_found = probe.losses(_live(False), _live(True))

    def python_only(f, u, path, depth, seen, found, judge, *rest):
        found += judge(f, u, path, depth, seen)

    monkeypatch.setattr(probe, "_loss_walk", python_only)
    assert c_found == probe.losses(_live(False), _live(True))
    assert [f["path"] for f in c_found] == ["outputs.b[0]", "outputs.b[1]", "outputs.b[2]"]


def test_a_subclass_with_no_instance_dict_fails_the_c_walk_as_it_fails_the_python_one():
    slotted = {"s": numpy.arange(2.0).view(_Slotted)}  # reducers.reduce's vars() refuses it
    with pytest.raises(TypeError):
        _python_walk(slotted, {}, {})
    with pytest.raises(TypeError):
        probe.digests(slotted, "outputs", {}, {})


def test_a_state_key_that_is_not_text_fails_the_c_walk_as_it_fails_the_python_one():
    keyed = numpy.arange(2.0).view(_Bare)
    keyed.__dict__[1] = 2.0  # an instance dict may hold any key; the path functions take text only
    with pytest.raises(TypeError):
        _python_walk({"k": keyed}, {}, {})
    with pytest.raises(TypeError):
        probe.digests({"k": keyed}, "outputs", {}, {})


def test_a_key_with_a_lone_surrogate_fails_the_c_walk_as_it_fails_the_python_one():
    with pytest.raises(Exception) as python:  # the path functions take UTF-8 text only
        _python_walk({"\ud800": 1.0}, {}, {})
    with pytest.raises(python.type):
        probe.digests({"\ud800": 1.0}, "outputs", {}, {})


def _loss_pairs():
    """(faithful, unpickled) pairs for the C++ walk of losses() against the Python one: equal and changed leaves of
    every kind it settles, changed structure, types and layouts it hands back, and objects under a reducer."""
    outputs = _walked_outputs()
    del outputs["deep"]  # past what pickle nests; the pair of nested lists below stands for it

    def nested(leaf, depth=520):
        for _ in range(depth):
            leaf = [leaf]
        return leaf

    again = round_trip(outputs)
    changed = round_trip(outputs)
    changed["floats"][1] = 0.0  # -0.0 written back as 0.0
    changed["ints"][2] = 8
    changed["text"][1] = "abd"
    changed["arrays"][0] = numpy.arange(10.0) + 1
    changed["arrays"][1] = numpy.arange(10.0)  # the byte order lost
    changed["arrays"][2] = numpy.zeros((3, 4))  # F order lost
    changed["arrays"][15] = numpy.arange(9, dtype="i2")  # the read-only flag lost
    changed["keys"] = {(1, 2): "t", 1: 2.0}
    changed["empty"] = [{}, (), ()]
    changed["t"] = [1.0, (2.0, [3.0])]
    changed["it's"]["a'b"] = {"c\\d": 1.0, "e": 2.0}
    changed["shared"][3] = (numpy.arange(12.0) + 1,)
    changed["generic subclasses"][1].tag = "y"  # an attribute changed, the array kept
    changed["generic subclasses"][4] = _tagged(numpy.arange(10, dtype="<i4"), {"n": 1})  # the byte order lost
    changed["generic subclasses"][5] = _tagged(numpy.arange(9.0), {"t": 2}, _Other)  # the type changed
    changed["generic subclasses"][6].child.more = []
    masked = numpy.ma.array([1.0, 2.0], mask=[0, 1])
    return [(outputs, again), (outputs, changed), (masked, round_trip(masked)),
            (masked, numpy.ma.array([1.0, 2.0])), ([1.5, 1.5], [1.5, 2.5]), ({"a": 1}, [1]),
            (nested(1.5), nested(2.5)), (nested(1.5, 400), nested(2.5, 400))]


@pytest.mark.parametrize("at", range(8))
def test_the_c_walk_of_losses_finds_what_the_python_walk_finds(at, monkeypatch):
    faithful, unpickled = _loss_pairs()[at]
    c_seen = {}
    c_found = probe.losses(faithful, unpickled, seen=c_seen)

    def python_only(f, u, path, depth, seen, found, judge, *rest):
        found += judge(f, u, path, depth, seen)

    monkeypatch.setattr(probe, "_loss_walk", python_only)
    seen, limit = {}, sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # the Python walk nests two frames a level
    try:
        python_found = probe.losses(faithful, unpickled, seen=seen)
    finally:
        sys.setrecursionlimit(limit)
    assert c_found == python_found
    assert len(c_seen) == len(seen)  # the same pairs kept (a reducer state is made afresh: its ids are not)
    if at == 1:  # every change above found, at its path
        paths = {f["path"] for f in c_found}
        for path in ("outputs['floats'][1]", "outputs['ints'][2]", "outputs['text'][1]", "outputs['arrays'][0]",
                     "outputs['arrays'][1]", "outputs['arrays'][2]", "outputs['arrays'][15]", "outputs['keys']",
                     "outputs['empty'][1]", "outputs['t']", "outputs['it\\'s']['a\\'b']", "outputs['shared'][3][0]",
                     "outputs['generic subclasses'][1].tag", "outputs['generic subclasses'][4]",
                     "outputs['generic subclasses'][5]", "outputs['generic subclasses'][6].child.more",
                     "outputs['generic subclasses'][10].note"):
            assert path in paths, (path, paths)
    if at in (1, 3, 4, 5, 7):
        assert c_found
    if at == 6:  # past depth 500 nothing is judged
        assert c_found == []


def test_the_c_walk_of_losses_hands_back_only_the_pairs_it_cannot_settle(monkeypatch):
    judged, original = [], probe._losses

    def judge(f, u, *rest):
        judged.append(type(f).__name__)
        return original(f, u, *rest)

    monkeypatch.setattr(probe, "_losses", judge)
    outputs = {"a": numpy.arange(20.0), "b": [1.5, 2, True, None, "x", (3,)], "m": numpy.ma.array([1.0], mask=[False]),
               "s": numpy.arange(3.0).astype(">f8"), "g": _tagged(numpy.arange(3.0), {"tag": "x", "n": [1.5]})}
    back = round_trip(outputs)
    # A masked array's pair is settled in C++, its attributes walked there: its fill value (a NumPy scalar) is judged.
    assert probe.losses(outputs["m"], back["m"]) == [] and judged == ["float64"]
    for_masked, judged[:] = list(judged), []
    assert probe.losses(outputs, back) == []
    assert judged == for_masked  # an unpickled dtype is another object than the faithful one's: still settled
    back["b"][0] = 2.5
    judged.clear()
    assert [f["path"] for f in probe.losses(outputs, back)] == ["outputs['b'][0]"]
    assert judged == ["float"] + for_masked
