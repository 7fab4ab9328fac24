"""The Python API (parity.api over the extension module parity._core; README, "Python API"): result files written and
read back with their layout, compare_outputs' outcome as the JSON report holds it, compare_results against the
binary's own compare, the trust rules, and `import parity` without the module."""
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc

import numpy as np
import pytest

import parity
import parity._core  # noqa: F401 - this suite tests the module: its absence fails here, loudly
from e2e_test import E2E, REPO, compare, run


def big_tree():
    """Outputs of every kind the codec carries, in layouts a careless writer loses."""
    read_only = np.arange(4, dtype=np.int64)
    read_only.setflags(write=False)
    return {
        "fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        "big_endian": np.arange(6, dtype=">i4").reshape(2, 3),
        "read_only": read_only,
        "strided": np.arange(20.0)[::3],
        "zero_d": np.array(2.5),
        "scalars": [np.float32(1.5), np.int16(-3), 2**70, 1.5, 2 + 3j, True, None, "text", b"\x00raw"],
        "nested": {"tuple": (1, [2, {"empty": np.zeros((0, 3))}])},
    }


def test_a_written_result_reads_back_with_its_layout_and_types(tmp_path):
    file = tmp_path / "out.parity"
    parity.write_result(file, big_tree())
    back = parity.read_result(file)

    assert list(back) == list(big_tree())
    f = back["fortran"]
    assert f.flags.f_contiguous and not f.flags.c_contiguous and f.strides == (8, 24)
    np.testing.assert_array_equal(f, np.arange(12.0).reshape(3, 4))
    assert back["big_endian"].dtype.str == ">i4"
    np.testing.assert_array_equal(back["big_endian"], np.arange(6).reshape(2, 3))
    assert not back["read_only"].flags.writeable
    assert back["strided"].strides == (24,) and back["strided"].tolist() == list(np.arange(20.0)[::3])
    assert back["zero_d"].shape == () and back["zero_d"].dtype == np.float64 and float(back["zero_d"]) == 2.5
    scalars = back["scalars"]
    assert [type(s) for s in scalars] == [np.float32, np.int16, int, float, complex, bool, type(None), str, bytes]
    assert scalars == big_tree()["scalars"]
    nested = back["nested"]["tuple"]
    assert type(nested) is tuple and nested[0] == 1 and type(nested[1]) is list
    assert nested[1][1]["empty"].shape == (0, 3)


def test_an_unwritable_output_names_its_path(tmp_path):
    with pytest.raises(TypeError, match=r"outputs\['f'\]\[1\]: cannot write an object of type numpy.vectorize"):
        parity.write_result(tmp_path / "out.parity", {"f": [1, np.vectorize(abs)]})


def test_an_unwritable_output_is_found_before_any_file_is_made(tmp_path):
    """The outputs are encoded before the file is created: what the format cannot carry is the error even where the
    file could not be made, and nothing is left behind."""
    with pytest.raises(TypeError, match=r"outputs\['f'\]: cannot write an object of type numpy.vectorize"):
        parity.write_result(tmp_path / "no-such-dir" / "out.parity", {"f": np.vectorize(abs)})
    with pytest.raises(TypeError):
        parity.write_result(tmp_path / "out.parity", {"f": np.vectorize(abs)})
    assert list(tmp_path.iterdir()) == []


