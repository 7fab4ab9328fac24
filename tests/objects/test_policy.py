"""Issue #17 items 4, 7 and 8 end to end: the writeable/scalar/order policies (per scenario, run and backend),
declared differences read at compare time, and the library versions a run records and the reports show."""
import json
import textwrap

from conftest import checks_of, compare, parity, run

SCENARIOS = '''
import numpy as np

import parity


@parity.scenario
def plain(xp):
    return {"a": xp.arange(4.0)}


@parity.scenario(policy={"writeable": "exact"})
def strict_writeable(xp):
    return {"a": xp.arange(4.0)}


@parity.scenario(policy={"scalar": "0d-ok"})
def total(xp):
    return {"s": np.float64(xp.arange(4.0).sum())}


@parity.scenario(policy={"order": "sorted"})
def unique_values(xp):
    return {"u": xp.array([3.0, 1.0, np.nan, 2.0]), "rows": xp.array([[2, 1], [1, 5], [1, 2]]),
            "keys": [3, 1, 2]}
'''

# A candidate that reverses every array and list, makes its arrays read-only and returns NumPy scalars as 0-d arrays
# (SCALE multiplies the values: 1 is faithful up to order, flags and scalar type).
BACKEND = '''
import numpy as np

SCALE = {scale}
{extra}


def _convert(value):
    if isinstance(value, np.ndarray):
        out = (value[::-1] * SCALE).astype(value.dtype)
        out.setflags(write=False)
        return out
    if isinstance(value, np.generic):
        return np.asarray(value * SCALE)
    if isinstance(value, list):
        return [v * SCALE for v in value[::-1]]
    return value


def materialize(outputs):
    return {{key: _convert(value) for key, value in outputs.items()}}
'''


def backend_file(tmp_path, name, scale=1, extra=""):
    path = tmp_path / f"{name}.py"
    path.write_text(BACKEND.format(scale=scale, extra=textwrap.dedent(extra)))
    return path


def scenarios_dir(tmp_path, source=SCENARIOS, name="policies"):
    directory = tmp_path / "scenarios"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.py").write_text(source)
    return directory


def runs(tmp_path, backend, scenarios, gold_out=None):
    """Runs gold (once per tmp_path) and `backend` over `scenarios`; returns (gold dir, candidate dir)."""
    gold = gold_out or tmp_path / "gold"
    if not gold.exists():
        run("gold", gold, "--scenarios", scenarios)
    cand = tmp_path / f"cand-{backend.stem}"
    run(str(backend), cand, "--scenarios", scenarios)
    return gold, cand


def by_id(report):
    return {s["id"]: s for s in report["scenarios"]}


def failed(scenario):
    return {c["check"] for c in scenario["checks"] if not c["ok"]}


# ---------------------------------------------------------------------------------------------------------------
# Item 4: policies


def test_backend_policy_applies_under_run_flags_and_scenario_policy(tmp_path):
    scenarios = scenarios_dir(tmp_path)
    relaxed = backend_file(tmp_path, "relaxed", extra='POLICY = {"writeable": "ignore", "order": "sorted"}')
    gold, cand = runs(tmp_path, relaxed, scenarios)
    assert json.loads((cand / "manifest.json").read_text())["backend"]["policy"] == {
        "writeable": "ignore", "order": "sorted"}
    _, report, _ = compare(gold, cand, tmp_path, check=1)
    s = by_id(report)
    # The backend's POLICY: a read-only, reversed result passes, the writeable check not even counted.
    assert s["policies.plain"]["status"] == "pass", s["policies.plain"]["checks"]
    assert s["policies.plain"]["policy"]["writeable"] == "ignore"
    assert "writeable" not in {c["check"] for c in s["policies.plain"]["checks"]}
    # The scenario's own policy= wins over it.
    assert failed(s["policies.strict_writeable"]) == {"writeable"}
    # An explicit run flag wins over the backend's POLICY, whatever its value.
    _, report, _ = compare(gold, cand, tmp_path, "--writeable-policy", "exact", check=1)
    assert failed(by_id(report)["policies.plain"]) == {"writeable"}
    assert by_id(report)["policies.plain"]["policy"]["writeable"] == "exact"


