"""End-to-end tests of the parity binary: run -> compare -> JSON/JUnit, on the corpus and on broken backends."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
E2E = REPO / "tests" / "e2e"

if not Path(BIN).is_file():
    pytest.exit(f"parity binary not found at {BIN}: build it first (cmake --build build)", returncode=2)


def parity(*args, env=None, check=None):
    """Runs the binary; returns the CompletedProcess. `check` is the exit code the caller expects."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, env=full_env, timeout=600)
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}, expected {check}\n{proc.stdout}\n{proc.stderr}"
    return proc


def run(backend, out, *extra, check=0):
    return parity("run", "--backend", backend, "--out", out, "-q", *extra, check=check)


def compare(gold, cand, tmp, check=None):
    json_file, junit_file = tmp / f"{cand.name}.json", tmp / f"{cand.name}.xml"
    proc = parity("compare", gold, cand, "--json", json_file, "--junit", junit_file, check=check)
    return proc, json.loads(json_file.read_text()), junit_file


def scenario_dir(tmp_path, module, source):
    """A directory holding one scenario module `module`.py with `source`."""
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / f"{module}.py").write_text("import parity\n\n" + source)
    return directory


def manifest_entries(results):
    """The manifest's scenario entries by id."""
    return {s["id"]: s for s in json.loads((results / "manifest.json").read_text())["scenarios"]}