def test_write_result_never_replaces_a_device_fifo_or_directory(tmp_path):
    """It renamed its file over whatever had the name (or unlinked it first, in_place): as root, write_result to
    /dev/null replaced the machine's /dev/null with a regular file."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    special = [fifo, tmp_path]
    try:
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        special.append(tmp_path / "null")
    except PermissionError:
        print("no device node made here (not root): the FIFO and the directory stand for it")
    for target in special:
        kind = stat.S_IFMT(os.lstat(target).st_mode)
        for in_place in (False, True):
            with pytest.raises(ValueError, match="is not a regular file"):
                parity._core.write_result(str(target), {"x": 1}, in_place=in_place)
            assert stat.S_IFMT(os.lstat(target).st_mode) == kind, target


def test_a_damaged_file_is_a_value_error_naming_it(tmp_path):
    file = tmp_path / "out.parity"
    parity.write_result(file, {"a": np.arange(3)})
    file.write_bytes(file.read_bytes()[:-5])
    with pytest.raises(ValueError, match=str(file)):
        parity.read_result(file)


MATRIX = np.arange(12.0).reshape(3, 4)


def failed(outcome):
    """{(check, path)} of the failed checks of an outcome."""
    return {(c["check"], c["path"]) for c in outcome["checks"] if not c["ok"]}


def test_equal_outputs_pass_with_every_leaf_covered():
    outcome = parity.compare_outputs(big_tree(), big_tree())
    assert outcome["status"] == "pass" and outcome["message"] == "" and failed(outcome) == set()
    passed = {c["check"]: c["details"]["leaves"] for c in outcome["checks"]}
    assert passed["values"] == outcome["coverage"]["leaves"] > 10
    assert {"shape", "dtype", "layout", "writeable", "type"} <= set(passed)
    assert outcome["policy"]["layout"] == "contiguity" and outcome["policy"]["signed_zeros"] is False


def test_a_changed_value_fails_values_at_its_path_with_the_numpy_testing_message():
    candidate = MATRIX.copy()
    candidate[1, 2] += 0.5
    outcome = parity.compare_outputs({"m": MATRIX, "n": 3}, {"m": candidate, "n": 3})
    assert outcome["status"] == "fail" and outcome["message"] == "failed checks: values"
    assert failed(outcome) == {("values", "outputs['m']")}
    check = next(c for c in outcome["checks"] if not c["ok"])
    assert "Not equal to tolerance rtol=1e-07, atol=0" in check["message"]
    assert "Mismatched elements: 1 / 12" in check["message"] and "[1, 2]: 6.0 | 6.5" in check["message"]
    assert "Repro:" not in check["message"]  # no run to repeat
    assert check["details"]["mismatched"] == 1


@pytest.mark.parametrize("candidate, check, words", [
    (MATRIX.astype(np.float32), "dtype", "float32"),
    (np.asfortranarray(MATRIX), "layout", "layout differs: gold C-contiguous"),
    (MATRIX.reshape(4, 3), "shape", "(4, 3)"),
    (MATRIX.astype(">f8"), "dtype", ">f8"),
])
def test_dtype_layout_and_shape_fail_their_own_check(candidate, check, words):
    outcome = parity.compare_outputs({"m": MATRIX}, {"m": candidate})
    assert outcome["status"] == "fail"
    assert (check, "outputs['m']") in failed(outcome)
    message = next(c["message"] for c in outcome["checks"] if c["check"] == check and not c["ok"])
    assert words in message, message


def test_a_missing_key_fails_structure():
    outcome = parity.compare_outputs({"a": 1, "b": 2}, {"a": 1})
    assert failed(outcome) == {("structure", "outputs")}
    assert "'b'" in next(c["message"] for c in outcome["checks"] if not c["ok"])


def test_policies_and_tolerances_apply():
    f = np.asfortranarray(MATRIX)
    assert parity.compare_outputs({"m": MATRIX}, {"m": f}, policy={"layout": "ignore"})["status"] == "pass"
    close = MATRIX * (1 + 1e-5)
    assert parity.compare_outputs({"m": MATRIX}, {"m": close})["status"] == "fail"
    assert parity.compare_outputs({"m": MATRIX}, {"m": close}, rtol=1e-4)["status"] == "pass"
    assert parity.compare_outputs({"m": MATRIX}, {"m": close},
                                  tolerances={"outputs['m']": {"rtol": 1e-4}})["status"] == "pass"
    typo = parity.compare_outputs({"m": MATRIX}, {"m": MATRIX}, tolerances={"outputs['n']": {"rtol": 1}})
    assert failed(typo) == {("error", "outputs['n']")}


def test_an_unknown_policy_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="bogus"):
        parity.compare_outputs(1, 1, policy={"layout": "bogus"})



@pytest.mark.parametrize("value, error, said", [
    (-1, ValueError, "a finite number >= 0, got -1"),
    (float("nan"), ValueError, "a finite number >= 0, got nan"),
    (float("inf"), ValueError, "a finite number >= 0, got inf"),
    ("1e-3", TypeError, "a finite number >= 0, got '1e-3'"),
    (True, TypeError, "a finite number >= 0, got True"),
    pytest.param(10**400, ValueError, f"a finite number >= 0, got {10**400}", id="too-large-for-a-float"),
])
def test_a_tolerance_that_is_no_finite_number_at_least_0_is_refused_naming_it(value, error, said):
    """As @parity.scenario refuses it: rtol=-1 or NaN failed every value and rtol=inf passed any, silently."""
    for kwargs, name in (({"rtol": value}, "rtol"), ({"atol": value}, "atol"),
                         ({"tolerances": {"outputs['a']": {"rtol": value}}}, "tolerances[\"outputs['a']\"]['rtol']")):
        with pytest.raises(error) as raised:
            parity.compare_outputs({"a": 1.0}, {"a": 1.0}, **kwargs)
        assert f"{name} must be {said}" in str(raised.value)


@pytest.mark.parametrize("kwargs, error, said", [
    ({"type_map": {"numpy.ndarray": 1}}, TypeError, "type_map must map str to str, got 'numpy.ndarray': 1"),
    ({"type_map": {np.ndarray: "x.Proxy"}}, TypeError, "type_map must map str to str, got <class 'numpy.ndarray'>"),
    ({"type_map": [("numpy.ndarray", "x.Proxy")]}, TypeError, "type_map must be a dict, got [("),
    ({"policy": [("layout", "ignore")]}, TypeError, "policy must be a dict, got [('layout', 'ignore')]"),
    ({"policy": {"layout": ["ignore"]}}, TypeError, "policy must map str to str, got 'layout': ['ignore']"),
    ({"tolerances": [("outputs['a']", {"rtol": 1})]}, TypeError, "tolerances must be a dict, got [("),
    ({"tolerances": {"outputs['a']": {}}}, ValueError, "tolerances[\"outputs['a']\"] must be a dict with 'rtol' and/or "
                                                       "'atol', got {}"),
    ({"tolerances": {"['a']": {"rtol": 1}}}, ValueError, "tolerances key \"['a']\" must be an output path such as"),
    ({"tolerances": {"outputs['a']": 1e-3}}, TypeError, "tolerances[\"outputs['a']\"] must be a dict with 'rtol' "
                                                        "and/or 'atol', got 0.001"),
])
def test_a_mapping_argument_of_the_wrong_shape_is_refused_naming_it(kwargs, error, said):
    """As @parity.scenario refuses it (parity.arguments holds the one rule): a type_map of another type was pybind11's
    "incompatible function arguments", a policy given as pairs was taken by dict(), a tolerance of {} loosened nothing
    and one at a path that is no output path was only an error check of the outcome."""
    with pytest.raises(error) as raised:
        parity.compare_outputs({"a": 1.0}, {"a": 1.0}, **kwargs)
    assert said in str(raised.value)


def test_an_id_that_is_no_str_is_refused():
    with pytest.raises(TypeError, match="id must be a str, got None"):  # str() made it the id "None"
        parity.compare_outputs({"a": 1.0}, {"a": 1.0}, id=None)
    with pytest.raises(ValueError, match="id must be text that UTF-8 can encode"):  # pybind11's unnamed TypeError
        parity.compare_outputs({"a": 1.0}, {"a": 1.0}, id="a\udc80")
    assert parity.compare_outputs({"a": 1.0}, {"a": 1.0}, id="mine")["id"] == "mine"
    assert parity.compare_outputs({"a": 1.0}, {"a": 1.0}, id="größe")["id"] == "größe"


def test_compare_results_refuses_a_policy_given_as_pairs(tmp_path):
    with pytest.raises(TypeError, match=r"policy must be a dict, got \[\('layout', 'ignore'\)\]"):
        parity.compare_results(tmp_path / "gold", tmp_path / "candidate", policy=[("layout", "ignore")])


def test_the_decorator_and_compare_outputs_refuse_the_same_tolerances():
    """One rule (parity.arguments.output_tolerances): the decorator says the same, as a ValueError of its own."""
    for tolerances in ({"x": {"rtol": 1}}, {"outputs": {}}, [("outputs", {"rtol": 1})]):
        with pytest.raises((TypeError, ValueError)) as api:
            parity.compare_outputs(1.0, 1.0, tolerances=tolerances)
        with pytest.raises(ValueError) as decorator:
            parity.scenario(tolerances=tolerances)
        assert str(decorator.value) == f"@parity.scenario: {api.value}"


def test_a_flag_that_is_no_bool_is_refused_naming_it():
    """signed_zeros="no" was True."""
    with pytest.raises(TypeError, match="signed_zeros must be True or False, got 'no'"):
        parity.compare_outputs(0.0, -0.0, signed_zeros="no")


def test_a_numpy_bool_is_a_flag():
    """As bool() took it before flags were checked: np.True_ is what a comparison of NumPy values gives."""
    assert failed(parity.compare_outputs(0.0, -0.0, signed_zeros=np.True_)) != set()
    assert failed(parity.compare_outputs(0.0, -0.0, signed_zeros=np.False_)) == set()
    assert parity.scenario(signed_zeros=np.True_) is not None


def test_a_scenario_declared_with_a_numpy_bool_flag_runs(tmp_path):
    """The decorator checked np.True_ as a flag but kept it as given: the manifest's JSON could not hold it, and the
    whole run stopped."""
    module = tmp_path / "numpy_flag.py"
    module.write_text("import numpy as np\nimport parity\n\n\n@parity.scenario(signed_zeros=np.True_)\n"
                      "def s(xp):\n    return {'a': xp.zeros(2)}\n")
    run("gold", tmp_path / "out", "--scenarios", module)
    entry = json.loads((tmp_path / "out" / "manifest.json").read_text())["scenarios"][0]
    assert entry["meta"]["signed_zeros"] is True


def test_an_unwritable_output_is_a_serialize_error_of_its_side():
    outcome = parity.compare_outputs({"f": 1}, {"f": np.vectorize(abs)})
    assert outcome["status"] == "error" and failed(outcome) == {("serialize", "candidate")}
    assert "outputs['f']: cannot write an object of type numpy.vectorize" in outcome["message"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """gold, fsproxy and broken.flip_order runs of two corpus modules and the e2e scenarios, with the binary's own
    compare JSON of each pair."""
    tmp = tmp_path_factory.mktemp("runs")
    paths = ["--scenarios", REPO / "scenarios" / "broadcasting.py", "--scenarios", REPO / "scenarios" / "shapes.py",
             "--scenarios", E2E / "scenarios" / "basic.py"]
    run("gold", tmp / "gold", *paths, check=1)  # basic.raises raises on purpose
    run("fsproxy", tmp / "fsproxy", *paths, check=1)
    run("broken.flip_order", tmp / "flip", *paths, check=1)
    return {name: (tmp / name, compare(tmp / "gold", tmp / name, tmp)[1]) for name in ("fsproxy", "flip")}


def comparable(scenario):
    """A report's scenario without what differs from one compare to the next: times, and the repro command, whose
    program is the binary's path in one and `parity` in the other."""
    checks = [{**c, "message": c["message"].split("\nRepro: ")[0]} for c in scenario["checks"]]
    return {**{k: v for k, v in scenario.items() if k not in ("seconds", "repro")}, "checks": checks}