def test_a_malformed_backend_policy_is_refused_at_run(tmp_path):
    bad = backend_file(tmp_path, "bad", extra='POLICY = {"writeable": "sometimes"}')
    proc = parity("run", "--backend", bad, "--out", tmp_path / "x", "--scenarios", scenarios_dir(tmp_path), check=2)
    assert "POLICY['writeable'] = 'sometimes' is not one of exact, ignore" in proc.stderr


def test_scalar_and_order_policies_pass_a_faithful_candidate_and_fail_a_scaling_one(tmp_path):
    scenarios = scenarios_dir(tmp_path)
    policy = 'POLICY = {"writeable": "ignore"}'
    gold, faithful = runs(tmp_path, backend_file(tmp_path, "faithful", extra=policy), scenarios)
    _, scaling = runs(tmp_path, backend_file(tmp_path, "scaling", scale=2, extra=policy), scenarios)
    _, report, _ = compare(gold, faithful, tmp_path, check=1)
    s = by_id(report)
    assert s["policies.total"]["status"] == "pass", s["policies.total"]["checks"]  # 0-d array for a float64
    assert s["policies.unique_values"]["status"] == "pass", s["policies.unique_values"]["checks"]
    assert s["policies.plain"]["status"] == "fail"  # reversed, and no order policy there
    _, report, _ = compare(gold, scaling, tmp_path, check=1)
    s = by_id(report)
    assert failed(s["policies.total"]) == {"values"}
    values = [c for c in s["policies.unique_values"]["checks"] if not c["ok"]]
    assert {c["path"] for c in values} >= {"outputs['u']", "outputs['rows']", "outputs['keys'][0]"}
    for check in values:
        assert check["check"] == "values"
        assert "compared after sorting (policy order: sorted)" in check["message"]
        assert check["details"]["order"] == "sorted"


def test_without_the_policies_the_same_candidate_fails(tmp_path):
    source = SCENARIOS.replace('policy={"scalar": "0d-ok"}', "").replace('policy={"order": "sorted"}', "")
    scenarios = scenarios_dir(tmp_path, source.replace("@parity.scenario()", "@parity.scenario"))
    gold, cand = runs(tmp_path, backend_file(tmp_path, "plain_backend"), scenarios)
    _, report, _ = compare(gold, cand, tmp_path, check=1)
    s = by_id(report)
    assert "type" in failed(s["policies.total"])
    assert "values" in failed(s["policies.unique_values"])
    # The run flags alone relax them for every scenario.
    _, report, _ = compare(gold, cand, tmp_path, "--scalar-policy", "0d-ok", "--order-policy", "sorted",
                           "--writeable-policy", "ignore", check=1)
    s = by_id(report)
    assert s["policies.total"]["status"] == "pass", s["policies.total"]["checks"]
    assert s["policies.unique_values"]["status"] == "pass", s["policies.unique_values"]["checks"]


# ---------------------------------------------------------------------------------------------------------------
# Item 7: declared differences read at compare time

READ_ONLY = '{"id": "read-only", "check": "writeable", "reason": "results are read-only"}'
REVERSED = '{"id": "reversed", "check": "values", "match": {"path": "outputs[\'a\']"}, "reason": "reversed"}'


def differences_runs(tmp_path):
    scenarios = scenarios_dir(tmp_path, SCENARIOS.split("@parity.scenario(policy={\"scalar\"")[0])
    backend = backend_file(tmp_path, "declaring", extra=f"DIFFERENCES = [{READ_ONLY}]")
    gold, cand = runs(tmp_path, backend, scenarios)
    # The backend changes after its run: the read-only declaration goes, another comes.
    backend.write_text(BACKEND.format(scale=1, extra=f"DIFFERENCES = [{REVERSED}]"))
    return gold, cand, backend


