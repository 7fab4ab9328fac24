"""End-to-end tests of the parity binary: run -> compare -> JSON/JUnit, on the corpus and on broken backends."""
import json
import os
import pty
import re
import select
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy
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


def compare(gold, cand, tmp, *extra, check=None):
    json_file, junit_file = tmp / f"{cand.name}.json", tmp / f"{cand.name}.xml"
    proc = parity("compare", gold, cand, "--json", json_file, "--junit", junit_file, *extra, check=check)
    return proc, json.loads(json_file.read_text()), junit_file


def parity_on_terminal(*args):
    """Runs the binary with stdout and stderr on a pseudo-terminal (TERM=xterm); returns (exit code, output).
    The terminal's own \\r\\n line ends are turned back into \\n, so any \\r left is one parity wrote."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([BIN, *map(str, args)], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal,
                            env={**os.environ, "TERM": "xterm"})
    os.close(terminal)
    chunks = []
    while select.select([controller], [], [], 600)[0]:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return proc.wait(timeout=60), b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


# At a line's start, or (on a terminal) just after the erased live line.
SCENARIO_LINE = re.compile(r"(?:^|\x1b\[K)\[\s*(\d+)/(\d+)\] (\S+)\s+(\S+) \(\d+ ms\)", re.M)


def scenario_lines(output):
    """{id: status} of the per-scenario lines; asserts that no scenario has two."""
    found = [(m[4], m[3]) for m in SCENARIO_LINE.finditer(output)]
    assert len(found) == len(dict(found)), output
    return dict(found)


def table_row(output, name, count):
    """Whether the summary has the row `name count`."""
    return re.search(rf"^  {re.escape(name)}\s+{count}$", output, re.M) is not None


def scenario_dir(tmp_path, module, source):
    """A directory holding one scenario module `module`.py with `source`."""
    directory = tmp_path / "scenarios"
    directory.mkdir()
    (directory / f"{module}.py").write_text("import parity\n\n" + source)
    return directory


def not_fork_safe_backend(directory) -> Path:
    """A backend module in `directory` that declares its workers may not be forks of one process, as the CUDA
    backends do (fixtures/cupy.py): each worker then starts and imports on its own, and a crashed one is replaced by
    a new process importing again."""
    path = Path(directory) / "not_fork_safe.py"
    path.write_text("import numpy\n\n__version__ = numpy.__version__\nFORK_SAFE = False\n")
    return path


def shm_leftovers(before=(), makers=None):
    """joblib's memmapping folders and loky's semaphores in /dev/shm, not in `before`, whose maker (the pid in the
    name) is gone: nothing will remove them. With `makers`, only those of these pids: a test running beside others
    (ctest -j) sees their pools' entries too, which their resource trackers may not have removed yet."""
    found = set()
    for name in set(os.listdir("/dev/shm")) - set(before):
        for prefix, end in (("joblib_memmapping_folder_", "_"), ("sem.loky-", "-")):
            pid = name[len(prefix):].partition(end)[0] if name.startswith(prefix) else ""
            if pid.isdigit() and not Path(f"/proc/{pid}").exists() and (makers is None or int(pid) in makers):
                found.add(name)
    return found


def results_copy(results, fresh=False) -> Path:
    """A copy of the results directory `results` beside it (made once, or again if `fresh`), for a compare that checks
    one run reads back whole: compare refuses one directory given twice."""
    copy = Path(results).with_name(Path(results).name + "-copy")
    if fresh:
        shutil.rmtree(copy, ignore_errors=True)
    if not copy.exists():
        shutil.copytree(results, copy, symlinks=True)
    return copy


def manifest_entries(results):
    """The manifest's scenario entries by id."""
    return {s["id"]: s for s in json.loads((results / "manifest.json").read_text())["scenarios"]}


def pickle_regions(results):
    """[(file, offset)] of every pickle a run stored: the pickle probe's payload from `offset` to the end of the result
    `file` (manifest version 2, pickle_offset), or a whole file of its own (version 1, pickle_file; offset 0)."""
    regions = []
    for s in manifest_entries(results).values():
        if "pickle_offset" in s:
            regions.append((results / s["file"], s["pickle_offset"]))
        elif "pickle_file" in s:
            regions.append((results / s["pickle_file"], 0))
    return regions


def read_pickle_region(region):
    file, offset = region
    return file.read_bytes()[offset:]