@pytest.mark.parametrize("candidate", ["fsproxy", "flip"])
def test_compare_results_returns_the_binary_compare_json(runs, candidate):
    results, expected = runs[candidate]
    report = parity.compare_results(results.parent / "gold", results)
    assert report["format"] == "parity-compare" and report["summary"] == expected["summary"]
    assert [comparable(s) for s in report["scenarios"]] == [comparable(s) for s in expected["scenarios"]]


def test_compare_results_catches_the_broken_backend(runs):
    report = parity.compare_results(runs["flip"][0].parent / "gold", runs["flip"][0])
    scenarios = {s["id"]: s for s in report["scenarios"]}
    assert report["summary"]["fail"] >= 1
    assert ("layout", "outputs['m']") in failed(scenarios["basic.matrix"])
    assert parity.compare_results(runs["flip"][0].parent / "gold", runs["flip"][0], only=["basic.matrix"],
                                  policy={"layout": "ignore"})["summary"]["pass"] == 1


def test_compare_outputs_holds_what_a_report_scenario_holds(runs):
    """The same fields as a scenario of the JSON report (docs/report-json.md), from the same writer."""
    _, expected = runs["fsproxy"]
    compared = next(s for s in expected["scenarios"] if s["status"] == "pass" and "skipped_checks" not in s)
    assert set(parity.compare_outputs(MATRIX, MATRIX)) == set(compared)


