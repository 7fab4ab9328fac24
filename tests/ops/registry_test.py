"""The operation registry and its layout matrix: what each layout makes, the deterministic default sample and the
full product behind PARITY_OPS, the generated ids, and a subtle fault in one rarely used function being caught."""
import json
import os

import numpy
import pytest

from e2e_test import REPO, parity
from parity.coverage import public_callables
from parity.ops import KINDS, LAYOUTS, REGISTRY, generated_ids, layouts, sampled

HOST = numpy.arange(12, dtype="<f8").reshape(3, 4)


@pytest.mark.parametrize("layout, check", [
    ("C", lambda a: a.flags.c_contiguous),
    ("F", lambda a: a.flags.f_contiguous and not a.flags.c_contiguous),
    ("stepped", lambda a: not a.flags.c_contiguous and not a.flags.f_contiguous and min(a.strides) > 0),
    ("negative", lambda a: all(s < 0 for s in a.strides)),
    ("big-endian", lambda a: a.dtype.byteorder == ">"),
    ("read-only", lambda a: not a.flags.writeable),
    ("misaligned", lambda a: not a.flags.aligned),
    ("broadcast", lambda a: a.strides[0] == 0),
])
def test_each_layout_makes_what_it_names(layout, check):
    made = layouts.make(numpy, HOST, layout)
    assert check(made), (layout, made.strides, made.flags)
    if layout != "broadcast":  # broadcast repeats the first row
        numpy.testing.assert_array_equal(made, HOST)


class _DeviceArray(numpy.ndarray):
    """An array of a device namespace such as CuPy's, which refuses a host (NumPy) array assigned into it."""

    def __setitem__(self, key, value):
        if isinstance(value, numpy.ndarray) and not isinstance(value, _DeviceArray):
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        super().__setitem__(key, value)


class _DeviceNamespace:
    """NumPy whose array constructors make _DeviceArray: enough of a device namespace for the layout makers."""

    def __getattr__(self, name):
        attr = getattr(numpy, name)
        if name in ("zeros", "asarray", "array", "asfortranarray", "broadcast_to"):
            return lambda *a, **k: attr(*a, **k).view(_DeviceArray)
        return attr


@pytest.mark.parametrize("layout", layouts.MEMORY_LAYOUTS)
def test_each_layout_hands_a_device_namespace_its_own_arrays(layout):
    # CuPy refused the stepped and misaligned layouts when their makers assigned the host array itself (found by
    # scripts/gpu_check.sh on an H200: 146 generated scenarios errored before calling the operation).
    made = layouts.make(_DeviceNamespace(), HOST, layout)
    assert isinstance(made, _DeviceArray), (layout, type(made))
    if layout != "broadcast":
        numpy.testing.assert_array_equal(made, HOST)


def test_shape_layouts():
    assert layouts.shape_for("0-d", (3, 4)) == () and layouts.shape_for("empty", (3, 4)) == (0, 4)
    assert not layouts.applies("big-endian", "int8") and not layouts.applies("misaligned", "bool")


def test_registry_entries_are_well_formed():
    assert len(REGISTRY) > 600
    for op in REGISTRY.values():
        assert op.kind in KINDS and op.variants(), op.name
        assert all(layout in LAYOUTS for layout, _ in op.variants()), op.name


def test_default_sample_is_deterministic_and_covers_every_layout():
    first, second = sampled(per_op=1), sampled(per_op=1)
    assert [(o.name, l, d) for o, l, d in first] == [(o.name, l, d) for o, l, d in second]
    assert len(first) == len(REGISTRY) < len(sampled(per_op=0))
    assert {layout for _, layout, _ in first} == set(LAYOUTS)


def _ids(env):
    proc = parity("list", "--scenarios", REPO / "scenarios" / "ops.py", env=env, check=0)
    return proc.stdout.split()


def test_generated_ids_and_the_full_product_switch():
    default, full = _ids({"PARITY_OPS": ""}), _ids({"PARITY_OPS": "full"})
    assert len(default) == len(REGISTRY)
    assert len(full) == len(sampled(per_op=0)) > len(default)
    assert set(default) <= set(full)
    assert "ops.cumsum[layout=F,dtype=int8]" in full
    assert "ops.linalg_solve[layout=C,dtype=float64]" in full
    assert len(_ids({"PARITY_OPS": "3"})) > len(default)
    # parity.ops.generated_ids (which in_play matches DIFFERENCES against) names exactly what the module generates.
    assert sorted(generated_ids(per_op=1)) == sorted(default) and sorted(generated_ids(per_op=0)) == sorted(full)