def write_pickle_region(region, payload: bytes):
    """Replaces a stored pickle's payload (what a tamperer can do), the result file before it kept."""
    file, offset = region
    file.write_bytes(file.read_bytes()[:offset] + payload)


def failing(report):
    """{(id, check, path)} of every failed check."""
    return {(s["id"], c["check"], c["path"]) for s in report["scenarios"] for c in s["checks"] if not c["ok"]}


# The expected failures of the bundled corpus, all in its example pytest suite (scenarios/pytest_style): NumPy refuses
# one call in every pass, and fsproxy's arrays fail one exact-type check in its candidate pass.
CORPUS_XFAILS = {"gold": {"pytest_style/test_numpy.py::test_percentile_above_100"},
                 "fsproxy": {"pytest_style/test_numpy.py::test_percentile_above_100",
                             "pytest_style/test_numpy.py::test_concatenate_is_exact_ndarray"}}


def registry_xfails(candidate, ids):
    """The generated scenarios (scenarios/ops.py) whose operation registry entry declares a difference for
    `candidate` (its expected differences as data)."""
    from parity.ops import REGISTRY

    names = {op.scenario_name for op in REGISTRY.values() if candidate in op.differences}
    return {i for i in ids if i.startswith("ops.") and i[len("ops."):].split("[")[0] in names}


def passes_but_corpus_xfails(report, candidate):
    """Whether every scenario of a compare of the bundled corpus passed, but those CORPUS_XFAILS and the operation
    registry expect to fail."""
    found = {s["id"]: s["status"] for s in report["scenarios"]}
    expected = CORPUS_XFAILS[candidate] | registry_xfails(candidate, found)
    return found == {i: "xfail" if i in expected else "pass" for i in found}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, corpus_gold):
    """The bundled corpus run twice under gold (the first the session's, tests/conftest.py) and once under fsproxy:
    {name: results directory}."""
    tmp = tmp_path_factory.mktemp("corpus")
    for name, backend in (("gold2", "gold"), ("fsproxy", "fsproxy")):
        run(backend, tmp / name)
    return {"gold": corpus_gold, "gold2": tmp / "gold2", "fsproxy": tmp / "fsproxy"}