def test_compare_results_refuses_a_directory_that_is_no_run(tmp_path, runs):
    with pytest.raises(ValueError, match="manifest.json"):
        parity.compare_results(runs["fsproxy"][0], tmp_path)


def test_compare_results_refuses_runs_given_the_wrong_way_round(runs):
    """As `parity compare` does: a candidate run given as gold and the gold run as candidate are swapped."""
    results = runs["fsproxy"][0]
    with pytest.raises(ValueError, match="they are swapped; give the gold run first"):
        parity.compare_results(results, results.parent / "gold")


def test_compare_results_refuses_to_compare_nothing(runs):
    """A compare of 0 scenarios is a mistake to report, never an empty green report."""
    results = runs["fsproxy"][0]
    with pytest.raises(ValueError, match="the compare covered 0 scenarios"):
        parity.compare_results(results.parent / "gold", results, only=["no.such.scenario"])
    with pytest.raises(ValueError, match="has the id 'no.such.scenario' given with --only"):
        parity.compare_results(results.parent / "gold", results, only=["basic.matrix", "no.such.scenario"])


def test_compare_results_takes_its_time_limit_from_the_runs(tmp_path, runs):
    """Without `timeout`, each scenario has the time limit its runs recorded (here one too short for any), as
    `parity compare` gives it; timeout=0 is none."""
    for name in ("gold", "fsproxy"):
        shutil.copytree(runs["fsproxy"][0].parent / name, tmp_path / name)
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        manifest["run"]["timeout"] = 1e-9
        (tmp_path / name / "manifest.json").write_text(json.dumps(manifest))
    limited = parity.compare_results(tmp_path / "gold", tmp_path / "fsproxy", only=["basic.matrix"])
    assert [s["status"] for s in limited["scenarios"]] == ["timeout"], limited["scenarios"]
    assert "took longer than --timeout 1e-09 s" in limited["scenarios"][0]["checks"][0]["message"]
    unlimited = parity.compare_results(tmp_path / "gold", tmp_path / "fsproxy", only=["basic.matrix"], timeout=0)
    assert [s["status"] for s in unlimited["scenarios"]] == ["pass"], unlimited["scenarios"]