def failing(report):
    """{(id, check, path)} of every failed check."""
    return {(s["id"], c["check"], c["path"]) for s in report["scenarios"] for c in s["checks"] if not c["ok"]}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The bundled corpus run twice under gold and once under fsproxy."""
    tmp = tmp_path_factory.mktemp("corpus")
    for name, backend in (("gold", "gold"), ("gold2", "gold"), ("fsproxy", "fsproxy")):
        run(backend, tmp / name)
    return tmp


@pytest.fixture(scope="module")
def e2e_gold(tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e") / "gold"
    run("gold", out, "--scenarios", E2E / "scenarios", check=1)  # basic.raises is an error
    return out


def test_two_gold_runs_write_bitwise_identical_result_files(corpus):
    first = sorted((corpus / "gold" / "results").iterdir())
    second = sorted((corpus / "gold2" / "results").iterdir())
    assert [f.name for f in first] == [f.name for f in second] and len(first) >= 20
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_gold_vs_gold_passes_everything(corpus, tmp_path):
    _, report, _ = compare(corpus / "gold", corpus / "gold2", tmp_path, check=0)
    assert report["summary"]["pass"] == report["summary"]["total"] >= 20


def test_gold_vs_fsproxy_passes_every_check(corpus, tmp_path):
    _, report, _ = compare(corpus / "gold", corpus / "fsproxy", tmp_path, check=0)
    assert report["summary"]["pass"] == report["summary"]["total"] >= 20
    checked = {c["check"] for s in report["scenarios"] for c in s["checks"]}
    assert {"structure", "shape", "dtype", "layout", "writeable", "type", "values", "attrs"} <= checked
    types = {c["details"].get("candidate") for s in report["scenarios"] for c in s["checks"] if c["check"] == "type"}
    assert types == {None}, "passing type checks carry only leaf counts"


def test_manifest_records_what_the_issue_promises(corpus):
    manifest = json.loads((corpus / "fsproxy" / "manifest.json").read_text())
    assert manifest["backend"]["name"] == "fsproxy" and manifest["backend"]["version"]
    assert manifest["environment"]["python"] and manifest["environment"]["numpy"].startswith("2.")
    assert manifest["environment"]["platform"] and manifest["complete"] is True
    for s in manifest["scenarios"]:
        assert s["status"] == "ok" and s["seconds"] >= 0 and (corpus / "fsproxy" / s["file"]).is_file()
    assert not list((corpus / "fsproxy").rglob("*.tmp-*")), "temp files left behind"


def test_junit_parses_with_an_independent_consumer_and_counts_match_json(e2e_gold, tmp_path):
    junitparser = pytest.importorskip("junitparser")
    cand = tmp_path / "broken.perturb"
    run("broken.perturb", cand, "--scenarios", E2E / "scenarios", check=1)
    _, report, junit_file = compare(e2e_gold, cand, tmp_path, check=1)
    xml = junitparser.JUnitXml.fromfile(str(junit_file))
    suites = list(xml) if isinstance(xml, junitparser.JUnitXml) else [xml]
    assert len(suites) == 1
    suite, summary = suites[0], report["summary"]
    assert suite.tests == summary["total"]
    assert suite.failures == summary["fail"] + summary["xpass"]
    assert suite.errors == summary["error"]
    assert suite.skipped == summary["skip"] + summary["xfail"]
    cases = {f"{case.classname}.{case.name}": case for case in suite}
    assert set(cases) == {s["id"] for s in report["scenarios"]}
    failed = cases["basic.matrix"]
    assert failed.result and failed.result[0].message == "failed checks: values"
    assert "Mismatched elements: 1 / 20" in failed.result[0].text


@pytest.mark.parametrize("backend, check, paths", [
    ("broken.flip_order", "layout", {"basic.matrix": "outputs['m']", "basic.big_endian": "outputs['be']"}),
    ("broken.native_byteorder", "dtype", {"basic.big_endian": "outputs['be']"}),
    ("broken.perturb", "values", {"basic.matrix": "outputs['m']", "basic.big_endian": "outputs['be']"}),
])
def test_broken_backend_fails_exactly_the_expected_check(e2e_gold, tmp_path, backend, check, paths):
    cand = tmp_path / backend
    run(backend, cand, "--scenarios", E2E / "scenarios", check=1)
    proc, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    raised = {("basic.raises", "error", "gold"), ("basic.raises", "error", "candidate")}
    assert failing(report) == {(i, check, p) for i, p in paths.items()} | raised
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {**{i: "pass" for i in status}, **{i: "fail" for i in paths}, "basic.raises": "error"}
    assert f"[{check}]" in proc.stderr


def test_values_failure_reads_like_numpy_testing_and_its_repro_reproduces(e2e_gold, tmp_path):
    cand = tmp_path / "broken.perturb"
    run("broken.perturb", cand, "--scenarios", E2E / "scenarios", check=1)
    _, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    scenario = next(s for s in report["scenarios"] if s["id"] == "basic.matrix")
    check = next(c for c in scenario["checks"] if not c["ok"])
    for text in ("rtol=1e-07, atol=0", "Mismatched elements: 1 / 20 (5%)", "[0, 1]:", "gold | broken.perturb",
                 "Max absolute difference among violations", "Max relative difference among violations", "Repro: "):
        assert text in check["message"], text
    details = check["details"]
    assert details["mismatched"] == 1 and details["total"] == 20 and details["first"][0]["index"] == [0, 1]
    assert details["max_rel_diff"] > 1e-3
    assert details["map"] == {"shape": [4, 5], "grid": [4, 5], "counts": [0, 1] + [0] * 18, "sizes": [1] * 20}
    assert "counts" not in check["message"]
    shutil.rmtree("/tmp/parity-repro", ignore_errors=True)
    repro = subprocess.run(scenario["repro"], shell=True, capture_output=True, text=True, timeout=300)
    assert repro.returncode == 1 and "[values] outputs['m']" in repro.stderr, repro.stderr


def test_a_failing_values_check_maps_where_its_mismatches_are(tmp_path):
    scenarios = scenario_dir(tmp_path, "spread",
                             "@parity.scenario\ndef arrays(xp):\n"
                             "    return {'long': xp.arange(100.0),\n"
                             "            'wide': xp.asfortranarray(xp.arange(17 * 130.0).reshape(17, 130))}\n")
    backend = tmp_path / "spread.py"
    backend.write_text("def materialize(obj):\n"
                       "    long, wide = obj['long'].copy(), obj['wide'].copy(order='K')\n"
                       "    long[[1, 4, 50, 99]] += 1\n"
                       "    wide[0, :3] += 1\n"
                       "    wide[16, 129] = -1.0\n"
                       "    return {'long': long, 'wide': wide}\n")
    run("gold", tmp_path / "gold", "--scenarios", scenarios)
    run(str(backend), tmp_path / "cand", "--scenarios", scenarios)
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=1)
    maps = {c["path"]: c["details"]["map"] for c in report["scenarios"][0]["checks"] if not c["ok"]}
    assert set(maps) == {"outputs['long']", "outputs['wide']"}
    # 100 elements in 64 bins: element i in bin i * 64 // 100.
    long = maps["outputs['long']"]
    assert (long["shape"], long["grid"], len(long["counts"])) == ([100], [64], 64)
    assert {cell: n for cell, n in enumerate(long["counts"]) if n} == {0: 1, 2: 1, 32: 1, 63: 1}
    assert sum(long["sizes"]) == 100 and long["sizes"][:3] == [2, 2, 1]
    # 17 x 130 (F order) in 16 x 64 cells: rows 0-1 and columns 0-2 make the first cell; (16, 129) is in the last.
    wide = maps["outputs['wide']"]
    assert (wide["shape"], wide["grid"], len(wide["counts"])) == ([17, 130], [16, 64], 16 * 64)
    assert {cell: n for cell, n in enumerate(wide["counts"]) if n} == {0: 3, 16 * 64 - 1: 1}
    assert sum(wide["sizes"]) == 17 * 130 and wide["sizes"][0] == 6


def test_a_raising_scenario_is_an_error_on_that_side_and_the_rest_still_run(e2e_gold, tmp_path):
    status = manifest_entries(e2e_gold)
    assert status["basic.raises"]["status"] == "error"
    assert status["basic.raises"]["error"]["type"] == "RuntimeError"
    assert "basic.py" in status["basic.raises"]["error"]["traceback"]
    assert [status[i]["status"] for i in ("basic.matrix", "basic.big_endian", "basic.integers")] == ["ok"] * 3


def test_unknown_backend_exits_2_naming_it(tmp_path):
    proc = parity("run", "--backend", "nosuchmodule", "--out", tmp_path / "x", check=2)
    assert "nosuchmodule" in proc.stderr and not (tmp_path / "x").exists()


def test_backend_comes_from_PARITY_BACKEND_when_no_flag_is_given(tmp_path):
    run_env = {"PARITY_BACKEND": "fsproxy"}
    parity("run", "--out", tmp_path / "x", "--scenarios", E2E / "scenarios", "--only", "basic.matrix", env=run_env, check=0)
    assert json.loads((tmp_path / "x" / "manifest.json").read_text())["backend"]["name"] == "fsproxy"
    env = {k: v for k, v in os.environ.items() if k != "PARITY_BACKEND"}
    proc = subprocess.run([BIN, "run", "--out", str(tmp_path / "y")], capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and "PARITY_BACKEND" in proc.stderr


def test_a_backend_given_as_a_file_path_loads(tmp_path):
    backend = tmp_path / "my_backend.py"
    backend.write_text("import numpy\n__version__ = '9.9'\ndef namespace():\n    return numpy\n")
    run(str(backend), tmp_path / "x", "--scenarios", E2E / "scenarios", "--only", "basic.matrix")
    assert json.loads((tmp_path / "x" / "manifest.json").read_text())["backend"]["version"] == "9.9"


def test_a_malformed_REQUIRED_ATTRS_stops_the_run_naming_it(tmp_path):
    backend = tmp_path / "bad_required.py"
    backend.write_text("REQUIRED_ATTRS = {'numpy.ndarray': '_wrapped'}\n")  # a string, not a list of names
    proc = run(str(backend), tmp_path / "x", "--scenarios", E2E / "scenarios", check=2)
    assert "REQUIRED_ATTRS must be a dict of type names to lists of attribute names" in proc.stderr


def test_module_import_errors_are_reported_per_module_and_the_rest_runs(tmp_path):
    proc = run("gold", tmp_path / "x", "--scenarios", E2E / "bad_modules", check=1)
    status = {i: (s["status"], s.get("error", {}).get("type")) for i, s in manifest_entries(tmp_path / "x").items()}
    assert status == {"good.fine": ("ok", None), "syntax_error": ("error", "SyntaxError"),
                      "bad_decorator": ("error", "ValueError")}
    assert "rtol must be a finite number" in proc.stderr
    listing = parity("list", "--scenarios", E2E / "bad_modules", check=1)
    assert "good.fine" in listing.stdout and "syntax_error  [module error: SyntaxError" in listing.stdout


@pytest.mark.parametrize("kwargs, message", [
    ({"policy": {"layout": "loose"}}, "policy['layout'] = 'loose' is not one of contiguity, strides, ignore"),
    ({"policy": {"colour": "exact"}}, "policy key 'colour' is not one of dtype, layout, type"),
    ({"xfail": {"compare": {"colour": "x"}}}, "xfail['compare'] key 'colour' is not a check name"),
    ({"xfail": {"candidate": {"layout": "x"}}}, "xfail['candidate'] must be a non-empty reason string"),
    ({"tolerances": {"['x']": {"rtol": 1}}}, "must be an output path such as"),
    ({"tolerances": {"outputs['x']": {"rtol": -1}}}, "must be a finite number >= 0"),
    ({"tolerances": {"outputs['x']": {"tol": 1}}}, "must be a dict with 'rtol' and/or 'atol'"),
    ({"signed_zeros": 1}, "signed_zeros must be True or False"),
])
def test_the_decorator_rejects_bad_options_naming_them(kwargs, message):
    sys.path.insert(0, str(REPO / "harness" / "python"))
    import parity as api

    with pytest.raises(ValueError, match=None) as raised:
        api.scenario(**kwargs)
    assert message in str(raised.value)


def test_strict_xfail_per_pass(tmp_path):
    run("gold", tmp_path / "gold", "--scenarios", E2E / "xfail", check=0)
    run("fsproxy", tmp_path / "cand", "--scenarios", E2E / "xfail", check=1)  # a candidate xpass and error
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=1)
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {
        "expectations.expected_failure": "xfail",
        "expectations.candidate_error_not_hidden": "error",
        "expectations.unexpected_candidate_pass": "xpass",
        "expectations.unexpected_compare_pass": "xpass",
        "expectations.skipped": "skip",
        "expectations.plain[n=1]": "pass",
        "expectations.plain[n=2]": "pass",
    }


def test_missing_scenario_and_missing_directory(e2e_gold, tmp_path):
    cand = tmp_path / "cand"
    run("gold", cand, "--scenarios", E2E / "scenarios", "--only", "basic.matrix")
    _, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    missing = {s["id"] for s in report["scenarios"] for c in s["checks"] if c["check"] == "missing"}
    assert missing == {"basic.big_endian", "basic.integers", "basic.raises"}
    proc = parity("compare", e2e_gold, tmp_path / "nowhere", check=2)
    assert str(tmp_path / "nowhere") in proc.stderr


def test_unknown_scenario_id_and_path_exit_2(tmp_path):
    proc = run("gold", tmp_path / "x", "--scenarios", E2E / "scenarios", "--only", "basic.nope", check=2)
    assert "basic.nope" in proc.stderr
    proc = run("gold", tmp_path / "y", "--scenarios", tmp_path / "absent", check=2)
    assert str(tmp_path / "absent") in proc.stderr


def test_unserializable_output_is_a_serialize_error_at_its_path_and_the_rest_pass(tmp_path):
    scenarios = scenario_dir(tmp_path, "vec",
                             "@parity.scenario\ndef vectorized(xp):\n    return {'f': [1, xp.vectorize(abs)]}\n\n"
                             "@parity.scenario\ndef fine(xp):\n    return {'a': xp.arange(3.0)}\n")
    run("gold", tmp_path / "gold", "--scenarios", scenarios, check=1)
    run("fsproxy", tmp_path / "cand", "--scenarios", scenarios, check=1)
    entry = manifest_entries(tmp_path / "gold")["vec.vectorized"]
    assert entry["status"] == "error"
    assert entry["error"]["type"] == "SerializeError"
    for text in ("outputs['f'][1]", "numpy.vectorize", "parity.reducers.register"):
        assert text in entry["error"]["message"], text
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=1)
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {"vec.vectorized": "error", "vec.fine": "pass"}
    assert failing(report) == {("vec.vectorized", "serialize", "gold"), ("vec.vectorized", "serialize", "candidate")}


def test_list_prints_ids_without_loading_a_backend():
    proc = parity("list", check=0, env={"PARITY_BACKEND": "nosuchmodule"})
    ids = proc.stdout.split()
    assert len(ids) >= 20 and "layouts.orders[order=F]" in ids


def test_lone_surrogates_in_messages_and_keys_are_scenario_errors_not_crashes(tmp_path):
    scenarios = scenario_dir(tmp_path, "surrogates",
                             "@parity.scenario\ndef message(xp):\n    raise RuntimeError('bad \\ud800 text')\n\n"
                             "@parity.scenario\ndef key(xp):\n    return {'k\\udc80': xp.ones(2)}\n")
    run("gold", tmp_path / "x", "--scenarios", scenarios, check=1)
    entries = manifest_entries(tmp_path / "x")
    assert entries["surrogates.message"]["error"]["type"] == "RuntimeError"
    assert entries["surrogates.key"]["error"]["type"] == "SerializeError"
    assert "is not valid UTF-8" in entries["surrogates.key"]["error"]["message"]


def test_the_cudf_pickle_bug_fails_pickle_at_the_attribute_and_passes_fidelity(e2e_gold, tmp_path):
    cand = tmp_path / "lossy"
    run("broken.lossy_pickle", cand, "--scenarios", E2E / "scenarios", check=1)
    _, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    pickle_failures = {(i, p) for i, check, p in failing(report) if check == "pickle"}
    assert ("basic.matrix", "outputs['m']._fsproxy_wrapped") in pickle_failures
    assert ("basic.integers", "outputs[0]._fsproxy_wrapped") in pickle_failures
    # A NumPy subclass is pickled in-band even with protocol 5, which drops a big-endian byte order.
    assert ("basic.big_endian", "outputs['be']") in pickle_failures
    assert {check for _, check, _ in failing(report)} == {"pickle", "error"}  # error: basic.raises
    passed = {(s["id"], c["check"]) for s in report["scenarios"] for c in s["checks"] if c["ok"]}
    assert ("basic.matrix", "fidelity") in passed and ("basic.matrix", "attrs") not in passed


def test_a_required_attribute_lost_on_reload_fails_attrs_at_every_proxied_output(e2e_gold, tmp_path):
    cand = tmp_path / "lost"
    run("broken.lost_attribute", cand, "--scenarios", E2E / "scenarios", check=1)
    proc, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    attrs = {(i, p) for i, check, p in failing(report) if check == "attrs"}
    assert attrs == {("basic.matrix", "outputs['m']"), ("basic.matrix", "outputs['v']"),
                     ("basic.big_endian", "outputs['be']"), ("basic.integers", "outputs[0]")}
    # Besides: basic.raises, and the subclass pickle that drops a big-endian byte order (see the lossy_pickle test).
    others = {f for f in failing(report) if f[1] != "attrs"}
    assert others == {("basic.raises", "error", "gold"), ("basic.raises", "error", "candidate"),
                      ("basic.big_endian", "pickle", "outputs['be']")}
    assert "has no attribute '_fsproxy_wrapped' after the reload" in proc.stderr


def test_compare_policies_from_the_command_line(e2e_gold, tmp_path):
    cand = tmp_path / "broken.flip_order"
    run("broken.flip_order", cand, "--scenarios", E2E / "scenarios", check=1)
    proc = parity("compare", e2e_gold, cand, "--layout-policy", "ignore", "--only", "basic.matrix", check=0)
    assert "1 pass" in proc.stderr
    proc = parity("compare", e2e_gold, cand, "--layout-policy", "loose", check=2)
    assert "--layout-policy" in proc.stderr and "loose" in proc.stderr


def test_a_result_file_changed_after_writing_fails_fidelity(tmp_path):
    for name in ("gold", "cand"):
        run("gold", tmp_path / name, "--scenarios", E2E / "scenarios", "--only", "basic.matrix")
    manifest = json.loads((tmp_path / "cand" / "manifest.json").read_text())
    result = tmp_path / "cand" / manifest["scenarios"][0]["file"]
    data = bytearray(result.read_bytes())
    data[-1] ^= 0x01  # the last byte of the last array's data
    result.write_bytes(bytes(data))
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=1)
    checks = {(c["check"], c["path"]) for c in report["scenarios"][0]["checks"] if not c["ok"]}
    assert ("fidelity", "outputs['v']") in checks, checks
    message = next(c["message"] for c in report["scenarios"][0]["checks"] if c["check"] == "fidelity")
    assert "parity's codec, or the backend's reducer for this type, changed it" in message and str(result) in message


def test_no_pickle_probe_leaves_the_stored_pickles_alone(e2e_gold, tmp_path):
    cand = tmp_path / "lossy"
    run("broken.lossy_pickle", cand, "--scenarios", E2E / "scenarios", check=1)
    proc = parity("compare", e2e_gold, cand, "--json", tmp_path / "r.json", "--no-pickle-probe", check=1)
    report = json.loads((tmp_path / "r.json").read_text())
    assert not [c for s in report["scenarios"] for c in s["checks"] if c["check"] == "pickle"], proc.stderr
    run("gold", tmp_path / "nopickle", "--scenarios", E2E / "scenarios", "--no-pickle-probe", check=1)
    assert not list((tmp_path / "nopickle" / "results").glob("*.pickle"))


def test_a_candidate_output_that_pickle_refuses_fails_pickle_at_its_path(e2e_gold, tmp_path):
    backend = tmp_path / "refuses_pickle.py"
    backend.write_text(
        "import numpy\nimport parity.reducers\n\n"
        "class Handle(numpy.ndarray):\n"
        "    def __reduce__(self):\n"
        "        raise TypeError('a Handle cannot be pickled')\n\n"
        "parity.reducers.register(Handle, lambda h: None, lambda values, state: values.view(Handle))\n"
        "TYPE_MAP = {'numpy.ndarray': 'parity_backend_refuses_pickle.Handle'}\n\n"
        "def materialize(obj):\n"
        "    return {**obj, 'm': obj['m'].view(Handle)} if isinstance(obj, dict) and 'm' in obj else obj\n")
    cand = tmp_path / "cand"
    run(str(backend), cand, "--scenarios", E2E / "scenarios", "--only", "basic.matrix")
    _, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    [failure] = [c for c in report["scenarios"][0]["checks"] if not c["ok"] and c["check"] != "type"]
    assert (failure["check"], failure["path"]) == ("pickle", "outputs['m']")
    assert "a Handle cannot be pickled" in failure["message"]