@pytest.fixture(scope="module")
def e2e_gold(tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e") / "gold"
    run("gold", out, "--scenarios", E2E / "scenarios", check=1)  # basic.raises is an error
    return out


@pytest.fixture(scope="module")
def e2e_candidate(tmp_path_factory):
    """The results of a candidate backend over the e2e scenarios, run once for the module whichever tests read them
    (each run a process that starts the interpreter and NumPy): `e2e_candidate(backend)` gives its directory."""
    runs = {}

    def results(backend):
        if backend not in runs:
            out = tmp_path_factory.mktemp("e2e") / backend
            run(backend, out, "--scenarios", E2E / "scenarios", check=1)  # basic.raises is an error
            runs[backend] = out
        return runs[backend]
    return results


@pytest.fixture(scope="module")
def e2e_perturbed(e2e_candidate):
    return e2e_candidate("broken.perturb")


def test_two_gold_runs_write_bitwise_identical_result_files(corpus):
    first = sorted((corpus["gold"] / "results").iterdir())
    second = sorted((corpus["gold2"] / "results").iterdir())
    assert [f.name for f in first] == [f.name for f in second] and len(first) >= 20
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_gold_vs_gold_passes_everything(corpus, tmp_path):
    _, report, _ = compare(corpus["gold"], corpus["gold2"], tmp_path, check=0)
    assert passes_but_corpus_xfails(report, "gold") and report["summary"]["total"] >= 20


def test_gold_vs_fsproxy_passes_every_check(corpus, tmp_path):
    _, report, _ = compare(corpus["gold"], corpus["fsproxy"], tmp_path, check=0)
    assert passes_but_corpus_xfails(report, "fsproxy") and report["summary"]["total"] >= 20
    checked = {c["check"] for s in report["scenarios"] for c in s["checks"]}
    assert {"structure", "shape", "dtype", "layout", "writeable", "type", "values", "attrs"} <= checked
    types = {c["details"].get("candidate") for s in report["scenarios"] for c in s["checks"]
             if c["check"] == "type" and c["ok"]}  # (a registry xfail's failed type check names the types)
    assert types == {None}, "passing type checks carry only leaf counts"


def test_manifest_records_what_the_issue_promises(corpus):
    manifest = json.loads((corpus["fsproxy"] / "manifest.json").read_text())
    assert manifest["backend"]["name"] == "fsproxy" and manifest["backend"]["version"]
    assert manifest["environment"]["python"] and manifest["environment"]["numpy"].startswith("2.")
    assert manifest["environment"]["platform"] and manifest["complete"] is True
    for s in manifest["scenarios"]:
        if s["id"] in CORPUS_XFAILS["fsproxy"]:
            assert s["status"] == "xfail", s
            continue
        assert s["status"] == "ok" and s["seconds"] >= 0 and (corpus["fsproxy"] / s["file"]).is_file()
    assert not list(corpus["fsproxy"].rglob("*.tmp-*")), "temp files left behind"


SCHEMA = REPO / "tests" / "schemas" / "junit.xsd"

# A candidate broken twice over, so that one scenario fails several checks: one value moved (`values`) and the
# array handed back F-ordered (`layout`).
LAYOUT_AND_VALUES_BACKEND = """\
from parity_fixtures.broken import flip_order, perturb

__version__ = "0.1.0"


def materialize(obj):
    return flip_order.materialize(perturb.materialize(obj))
"""

# Raises on both sides with characters XML 1.0 cannot carry, and markup, in its message and traceback.
HOSTILE_SCENARIO = ("@parity.scenario\ndef control_characters(xp):\n"
                    "    raise RuntimeError('bell \\x07 esc \\x1b[31m ]]> <&> \\x01 end')\n")

XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@pytest.fixture(scope="module")
def junit_run(tmp_path_factory):
    """(JSON report, JUnit file) of one compare with every status: pass, fail (of several checks), error, xfail,
    xpass and skip, and an error message full of control characters."""
    tmp = tmp_path_factory.mktemp("junit")
    backend = tmp / "layout_and_values.py"
    backend.write_text(LAYOUT_AND_VALUES_BACKEND)
    sources = (E2E / "scenarios", E2E / "xfail", scenario_dir(tmp, "hostile", HOSTILE_SCENARIO))
    scenarios = [arg for path in sources for arg in ("--scenarios", path)]
    run("gold", tmp / "gold", *scenarios, check=1)
    run(str(backend), tmp / "cand", *scenarios, check=1)
    _, report, junit_file = compare(tmp / "gold", tmp / "cand", tmp, check=1)
    assert {s["status"] for s in report["scenarios"]} == {"pass", "fail", "error", "xfail", "xpass", "skip"}
    return report, junit_file


def junit_suite(junit_file):
    """The one testsuite of the file, as junitparser (a consumer independent of parity's writer) reads it."""
    import junitparser

    [suite] = list(junitparser.JUnitXml.fromfile(str(junit_file)))
    return suite


def junit_cases(junit_file):
    """{scenario id: junitparser TestCase}."""
    return {f"{case.classname}.{case.name}": case for case in junit_suite(junit_file)}


def params_suffix(params):
    """How a scenario id spells its params (the JSON holds them already formatted): "[n=1]", or "" for none."""
    return "[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]" if params else ""


def failed_checks(scenario):
    return [c for c in scenario["checks"] if not c["ok"]]


def test_junit_is_valid_against_the_junit_schema_kept_in_the_repo(junit_run):
    from lxml import etree

    _, junit_file = junit_run
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    doc = etree.parse(str(junit_file))
    assert schema.validate(doc), schema.error_log
    # The schema does refuse: a testcase with a second outcome is not what CI servers read.
    etree.SubElement(doc.find(".//testcase/failure/.."), "error")
    assert not schema.validate(doc)


def test_junit_counts_read_by_junitparser_match_the_json_summary(junit_run):
    import junitparser

    report, junit_file = junit_run
    suite, summary = junit_suite(junit_file), report["summary"]
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (
        summary["total"], summary["fail"] + summary["xpass"], summary["error"], summary["skip"] + summary["xfail"])
    # Counted again from the testcases junitparser parsed, not from the suite's own attributes.
    kinds = Counter(type(case.result[0]) if case.result else None for case in suite)
    assert +kinds == +Counter({None: summary["pass"], junitparser.Failure: summary["fail"] + summary["xpass"],
                               junitparser.Error: summary["error"],
                               junitparser.Skipped: summary["skip"] + summary["xfail"]})


def test_junit_testcases_are_the_module_and_the_function_with_params(junit_run):
    report, junit_file = junit_run
    cases = [(case.classname, case.name) for case in junit_suite(junit_file)]
    assert cases == [(s["module"], s["function"] + params_suffix(s["params"])) for s in report["scenarios"]]
    assert [f"{module}.{name}" for module, name in cases] == [s["id"] for s in report["scenarios"]]
    assert ("expectations", "plain[n=2]") in cases


def test_junit_properties_name_the_backends_versions_and_policies(junit_run):
    report, junit_file = junit_run
    properties = {p.name: p.value for p in junit_suite(junit_file).properties()}
    for side in ("gold", "candidate"):
        assert properties[f"{side}.backend"] == report[side]["backend"]["name"]
        assert properties[f"{side}.version"] == report[side]["backend"]["version"]
        for key in ("python", "numpy", "platform"):
            assert properties[f"{side}.{key}"] == report[side]["environment"][key]
    assert properties["parity"] == report["parity"]
    assert {k: v for k, v in properties.items() if k.startswith("policy.")} == {
        f"policy.{k}": v for k, v in report["policy"].items()}


def test_junit_failures_name_the_failing_checks_and_hold_their_messages_and_the_repro(junit_run):
    import junitparser

    report, junit_file = junit_run
    cases = junit_cases(junit_file)
    failed = [s for s in report["scenarios"] if s["status"] == "fail"]
    assert max(len({c["check"] for c in failed_checks(s)}) for s in failed) >= 2, "no scenario failed several checks"
    for s in failed:
        [result] = cases[s["id"]].result
        assert isinstance(result, junitparser.Failure), s["id"]
        assert result.message == s["message"]
        assert all(c["check"] in result.message for c in failed_checks(s)), result.message
        for check in failed_checks(s):
            assert check["message"] in result.text and "Repro" not in check["message"], check["message"]
        assert result.text.count(s["repro"]) == 1 and result.text.endswith(f"Repro: {s['repro']}\n"), result.text


def test_junit_errors_carry_the_tracebacks(junit_run):
    import junitparser

    report, junit_file = junit_run
    cases = junit_cases(junit_file)
    errors = [s for s in report["scenarios"] if s["status"] == "error"]
    assert len(errors) >= 3  # basic.raises, expectations.candidate_error_not_hidden, hostile.control_characters
    for s in errors:
        [result] = cases[s["id"]].result
        assert isinstance(result, junitparser.Error), s["id"]
        tracebacks = [c["details"]["traceback"] for c in failed_checks(s) if "traceback" in c["details"]]
        assert tracebacks, s["id"]
        for traceback in tracebacks:
            assert "Traceback (most recent call last)" in traceback
            assert XML_FORBIDDEN.sub("\ufffd", traceback) in result.text


def test_junit_control_characters_become_replacement_characters(junit_run):
    report, junit_file = junit_run
    [hostile] = [s for s in report["scenarios"] if s["id"] == "hostile.control_characters"]
    assert "\x07" in hostile["message"] and "\x1b" in hostile["message"]  # the JSON keeps them
    raw = junit_file.read_bytes()
    assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]", raw), "control characters in the XML"
    [result] = junit_cases(junit_file)["hostile.control_characters"].result
    assert result.message == "the gold run raised RuntimeError: bell \ufffd esc \ufffd[31m ]]> <&> \ufffd end"
    assert "]]> <&>" in result.text