def test_a_trusted_backend_s_current_differences_are_used_and_the_change_is_said(tmp_path):
    gold, cand, backend = differences_runs(tmp_path)
    proc, report, junit = compare(gold, cand, tmp_path, "--trust-backend", backend, check=1)
    assert [d["id"] for d in report["differences"]] == ["reversed"]
    s = by_id(report)
    # The current declaration explains the reversed values (its path needs no glob escaping); the writeable
    # failure the stale one explained is unexplained now.
    explained = {c["check"]: c["details"].get("difference") for c in s["policies.plain"]["checks"] if not c["ok"]}
    assert explained == {"values": "reversed", "writeable": None}
    notice = [n for n in report["notices"] if n["kind"] == "changed-differences"]
    assert len(notice) == 1 and "added reversed; removed read-only" in notice[0]["message"], report["notices"]
    assert "DIFFERENCES changed since its run" in proc.stderr and "added reversed; removed read-only" in proc.stderr
    assert "added reversed; removed read-only" in junit.read_text()


def test_an_untrusted_backend_s_recorded_differences_are_used_as_of_the_run(tmp_path):
    gold, cand, _ = differences_runs(tmp_path)
    proc, report, _ = compare(gold, cand, tmp_path, check=1)
    assert [d["id"] for d in report["differences"]] == ["read-only"]
    explained = {c["check"]: c["details"].get("difference")
                 for c in by_id(report)["policies.plain"]["checks"] if not c["ok"]}
    assert explained == {"values": None, "writeable": "read-only"}
    notice = [n for n in report["notices"] if n["kind"] == "recorded-differences"]
    assert len(notice) == 1 and "as of its run" in notice[0]["message"], report.get("notices")
    assert "as of its run" in proc.stderr
    assert "is not a built-in backend and you have not trusted it" in notice[0]["message"]


def test_a_trusted_backend_that_no_longer_imports_says_why_its_recorded_differences_are_used(tmp_path):
    # Its edited file broke: the notice had said "not built-in, not trusted" of a backend trusted by name, leaving
    # the SyntaxError unsaid while the edit went unused.
    gold, cand, backend = differences_runs(tmp_path)
    backend.write_text(backend.read_text() + "\nDIFFERENCES = [entry for entry in *DIFFERENCES]\n")
    proc, report, _ = compare(gold, cand, tmp_path, "--trust-backend", backend, check=1)
    assert [d["id"] for d in report["differences"]] == ["read-only"]
    notice = [n for n in report["notices"] if n["kind"] == "recorded-differences"]
    assert len(notice) == 1 and "as of its run" in notice[0]["message"], report.get("notices")
    assert "SyntaxError" in notice[0]["message"] and "not trusted" not in notice[0]["message"], notice[0]["message"]


# ---------------------------------------------------------------------------------------------------------------
# Item 8: library versions

LIBRARY_SCENARIOS = '''
import parity


@parity.scenario
def frame_sum(xp):
    import pandas

    return {"s": xp.asarray(pandas.Series([1.0, 2.0]).to_numpy())}
'''

NUMPY_ONLY = '''
import parity


@parity.scenario
def ones(xp):
    return {"v": xp.ones(3)}
'''

NAMING_BACKEND = '''
import sys
import types

# A library of the backend's own, imported by it; LIBRARIES also names one that nothing imports.
sys.modules["parity_fake_lib"] = types.SimpleNamespace(__version__="9.8.7")
LIBRARIES = ["parity_fake_lib", "parity_never_imported"]
'''


def libraries(results):
    return json.loads((results / "manifest.json").read_text())["environment"]["libraries"]


