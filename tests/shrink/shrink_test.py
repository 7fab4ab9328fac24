"""`parity shrink` on the broken self-test backends: a failing generated scenario shrinks to a smaller standalone
scenario module that still fails the same check at the same path, the same file every time; a passing scenario has
nothing to shrink; a hand-written or unknown id, or a --check the scenario does not fail, is refused, saying why."""
import importlib.util
import json
import os
import subprocess

import numpy
import pytest

from e2e_test import BIN, compare, parity, run
from parity.shrink import dtype_rank, layout_rank

VALUES = "ops.add[layout=F,dtype=float32]"  # broken.perturb moves an element of a float output: `values`
LAYOUT = "ops.maximum[layout=negative,dtype=int16]"  # broken.flip_order hands a C-ordered 2-D result back F-ordered
ORIGINAL_ELEMENTS = 24  # both take two 3x4 arrays
RESULT = "outputs['result']"


def shrink(scenario_id, backend, out, *extra, check=1):
    return parity("shrink", scenario_id, "--backend", backend, "--out", out, *extra, check=check)


def written(path):
    """The written module's declaration (`parity list --json`) and its inputs."""
    listed = json.loads(parity("list", "--json", "--scenarios", path, check=0).stdout)
    assert len(listed) == 1, listed
    spec = importlib.util.spec_from_file_location(f"shrunk_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return listed[0], module.INPUTS, module.__doc__


def failed_checks(scenarios, backend, tmp):
    """(check, path) of what fails when the module runs as any scenario does, and the compare's repro command."""
    run("gold", tmp / "gold", "--scenarios", scenarios)
    run(backend, tmp / backend, "--scenarios", scenarios)
    _, report, _ = compare(tmp / "gold", tmp / backend, tmp)
    (entry,) = report["scenarios"]
    return {(c["check"], c["path"]) for c in entry["checks"] if not c["ok"]}, entry["repro"]


@pytest.fixture(scope="module")
def values_shrunk(tmp_path_factory):
    out = tmp_path_factory.mktemp("values") / "shrunk_add.py"
    proc = shrink(VALUES, "broken.perturb", out)
    return out, out.read_bytes(), proc


def test_a_values_failure_shrinks_to_a_smaller_input_that_fails_the_same_check_at_the_same_path(values_shrunk,
                                                                                                tmp_path):
    out, _, proc = values_shrunk
    declared, inputs, doc = written(out)
    params = declared["meta"]["params"]
    assert declared["id"] == f"shrunk_add.add[layout={params['layout']},dtype={params['dtype']}]"
    elements = sum(a.size for a in inputs)
    assert elements < ORIGINAL_ELEMENTS
    assert dtype_rank(params["dtype"]) <= dtype_rank("float32") and all(a.dtype == params["dtype"] for a in inputs)
    assert layout_rank(params["layout"]) <= layout_rank("F")
    assert (elements, params["dtype"], params["layout"]) != (ORIGINAL_ELEMENTS, "float32", "F")
    failed, repro = failed_checks(str(out), "broken.perturb", tmp_path)
    assert ("values", RESULT) in failed
    # The module says what it reproduces and how.
    assert "`values`" in doc and RESULT in doc and VALUES in doc and repro in doc
    assert "wrote" in proc.stderr and str(out) in proc.stderr


def test_two_shrinks_write_the_same_file(values_shrunk):
    out, first, _ = values_shrunk
    out.unlink()
    shrink(VALUES, "broken.perturb", out)
    assert out.read_bytes() == first


def test_a_layout_failure_shrinks_to_the_fewest_elements_the_fault_shows_in(tmp_path):
    here = tmp_path / "here"
    here.mkdir()
    # Python writes bytecode as it does for users (a shell or CI may have turned that off): none is left here either.
    writing = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([BIN, "shrink", LAYOUT, "--backend", "broken.flip_order"], cwd=here, capture_output=True,
                          text=True, timeout=600, env=writing)
    assert proc.returncode == 1, proc.stderr
    # By default the module lands here, named after the function, and neither Hypothesis nor the check of the written
    # module (which imports it here) leaves a cache beside it.
    out = here / "shrunk_maximum.py"
    assert sorted(p.name for p in here.iterdir()) == [out.name]
    declared, inputs, _ = written(out)
    params = declared["meta"]["params"]
    # A result both C- and F-contiguous (one row or one column) cannot be flipped: 2x2 is the least that fails.
    assert [a.shape for a in inputs] == [(2, 2), (2, 2)]
    assert dtype_rank(params["dtype"]) < dtype_rank("int16") and params["layout"] == "C"
    assert all(isinstance(a, numpy.ndarray) and a.dtype == params["dtype"] for a in inputs)
    failed, _ = failed_checks(str(out), "broken.flip_order", tmp_path)
    assert ("layout", RESULT) in failed


def test_a_passing_scenario_has_nothing_to_shrink(tmp_path):
    out = tmp_path / "never.py"
    proc = shrink("ops.sum[layout=out,dtype=int32]", "broken.perturb", out, check=0)  # an int result: unperturbed
    assert "nothing to shrink" in proc.stderr and not out.exists()


DECLARING = '''"""A candidate that refuses every scenario, as its DIFFERENCES declare: compare counts each an xfail."""
from parity.backends import raised

__version__ = "1"
DIFFERENCES = [{"id": "refuses", "check": "error", "match": raised("RuntimeError", "refused, as declared"),
                "reason": "this test's candidate refuses every scenario"}]


def execute(fn, *args, **kwargs):
    raise RuntimeError("refused, as declared")
'''


def test_an_expected_failure_has_nothing_to_shrink(tmp_path):
    # The run exits 1 for the error (runs know nothing of declarations), so `parity check` does too; compare counts it
    # an xfail, which is what decides (README: exit 0, nothing written).
    backend = tmp_path / "declaring.py"
    backend.write_text(DECLARING)
    out = tmp_path / "never.py"
    proc = shrink(VALUES, str(backend), out, check=0)
    assert "ends `xfail`" in proc.stderr and "nothing to shrink" in proc.stderr, proc.stderr
    assert not out.exists()


def test_a_hand_written_scenario_has_no_search_space(tmp_path):
    out = tmp_path / "never.py"
    proc = shrink("plain_numpy.solve_system[n=8]", "broken.perturb", out, check=2)
    assert "plain_numpy.solve_system[n=8] is a hand-written scenario" in proc.stderr
    assert "no search space" in proc.stderr and not out.exists()


def test_an_unknown_id_is_named(tmp_path):
    proc = shrink("ops.no_such_operation[layout=C,dtype=int8]", "broken.perturb", tmp_path / "never.py", check=2)
    assert "ops.no_such_operation[layout=C,dtype=int8]" in proc.stderr


def test_a_candidate_that_cannot_load_is_named_with_the_check_that_could_not_be_made(tmp_path):
    proc = shrink(VALUES, "no_such_backend", tmp_path / "never.py", check=2)
    assert "cannot load backend 'no_such_backend'" in proc.stderr and "parity check" in proc.stderr, proc.stderr
    assert not (tmp_path / "never.py").exists()


def test_a_check_the_scenario_does_not_fail_is_refused(tmp_path):
    proc = shrink(VALUES, "broken.perturb", tmp_path / "never.py", "--check", "dtype", check=2)
    assert f"{VALUES} under broken.perturb fails values, not dtype" in proc.stderr