@pytest.mark.parametrize("backend, check, paths", [
    ("broken.flip_order", "layout", {"basic.matrix": "outputs['m']", "basic.big_endian": "outputs['be']"}),
    ("broken.native_byteorder", "dtype", {"basic.big_endian": "outputs['be']"}),
    ("broken.perturb", "values", {"basic.matrix": "outputs['m']", "basic.big_endian": "outputs['be']"}),
])
def test_broken_backend_fails_exactly_the_expected_check(e2e_gold, e2e_candidate, tmp_path, backend, check, paths):
    cand = e2e_candidate(backend)
    proc, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    raised = {("basic.raises", "error", "gold"), ("basic.raises", "error", "candidate")}
    assert failing(report) == {(i, check, p) for i, p in paths.items()} | raised
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {**{i: "pass" for i in status}, **{i: "fail" for i in paths}, "basic.raises": "error"}
    assert f"[{check}]" in proc.stderr


def test_values_failure_reads_like_numpy_testing_and_its_repro_reproduces(e2e_gold, e2e_perturbed, tmp_path):
    cand = e2e_perturbed
    _, report, _ = compare(e2e_gold, cand, tmp_path, check=1)
    scenario = next(s for s in report["scenarios"] if s["id"] == "basic.matrix")
    check = next(c for c in scenario["checks"] if not c["ok"])
    for text in ("rtol=1e-07, atol=0", "Mismatched elements: 1 / 20 (5%)", "[0, 1]:", "gold | broken.perturb",
                 "Max absolute difference among violations", "Max relative difference among violations"):
        assert text in check["message"], text
    assert "Repro" not in check["message"] and "--only basic.matrix" in scenario["repro"], check["message"]
    details = check["details"]
    assert details["mismatched"] == 1 and details["total"] == 20 and details["first"][0]["index"] == [0, 1]
    assert details["max_rel_diff"] > 1e-3
    assert details["map"] == {"shape": [4, 5], "grid": [4, 5], "counts": [0, 1] + [0] * 18, "sizes": [1] * 20}
    assert "counts" not in check["message"]
    shutil.rmtree("/tmp/parity-repro", ignore_errors=True)
    try:  # the repro command writes where a user's would, a fixed path: not left behind
        repro = subprocess.run(scenario["repro"], shell=True, capture_output=True, text=True, timeout=300)
    finally:
        shutil.rmtree("/tmp/parity-repro", ignore_errors=True)
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
    ({"timeout": 0}, "timeout must be a finite positive number of seconds, got 0"),
    ({"timeout": "60"}, "timeout must be a finite positive number of seconds, got '60'"),
    ({"xfail": [{"gold": "x"}]}, "a list given as xfail must hold parity.xfail_on(..., when=...) entries"),
])
def test_the_decorator_rejects_bad_options_naming_them(kwargs, message):
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