def test_a_run_records_the_versions_of_the_libraries_its_scenarios_imported(tmp_path):
    import pandas

    with_pandas = scenarios_dir(tmp_path / "p", LIBRARY_SCENARIOS, "frames")
    without = scenarios_dir(tmp_path / "n", NUMPY_ONLY, "plain")
    run("gold", tmp_path / "gold", "--scenarios", with_pandas)
    assert libraries(tmp_path / "gold")["pandas"] == pandas.__version__
    run("gold", tmp_path / "numpy-only", "--scenarios", without)
    assert "pandas" not in libraries(tmp_path / "numpy-only")
    backend = tmp_path / "naming.py"
    backend.write_text(NAMING_BACKEND)
    run(str(backend), tmp_path / "cand", "--scenarios", with_pandas)
    recorded = libraries(tmp_path / "cand")
    assert recorded["parity_fake_lib"] == "9.8.7" and "parity_never_imported" not in recorded
    assert json.loads((tmp_path / "cand" / "manifest.json").read_text())["backend"]["libraries"] == [
        "parity_fake_lib", "parity_never_imported"]
    # Every report shows them.
    html = tmp_path / "report.html"
    proc, report, junit = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, "--html", html, check=0)
    assert report["candidate"]["environment"]["libraries"]["pandas"] == pandas.__version__
    assert f"libraries: gold pandas {pandas.__version__}" in proc.stderr
    assert "parity_fake_lib 9.8.7" in proc.stderr
    assert f'name="candidate.library.pandas" value="{pandas.__version__}"' in junit.read_text()
    assert f"pandas {pandas.__version__}" in html.read_text() and "parity_fake_lib 9.8.7" in html.read_text()


def test_a_library_version_python_cannot_encode_is_recorded_replaced(tmp_path):
    # The worker reads {name: version} straight into its reply; a version holding a lone surrogate (not UTF-8) takes
    # the slow way, Python's json with the surrogate replaced, as every version always did.
    backend = tmp_path / "odd.py"
    backend.write_text('import sys, types\nsys.modules["parity_odd_lib"] = types.SimpleNamespace(__version__="1\\udc80")'
                       '\nLIBRARIES = ["parity_odd_lib"]\n')
    run(str(backend), tmp_path / "cand", "--scenarios", scenarios_dir(tmp_path / "n", NUMPY_ONLY, "plain"))
    assert libraries(tmp_path / "cand")["parity_odd_lib"] == "1?"


def test_a_malformed_libraries_list_is_refused_at_run(tmp_path):
    backend = tmp_path / "bad_libraries.py"
    backend.write_text("LIBRARIES = 'pandas'\n")
    proc = parity("run", "--backend", backend, "--out", tmp_path / "x", "--scenarios",
                  scenarios_dir(tmp_path, NUMPY_ONLY, "plain"), check=2)
    assert "LIBRARIES must be a list of module names" in proc.stderr


def test_a_fork_safe_that_is_not_a_bool_is_refused_at_run(tmp_path):
    # FORK_SAFE decides how run starts the workers (README, "Backend API"); a string such as "no" would be true.
    backend = tmp_path / "bad_fork_safe.py"
    backend.write_text("FORK_SAFE = 'no'\n")
    proc = parity("run", "--backend", backend, "--out", tmp_path / "x", "--scenarios",
                  scenarios_dir(tmp_path, NUMPY_ONLY, "plain"), check=2)
    assert f"backend '{backend}': FORK_SAFE must be True or False" in proc.stderr


def test_merged_shards_keep_the_libraries_of_each(tmp_path):
    scenarios = scenarios_dir(tmp_path, LIBRARY_SCENARIOS + NUMPY_ONLY.replace("import parity\n", ""), "mixed")
    shards = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}"
        run("gold", out, "--scenarios", scenarios, "--shard", f"{k}/2")
        shards.append(out)
    parity("merge", *shards, "--out", tmp_path / "merged", check=0)
    import pandas

    assert libraries(tmp_path / "merged")["pandas"] == pandas.__version__