@pytest.mark.parametrize("timeout, error", [
    (float("nan"), ValueError), (float("inf"), ValueError), (-1, ValueError), ("5", TypeError), (True, TypeError),
])
def test_compare_results_refuses_a_time_limit_compare_refuses(runs, timeout, error):
    """As `parity compare --timeout` refuses it: NaN was no limit and -1 timed out every scenario, silently."""
    results = runs["fsproxy"][0]
    with pytest.raises(error) as raised:
        parity.compare_results(results.parent / "gold", results, only=["basic.matrix"], timeout=timeout)
    assert f"timeout must be a finite number of seconds >= 0 (0: none), got {timeout!r}" in str(raised.value)


@pytest.mark.parametrize("limit, error", [(0, ValueError), (-1, ValueError), (2**64, ValueError), (1.5, TypeError),
                                          (True, TypeError), ("10", TypeError)])
def test_a_memory_limit_that_is_no_whole_number_of_bytes_above_0_is_refused_naming_it(runs, tmp_path, limit, error):
    """As `parity compare --max-result-memory` refuses it: 0 made every scenario an error, and a negative one was
    pybind11's list of signatures."""
    results = runs["fsproxy"][0]
    said = f"must be a whole number of bytes from 1 to {2**64 - 1}, got {limit!r}"
    with pytest.raises(error, match=f"max_result_memory {re.escape(said)}"):
        parity.compare_results(results.parent / "gold", results, only=["basic.matrix"], max_result_memory=limit)
    parity.write_result(tmp_path / "out.parity", {"a": 1})
    with pytest.raises(error, match=f"max_memory {re.escape(said)}"):
        parity.read_result(tmp_path / "out.parity", max_memory=limit)


def test_compare_results_takes_one_id_given_as_a_str_as_that_id(runs):
    """As subprocess takes a str for one program, not a list of one-letter ones: `only="basic.matrix"` was iterated
    into the ids "b", "a", ..., and refused as naming no scenario."""
    results = runs["fsproxy"][0]
    report = parity.compare_results(results.parent / "gold", results, only="basic.matrix")
    assert [s["id"] for s in report["scenarios"]] == ["basic.matrix"]


@pytest.mark.parametrize("kwargs, said", [
    ({"only": ["basic.matrix", 1]}, "only: each item must be a str, got 1"),
    ({"only": b"basic.matrix"}, "only must be a str or a list of them, got b'basic.matrix'"),
    ({"trust_backends": [None]}, "trust_backends: each item must be a str, got None"),
    ({"trust_scenarios": [3]}, "trust_scenarios: each item must be a str or a path, got 3"),
    ({"pickle_probe": "no"}, "pickle_probe must be True or False, got 'no'"),
    ({"strict_differences": 1}, "strict_differences must be True or False, got 1"),
    ({"progress": None}, "progress must be True or False, got None"),
])
def test_compare_results_refuses_an_argument_of_the_wrong_type_naming_it(runs, kwargs, said):
    """pickle_probe="no" unpickled, and a list holding a number was pybind11's list of signatures."""
    results = runs["fsproxy"][0]
    with pytest.raises(TypeError, match=re.escape(said)):
        parity.compare_results(results.parent / "gold", results, **kwargs)


@pytest.mark.parametrize("as_given", [str, lambda path: path, lambda path: [path]],
                         ids=["one-str", "one-path", "list"])
def test_compare_results_refuses_a_scenario_directory_to_trust_that_does_not_exist(runs, tmp_path, as_given):
    """As `parity compare --scenarios` refuses it, for a misspelt directory trusts nothing, silently. Given as one str,
    it was iterated into one-letter paths, its first "/": every directory trusted."""
    results = runs["fsproxy"][0]
    missing = tmp_path / "misspelt"
    with pytest.raises(ValueError, match=f"trust_scenarios: {re.escape(str(missing))} does not exist"):
        parity.compare_results(results.parent / "gold", results, trust_scenarios=as_given(missing))
    report = parity.compare_results(results.parent / "gold", results, only="basic.matrix",
                                    trust_scenarios=as_given(tmp_path))
    assert report["summary"]["total"] == 1