def test_an_xfail_for_some_params_applies_to_those_alone_and_only_under_its_backend(tmp_path):
    scenarios = scenario_dir(tmp_path, "some_params", """
@parity.scenario(params={"n": [1, 2, 3]}, xfail=[
    parity.xfail_on({"gold": {"gold": "n=2 raises under gold"}}, when={"n": [2]}),
    parity.xfail_on({"fsproxy": {"candidate": "n=3 raises under fsproxy"}}, when={"n": [3]})])
def f(xp, n):
    if n == 2 and type(xp.zeros(1)) is xp.ndarray:
        raise ValueError("gold fails n=2")
    return xp.zeros(n)
""")
    run("gold", tmp_path / "gold", "--scenarios", scenarios, check=0)
    gold = {i: s["status"] for i, s in manifest_entries(tmp_path / "gold").items()}
    assert gold == {"some_params.f[n=1]": "ok", "some_params.f[n=2]": "xfail", "some_params.f[n=3]": "ok"}
    # Under fsproxy the gold entry is not its own, and n=3 does not raise: a strict xfail that passes is an xpass.
    run("fsproxy", tmp_path / "cand", "--scenarios", scenarios, check=1)
    cand = {i: s["status"] for i, s in manifest_entries(tmp_path / "cand").items()}
    assert cand == {"some_params.f[n=1]": "ok", "some_params.f[n=2]": "ok", "some_params.f[n=3]": "xpass"}


def test_a_malformed_when_is_refused_whichever_backend_runs():
    import parity as api

    with pytest.raises(ValueError, match="must map parameter names to lists of values"):
        api.xfail_on({"some-other-backend": {"gold": "x"}}, when=["n"])


def test_an_xfail_for_a_param_the_scenario_lacks_is_a_module_error_naming_it(tmp_path):
    scenarios = scenario_dir(tmp_path, "bad_when", """
@parity.scenario(params={"n": [1]}, xfail=parity.xfail_on({"gold": {"gold": "x"}}, when={"m": [1]}))
def f(xp, n):
    return xp.zeros(n)
""")
    listing = run("gold", tmp_path / "gold", "--scenarios", scenarios, check=1)
    assert "names parameters the scenario does not have: ['m']" in listing.stderr


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