FAULTY = '''
"""fsproxy, except that numpy.gradient returns the other float width: one subtle fault in one rarely used function."""
import numpy

from parity_fixtures.fsproxy import *  # noqa: F401,F403
from parity_fixtures import fsproxy

_NUMPY = fsproxy._ProxyModule(numpy)
_gradient = _NUMPY.gradient


def _faulty_gradient(*args, **kwargs):
    result = _gradient(*args, **kwargs)  # one axis: one array, in the wrong float width
    return result.astype(numpy.float32 if result.dtype == numpy.float64 else numpy.float64)


_NUMPY._fsproxy_cache["gradient"] = _faulty_gradient


def namespace():
    return _NUMPY
'''


def test_a_subtle_fault_in_a_rare_function_is_caught(tmp_path):
    backend = tmp_path / "faulty.py"
    backend.write_text(FAULTY)
    selection = ["--scenarios", REPO / "scenarios" / "ops.py", "-k", "gradient"]
    parity("run", "--backend", "gold", "--out", tmp_path / "gold", "-q", *selection, check=0)
    parity("run", "--backend", backend, "--out", tmp_path / "cand", "-q", *selection, check=0)
    proc = parity("compare", tmp_path / "gold", tmp_path / "cand", "--json", tmp_path / "r.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    failed = [s for s in report["scenarios"] if s["status"] == "fail"]
    assert failed and all(s["id"].startswith("ops.gradient[") for s in failed)
    assert any(c["check"] == "dtype" and not c["ok"] for s in failed for c in s["checks"])


def test_an_entry_whose_name_numpy_lacks_is_skipped_saying_so(monkeypatch):
    # NumPy 2.5 removed row_stack: its entry must skip with the reason on such a NumPy, not error under gold.
    from parity._scenario import Skip
    from parity.ops import _scenario_for

    assert REGISTRY["row_stack"].unavailable() is None
    monkeypatch.delattr(numpy, "row_stack")
    reason = REGISTRY["row_stack"].unavailable()
    assert reason == f"NumPy {numpy.__version__} has no row_stack: the operation row_stack cannot run on it"
    run = _scenario_for(REGISTRY["row_stack"], {"__name__": "ops_probe"})
    with pytest.raises(Skip, match="has no row_stack"):
        run(xp=numpy, rng=numpy.random.default_rng(0), layout="C", dtype="float64")


def test_every_entry_names_what_it_needs_from_numpy():
    # An entry named after no NumPy function says which name it needs (`needs`), so that availability is checked.
    assert [op.name for op in REGISTRY.values() if op.unavailable()] == []
    assert REGISTRY["ma.count_masked_axis"].needs == "ma.count_masked"
    assert REGISTRY["random.beta"].unavailable() is None  # random.<method>: numpy.random.Generator's


MISSING = '''
"""One registry entry for a name the installed NumPy lacks, beside one it has."""
import numpy

from parity.ops import Op, generate

generate([Op("no_such_function", "elementwise", lambda xp, a: xp.no_such_function(a)),
          Op("negative", "elementwise", lambda xp, a: xp.negative(a))], per_op=1)
'''


def test_an_absent_name_is_skipped_in_a_run_and_counted_nowhere_by_coverage(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "missing_ops.py").write_text(MISSING)
    parity("run", "--backend", "gold", "--out", tmp_path / "gold", "-q", "--scenarios", folder, check=0)
    manifest = json.loads((tmp_path / "gold" / "manifest.json").read_text())
    statuses = {s["id"].split("[")[0]: s for s in manifest["scenarios"]}
    skipped = statuses["missing_ops.no_such_function"]
    assert skipped["status"] == "skip" and "has no no_such_function" in json.dumps(skipped)
    assert statuses["missing_ops.negative"]["status"] == "ok"
    out = tmp_path / "coverage.json"
    parity("coverage", "--scenarios", folder, "--json", out, check=0)
    result = json.loads(out.read_text())
    names = set(result["callables"]) | set(result["uncovered"])
    assert "numpy.negative" in result["callables"]
    assert not any("no_such_function" in name for name in names)
    assert result["total"] == sum(len(names) for names in public_callables().values())