def test_compare_results_leaves_the_callers_interpreter_as_it_was(runs):
    """The extension module runs in the caller's interpreter: comparing puts nothing on its sys.path and leaves its
    environment as it was (a process of the binary's own completes its interpreter; this one is complete)."""
    path, environ = list(sys.path), dict(os.environ)
    results = runs["fsproxy"][0]
    assert parity.compare_results(results.parent / "gold", results, only=["basic.matrix"])["summary"]["pass"] == 1
    assert sys.path == path and dict(os.environ) == environ


def test_compare_results_prints_nothing_unless_asked(runs, capfd):
    results = runs["fsproxy"][0]
    parity.compare_results(results.parent / "gold", results, only=["basic.matrix"])
    assert capfd.readouterr().err == ""
    parity.compare_results(results.parent / "gold", results, only=["basic.matrix"], progress=True)
    err = capfd.readouterr().err
    assert "| compare " in err and "parity compare: 1 scenarios in" in err, err


INTERRUPTS = """
import os
import signal

import parity
import parity.reducers


class Box:
    def __init__(self, v):
        self.v = v


def rebuild(state):
    for _ in range(int(os.environ.pop("API_TEST_INTERRUPT", "0"))):  # Ctrl-C while the compare rebuilds this output
        os.kill(os.getpid(), signal.SIGINT)
    return Box(state["v"])


parity.reducers.register(Box, reduce=lambda b: {"v": b.v}, rebuild=rebuild)


@parity.scenario
def boxed(xp):
    return {"b": Box(1), "a": xp.arange(3.0)}
"""


def test_datetimes_of_different_units_are_checked_for_overflow_piece_by_piece():
    """Whether a side's datetimes fit the finer unit both are compared in was checked by casting the whole side there
    and back: two copies and two masks at once, 2.25x the side (72 MB for these 32 MB). NumPy's allocations are
    tracemalloc's to count; the compare now holds pieces of 64 Ki elements."""
    days = np.arange(4_000_000).astype("M8[D]")
    gold, candidate = {"t": days}, {"t": days.astype("M8[s]")}
    parity.compare_outputs(gold, candidate)  # its first call imports what it needs: not counted below
    tracemalloc.start()
    try:
        outcome = parity.compare_outputs(gold, candidate)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [c["check"] for c in outcome["checks"] if not c["ok"]] == ["dtype"], outcome["message"]
    assert peak < 16 * 2**20, f"{peak / 2**20:.1f} MiB held at the peak of a compare of two 32 MB sides"


def test_a_ctrl_c_during_compare_outputs_stops_it_at_its_next_check():
    """compare_outputs installed no stop handler: Python's own only set a flag the C++ loops never read, and a
    compare of 2**36 elements (views of 2 MiB, broadcast along different axes: a minute or more here) ran to its
    end before the KeyboardInterrupt came. The kill comes from another process: a thread of this one would wait for
    the GIL."""
    row = np.zeros(2**18)
    across = np.lib.stride_tricks.as_strided(row, shape=(2**18, 2**18), strides=(0, 8))
    down = np.lib.stride_tricks.as_strided(row, shape=(2**18, 2**18), strides=(8, 0))
    killer = subprocess.Popen(["sh", "-c", f"sleep 1; kill -INT {os.getpid()}"])
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            parity.compare_outputs(across, down)
    finally:
        killer.wait()
    assert time.monotonic() - start < 30, "the compare ran on after the Ctrl-C"
    assert parity.compare_outputs(np.arange(3.0), np.arange(3.0))["status"] == "pass"


def test_a_ctrl_c_during_write_result_stops_it_and_writes_nothing(tmp_path):
    """write_result installed no stop handler, and a layout that overlaps itself is gathered element by element: the
    2**32 elements of this 1 MiB span ran ~20 s to their end and the file was written before the KeyboardInterrupt
    came. The kill comes from another process: a thread of this one would wait for the GIL."""
    row = np.zeros(2**16)
    overlapping = np.lib.stride_tricks.as_strided(row, shape=(2**16, 2**16), strides=(8, 8))
    target = tmp_path / "big.parity"
    killer = subprocess.Popen(["sh", "-c", f"sleep 1; kill -INT {os.getpid()}"])
    try:
        with pytest.raises(KeyboardInterrupt):
            parity.write_result(target, {"x": overlapping})
    finally:
        killer.wait()
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary
    parity.write_result(target, {"x": np.arange(3.0)})  # the signal noted stops no later call
    assert parity.read_result(target)["x"].tolist() == [0.0, 1.0, 2.0]


SMALL_TREE = {"a": np.arange(10.0), "b": [1, 2, "x"], "c": np.ones((3, 3), dtype="f4")}