def test_a_lone_surrogate_in_an_output_value_is_shown_escaped_and_compares(tmp_path):
    # The worker reads flat {str: str} dicts (the fidelity digests and texts) straight into the manifest: an odd
    # string value is shown as its repr, as before.
    scenarios = scenario_dir(tmp_path, "surrogates", "@parity.scenario\ndef value(xp):\n"
                                                     "    return {'s': 'a\\ud800b', 'x': xp.arange(3)}\n")
    for side in ("gold", "cand"):
        run("gold", tmp_path / side, "--scenarios", scenarios)
    entry = manifest_entries(tmp_path / "gold")["surrogates.value"]
    assert entry["status"] == "ok"
    assert entry["fidelity_values"]["outputs['s']"] == "builtins.str 'a\\ud800b'"
    assert set(entry["fidelity"]) == {"outputs", "outputs['s']", "outputs['x']"}
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=0)
    assert [s["status"] for s in report["scenarios"]] == ["pass"]


def test_the_cudf_pickle_bug_fails_pickle_at_the_attribute_and_passes_fidelity(e2e_gold, e2e_candidate, tmp_path):
    cand = e2e_candidate("broken.lossy_pickle")
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


def test_compare_policies_from_the_command_line(e2e_gold, e2e_candidate):
    cand = e2e_candidate("broken.flip_order")
    proc = parity("compare", e2e_gold, cand, "--layout-policy", "ignore", "--only", "basic.matrix", check=0)
    assert table_row(proc.stderr, "pass", 1), proc.stderr
    proc = parity("compare", e2e_gold, cand, "--layout-policy", "loose", check=2)
    assert "--layout-policy" in proc.stderr and "loose" in proc.stderr


def test_a_result_file_changed_after_writing_fails_fidelity(tmp_path):
    for name in ("gold", "cand"):
        run("gold", tmp_path / name, "--scenarios", E2E / "scenarios", "--only", "basic.matrix")
    manifest = json.loads((tmp_path / "cand" / "manifest.json").read_text())
    result = tmp_path / "cand" / manifest["scenarios"][0]["file"]
    data = bytearray(result.read_bytes())
    data[manifest["scenarios"][0]["pickle_offset"] - 1] ^= 0x01  # the last byte of the last array's data
    result.write_bytes(bytes(data))
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=1)
    checks = {(c["check"], c["path"]) for c in report["scenarios"][0]["checks"] if not c["ok"]}
    assert ("fidelity", "outputs['v']") in checks, checks
    message = next(c["message"] for c in report["scenarios"][0]["checks"] if c["check"] == "fidelity")
    assert "parity's codec, or the backend's reducer for this type, changed it" in message and str(result) in message


@pytest.mark.parametrize("leaf, dtype", [("v", "<f8"), ("be", ">f8")])
def test_a_large_array_changed_after_writing_fails_fidelity_though_its_values_pass(leaf, dtype, tmp_path):
    # 2 MB arrays, which compare hashes in its values kernel's pass (values.h, DigestTaps): one float64's lowest bit,
    # far inside the tolerance of `values`, is still caught by `fidelity`.
    scenarios = scenario_dir(tmp_path, "large", "@parity.scenario()\ndef arrays(xp, rng):\n    n = 1 << 18\n"
                             "    return {'v': xp.arange(1, n + 1, dtype='<f8'), 'be': xp.arange(1, n + 1, dtype='>f8')}\n")
    for name in ("gold", "cand"):
        run("gold", tmp_path / name, "--scenarios", scenarios)
    manifest = json.loads((tmp_path / "cand" / "manifest.json").read_text())
    result = tmp_path / "cand" / manifest["scenarios"][0]["file"]
    data = bytearray(result.read_bytes())
    pattern = numpy.arange(1001, 1005, dtype=dtype).tobytes()
    at = data.find(pattern)
    assert at > 0 and data.find(pattern, at + 1) < 0
    data[at + (0 if dtype == "<f8" else 7)] ^= 0x01  # the lowest bit of element 1000's significand
    result.write_bytes(bytes(data))
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, check=1)
    failed = {(c["check"], c["path"]) for c in report["scenarios"][0]["checks"] if not c["ok"]}
    assert failed == {("fidelity", f"outputs['{leaf}']")}, report["scenarios"][0]["checks"]


def test_no_pickle_probe_leaves_the_stored_pickles_alone(e2e_gold, e2e_candidate, tmp_path):
    cand = e2e_candidate("broken.lossy_pickle")
    proc = parity("compare", e2e_gold, cand, "--json", tmp_path / "r.json", "--no-pickle-probe", check=1)
    report = json.loads((tmp_path / "r.json").read_text())
    assert not [c for s in report["scenarios"] for c in s["checks"] if c["check"] == "pickle"], proc.stderr
    run("gold", tmp_path / "nopickle", "--scenarios", E2E / "scenarios", "--no-pickle-probe", check=1)
    assert not pickle_regions(tmp_path / "nopickle") and pickle_regions(e2e_gold)
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
    # Trusted (the backend is this test's own) or not: the run recorded the refusal, so no reducer is needed.
    for trust in (["--trust-backend", backend], []):
        _, report, _ = compare(e2e_gold, cand, tmp_path, *trust, check=1)
        [failure] = [c for c in report["scenarios"][0]["checks"] if not c["ok"] and c["check"] != "type"]
        assert (failure["check"], failure["path"]) == ("pickle", "outputs['m']")
        assert "a Handle cannot be pickled" in failure["message"]


E2E_RUN = {"basic.matrix": "ok", "basic.big_endian": "ok", "basic.integers": "ok", "basic.raises": "error"}
E2E_PERTURBED = {"basic.matrix": "fail", "basic.big_endian": "fail", "basic.integers": "pass", "basic.raises": "error"}


def test_on_a_terminal_run_draws_a_live_line_then_the_summary(tmp_path):
    code, out = parity_on_terminal("run", "--backend", "gold", "--out", tmp_path / "gold", "--scenarios", E2E / "scenarios")
    assert code == 1, out
    live = re.findall(r"\r\x1b\[K(\[\d/4\] \d failed, \d error \| [^\r\n]*elapsed, ETA [^\r\n]*)", out)
    assert live and "| basic.matrix |" in live[0] and "| basic.raises |" in live[-1], out
    assert scenario_lines(out) == {"basic.raises": "error"}, "on a live display only failures get a line"
    summary = out.rsplit("\x1b[K", 1)[1]  # the live line is erased before the summary
    assert summary.startswith("parity run: 4 scenarios in "), out
    assert table_row(summary, "ok", 3) and table_row(summary, "error", 1), summary
    assert f"  results  {tmp_path / 'gold'}" in summary


def test_on_a_terminal_compare_draws_a_live_line_prints_failures_and_the_reports_written(e2e_gold, e2e_perturbed,
                                                                                       tmp_path):
    code, out = parity_on_terminal("compare", e2e_gold, e2e_perturbed, "--json", tmp_path / "r.json", "--junit",
                                   tmp_path / "r.xml")
    assert code == 1, out
    assert re.search(r"\r\x1b\[K\[\d/4\] \d failed, \d error \| basic\.\w+ \| \d:\d\d elapsed, ETA ", out), out
    assert re.search(r"\r\x1b\[K\[4/4\] 2 failed, 1 error \| basic.raises \|", out), out
    assert scenario_lines(out) == {i: s for i, s in E2E_PERTURBED.items() if s != "pass"}
    assert "Mismatched elements: 1 / 20" in out, "a failure shows what differs"
    summary = out.rsplit("\x1b[K", 1)[1]
    assert summary.startswith("parity compare: 4 scenarios in "), out
    for name, count in (("pass", 1), ("fail", 2), ("error", 1), ("values", 2)):
        assert table_row(summary, name, count), (name, summary)
    assert f"  JSON report   {tmp_path / 'r.json'}" in summary and f"  JUnit report  {tmp_path / 'r.xml'}" in summary


def test_without_a_terminal_every_scenario_gets_one_line_and_no_escape_codes(e2e_gold, e2e_perturbed, tmp_path):
    proc = parity("run", "--backend", "gold", "--out", tmp_path / "gold", "--scenarios", E2E / "scenarios", check=1)
    assert scenario_lines(proc.stderr) == E2E_RUN
    proc_compare = parity("compare", e2e_gold, e2e_perturbed, "--json", tmp_path / "r.json", check=1)
    assert scenario_lines(proc_compare.stderr) == E2E_PERTURBED
    assert "[1/4] fail   basic.matrix (" in proc_compare.stderr and ") values\n" in proc_compare.stderr
    for stderr in (proc.stderr, proc_compare.stderr):
        assert "\x1b" not in stderr and "\r" not in stderr, stderr
    assert f"  JSON report  {tmp_path / 'r.json'}" in proc_compare.stderr