def test_a_ctrl_c_during_a_loop_of_compare_outputs_is_never_lost():
    """A signal that came after the walk's last check was noted by the compare's handler, then dropped with the flag
    when the compare ended normally: Ctrl-C was lost in about half of these loops."""
    lost = 0
    for _ in range(10):
        threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
        end = time.monotonic() + 2
        try:
            while time.monotonic() < end:
                parity.compare_outputs(SMALL_TREE, SMALL_TREE)
            lost += 1
        except KeyboardInterrupt:
            pass
    assert lost == 0, f"the Ctrl-C was lost in {lost} of 10 loops"


def test_compare_outputs_in_two_threads_leaves_the_callers_signal_handlers():
    """Each call saved the handlers and set them back: two threads' calls around each other had left parity's handler
    installed for good, so that SIGINT raised nothing and SIGTERM ended nothing."""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    big = np.random.default_rng(0).standard_normal(2_000_000)

    def work(delay):
        time.sleep(delay)
        for _ in range(3):
            parity.compare_outputs({"x": big}, {"x": big})

    threads = [threading.Thread(target=work, args=(delay,)) for delay in (0, 0.01)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    assert parity.compare_outputs(np.arange(3.0), np.arange(3.0))["status"] == "pass"


BIG = """
import parity


@parity.scenario
def big(xp):
    return {"x": xp.arange(4_000_000) * 0.5}
"""


def test_compare_results_in_two_threads_leaves_the_callers_signal_handlers(tmp_path):
    """compare_results saved and set back the handlers around each call, as compare_outputs had: two threads' calls
    around each other (the values pass lets go of the GIL) left parity's handler installed for good."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "big.py").write_text(BIG)
    for side in ("gold", "cand"):
        run("gold", tmp_path / side, "--scenarios", scenarios)

    def work():
        for _ in range(6):
            parity.compare_results(tmp_path / "gold", tmp_path / "cand", trust_scenarios=scenarios)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)


def test_a_ctrl_c_during_compare_results_is_a_keyboard_interrupt_and_the_next_compare_works(tmp_path, monkeypatch):
    """compare_results installs the compare's own SIGINT handler while it runs: a Ctrl-C then returned None, as if a
    report, and left the stop flag set, so that the caller's next compare_outputs failed at once ("unknown
    exception"). A second Ctrl-C, which ends the parity program, must not end the caller's interpreter (a notebook's
    kernel): here two come."""
    scenarios = tmp_path / "scen"
    scenarios.mkdir()
    (scenarios / "interrupts.py").write_text(INTERRUPTS)
    for side in ("gold", "cand"):
        run("gold", tmp_path / side, "--scenarios", scenarios)
    monkeypatch.setenv("API_TEST_INTERRUPT", "2")
    with pytest.raises(KeyboardInterrupt):
        parity.compare_results(tmp_path / "gold", tmp_path / "cand", trust_scenarios=[scenarios])
    assert "API_TEST_INTERRUPT" not in os.environ, "the reducer never ran"
    assert parity.compare_outputs(np.arange(3.0), np.arange(3.0))["status"] == "pass"
    report = parity.compare_results(tmp_path / "gold", tmp_path / "cand", trust_scenarios=[scenarios])
    assert report["summary"]["pass"] == 1, report["summary"]

def test_paths_outside_the_program_are_the_extension_modules_grammar():
    """parity.paths has no grammar of its own: outside the parity program it is parity._core's, paths.cc's code."""
    from parity import paths
    for name in ("key_path", "item_path", "state_path", "index_path"):
        assert getattr(paths, name) is getattr(parity._core, name)
    assert paths.key_path("outputs", "it's a \\ [0]") == "outputs['it\\'s a \\\\ [0]']"
    assert paths.key_path("outputs['a']", "caf\u00e9 \U0001F600") == "outputs['a']['caf\u00e9 \U0001F600']"
    assert paths.item_path("outputs['a']", 12) == "outputs['a'][12]"
    assert paths.state_path("outputs['df']", "['a']") == "outputs['df']['a']"
    assert paths.state_path("outputs['s']", ".iloc[3]") == "outputs['s'].iloc[3]"
    assert paths.state_path("outputs['m']", "mask") == "outputs['m'].mask"
    assert paths.index_path(()) == "[()]" and paths.index_path((2, 0)) == "[2, 0]"


def test_fidelity_digests_outside_the_program_are_keyed_by_the_codecs_paths():
    from parity import probe
    tricky = {"it's": [1], "a.b": np.array([[None, 1]], dtype=object), "z": np.array("s", dtype=object)}
    assert set(probe.digests(tricky)) == {"outputs", "outputs['it\\'s']", "outputs['it\\'s'][0]", "outputs['a.b']",
                                          "outputs['a.b'][0, 0]", "outputs['a.b'][0, 1]", "outputs['z']",
                                          "outputs['z'][()]"}


def test_paths_without_a_compiled_module_says_what_to_build():
    proc = python("""\
        try:
            import parity.paths
        except ImportError as e:
            print(e)
        """)
    assert proc.returncode == 0, proc.stderr
    assert "parity.paths" in proc.stdout and "cmake --build build --target parity_python" in proc.stdout, proc.stdout


def python(code, env=None, cwd=None):
    """Runs `code` in a fresh interpreter that imports this checkout's parity; returns the CompletedProcess."""
    base = {k: v for k, v in os.environ.items() if k != "PARITY_CORE_DIR"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                          env={**base, "PYTHONPATH": str(REPO / "python"), **(env or {})}, cwd=cwd)