def test_quiet_prints_only_failures_one_line_each_and_a_one_line_summary(e2e_gold, e2e_perturbed, tmp_path):
    proc = parity("compare", e2e_gold, e2e_perturbed, "--quiet", check=1)
    assert scenario_lines(proc.stderr) == {i: s for i, s in E2E_PERTURBED.items() if s != "pass"}
    assert "Mismatched elements" not in proc.stderr and "Traceback" not in proc.stderr
    assert re.search(r"^parity compare: 4 scenarios in [\d.]+ s: 1 pass, 2 fail, 1 error$", proc.stderr, re.M)
    proc = parity("run", "--backend", "gold", "--out", tmp_path / "gold", "--scenarios", E2E / "scenarios", "-q", check=1)
    assert scenario_lines(proc.stderr) == {"basic.raises": "error"}
    assert re.search(r"basic.raises \(\d+ ms\) RuntimeError: this scenario fails on purpose$", proc.stderr, re.M)
    code, out = parity_on_terminal("compare", e2e_gold, e2e_perturbed, "-q")
    assert code == 1 and "\x1b" not in out and "\r" not in out, out


def test_verbose_shows_every_scenario_the_checks_that_passed_and_tracebacks(e2e_gold, e2e_perturbed, tmp_path):
    proc = parity("compare", e2e_gold, e2e_perturbed, "--verbose", check=1)
    assert scenario_lines(proc.stderr) == E2E_PERTURBED
    assert re.search(r"basic.integers \(\d+ ms\)\n  passed: .*values \(\d+ lea(?:f|ves)\)", proc.stderr), proc.stderr
    assert "Mismatched elements: 1 / 20" in proc.stderr
    code, out = parity_on_terminal("compare", e2e_gold, e2e_perturbed, "-v")
    assert code == 1 and scenario_lines(out) == E2E_PERTURBED, "verbose gives passes a line on a terminal too"
    args = ("run", "--backend", "gold", "--scenarios", E2E / "scenarios", "--only", "basic.raises", "--out")
    verbose = parity(*args, tmp_path / "verbose", "-v", check=1)
    normal = parity(*args, tmp_path / "normal", check=1)
    assert 'raise RuntimeError("this scenario fails on purpose")' in verbose.stderr
    assert "Traceback" in verbose.stderr and "Traceback" not in normal.stderr, normal.stderr


@pytest.mark.parametrize("command", ["run", "compare"])
def test_quiet_and_verbose_together_are_a_usage_error(command, tmp_path):
    args = ("run", "--backend", "gold", "--out", tmp_path / "x") if command == "run" else ("compare", "a", "b")
    proc = parity(*args, "-q", "-v", check=2)
    assert "excludes" in proc.stderr and not (tmp_path / "x").exists()


# Written against plain NumPy, as a user's existing code is: no `xp`, numpy imported by name.
PLAIN_NUMPY_SCENARIO = """\
import numpy as np
import numpy.linalg as la
from numpy.linalg import solve


@parity.scenario
def solved(rng):
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    return {"x": solve(a, np.ones(4)), "inv": la.inv(a), "grid": np.arange(6.0).reshape(2, 3)}
"""


def test_fsproxy_proxies_a_module_written_against_plain_numpy_and_gold_leaves_it_alone(tmp_path):
    scenarios = scenario_dir(tmp_path, "plain", PLAIN_NUMPY_SCENARIO)
    run("gold", tmp_path / "gold", "--scenarios", scenarios)
    run("fsproxy", tmp_path / "fs", "--scenarios", scenarios)
    _, report, _ = compare(tmp_path / "gold", tmp_path / "fs", tmp_path, check=0)
    assert report["summary"]["pass"] == report["summary"]["total"] == 1
    # The type check demands TYPE_MAP's ProxyNDArray exactly, but passing checks do not name types; read
    # the recorded types back by taking an fsproxy run as gold (compare refuses a plainly swapped pair): with no
    # TYPE_MAP on the gold side, every array output's type differs, and the details name what each run recorded.
    run("fsproxy", tmp_path / "fs_as_gold", "--scenarios", scenarios, "--role", "gold")
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    _, report, _ = compare(tmp_path / "fs_as_gold", tmp_path / "gold", swapped, check=1)
    outputs = {"outputs['x']", "outputs['inv']", "outputs['grid']"}
    assert failing(report) == {("plain.solved", "type", path) for path in outputs}
    recorded = {(c["details"]["gold"], c["details"]["candidate"])
                for s in report["scenarios"] for c in s["checks"] if not c["ok"]}
    assert recorded == {("parity_fixtures.fsproxy.ProxyNDArray", "numpy.ndarray")}