def test_reading_a_file_never_imports_the_module_it_names(tmp_path):
    (tmp_path / "hostile_types.py").write_text(textwrap.dedent("""\
        import pathlib
        import numpy
        pathlib.Path(__file__).with_name("imported").write_text("the module ran")

        class Sub(numpy.ndarray):
            pass
        """))
    file = tmp_path / "sub.parity"
    core = {"PARITY_CORE_DIR": os.environ["PARITY_CORE_DIR"]}
    wrote = python(f"""\
        import numpy, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import parity, hostile_types
        parity.write_result({str(file)!r}, {{"x": numpy.arange(3.0).view(hostile_types.Sub)}})
        """, core)
    assert wrote.returncode == 0, wrote.stderr
    (tmp_path / "imported").unlink()
    # The module is importable from the reader's working directory and sys.path: only its name in the file is missing.
    read = python(f"""\
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import parity
        try:
            parity.read_result({str(file)!r})
        except ValueError as e:
            print("refused:", e)
        assert "hostile_types" not in sys.modules
        """, core, cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert f"refused: {file}: outputs['x']: type hostile_types.Sub is not rebuilt" in read.stdout, read.stdout
    assert not (tmp_path / "imported").exists()


@pytest.mark.parametrize("trusted", [lambda backend: [str(backend)], str], ids=["list", "one-str"])
def test_compare_results_never_imports_an_untrusted_backend(tmp_path, trusted):
    """A trusted backend given as one str is that backend (it was iterated into one-letter names, trusting none)."""
    backend = tmp_path / f"marking_{tmp_path.name}.py"  # a module of its own per case: imported once, it stays
    backend.write_text("import pathlib\npathlib.Path(__file__).with_name('imported').write_text('ran')\n")
    scenarios = ["--scenarios", E2E / "scenarios" / "basic.py", "--only", "basic.matrix"]
    run("gold", tmp_path / "gold", *scenarios)
    run(str(backend), tmp_path / "cand", *scenarios)
    (tmp_path / "imported").unlink()  # the run imported it, as it must
    report = parity.compare_results(tmp_path / "gold", tmp_path / "cand")
    assert not (tmp_path / "imported").exists()
    assert report["summary"]["pass"] == 1
    parity.compare_results(tmp_path / "gold", tmp_path / "cand", trust_backends=trusted(backend))
    assert (tmp_path / "imported").exists()  # trusted: imported for its reducers, as `compare --trust-backend` does


def test_import_parity_works_without_the_module_and_the_api_says_how_to_build_it():
    proc = python("""\
        import parity
        assert parity.scenario and parity.skip  # what scenarios need
        try:
            parity.compare_outputs({}, {})
        except ImportError as e:
            print(e)
        """)
    assert proc.returncode == 0, proc.stderr
    assert "cmake --build build --target parity_python" in proc.stdout and "PARITY_CORE_DIR" in proc.stdout
    assert "pip install ." in proc.stdout


def test_the_embedded_interpreter_imports_parity_without_the_module(tmp_path):
    """`parity run` imports the package in its workers, where parity._core is never loaded."""
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / "uses_api.py").write_text(textwrap.dedent("""\
        import sys
        import parity

        @parity.scenario
        def loaded(xp):
            return {"core": "parity._core" in sys.modules}
        """))
    run("gold", tmp_path / "gold", "--scenarios", directory)
    assert parity.read_result(next((tmp_path / "gold" / "results").glob("*.parity"))) == {"core": False}


def test_a_run_result_file_reads_as_compare_rebuilds_it(runs):
    gold = runs["fsproxy"][0].parent / "gold"
    entries = json.loads((gold / "manifest.json").read_text())["scenarios"]
    entry = next(s for s in entries if s["id"] == "basic.big_endian")
    outputs = parity.read_result(gold / entry["file"])
    assert outputs["label"] == "be" and outputs["be"].dtype.str == ">f8"
