"""The pickle probe end to end on large outputs (issue #20, target 1): pickles reference the result file's arrays
rather than copy them, lossy candidates are still caught by the same check, and pickles of format 1 still compare."""
import pickle

import numpy
import pytest

from e2e_test import (compare, parity, pickle_regions, read_pickle_region, results_copy, run, scenario_dir,
                      write_pickle_region)
from parity import trust

N = 100_000  # 800 kB per array: past the size from which a pickle references an array
LARGE = f'''
@parity.scenario()
def large(xp, rng):
    return {{"c": xp.arange({N}, dtype="f8"), "be": xp.arange({N}, dtype=">f8"), "small": xp.arange(3)}}
'''


def pickle_checks(report):
    return [c for s in report["scenarios"] for c in s["checks"] if c["check"] == "pickle"]


def sizes(results):
    """(bytes of the codec's, bytes of the pickles'): a run's result files hold both, each pickle from its offset on
    (a run of manifest version 1: in pickle files of their own)."""
    regions = pickle_regions(results)
    files = list((results / "results").iterdir())
    pickled = sum(file.stat().st_size - offset for file, offset in regions)
    return sum(f.stat().st_size for f in files) - pickled, pickled


@pytest.fixture(scope="module")
def large_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("large")
    scenarios = scenario_dir(root, "large", LARGE)
    runs = {}
    for backend in ("gold", "fsproxy", "broken.lossy_pickle"):
        runs[backend] = root / backend
        run(backend, runs[backend], "--scenarios", scenarios, *(["--role", "candidate"] if backend != "gold" else []))
    return runs


@pytest.mark.parametrize("backend", ["gold", "fsproxy"])
def test_a_pickle_of_large_arrays_takes_under_a_tenth_of_the_result(large_runs, backend):
    result, pickled = sizes(large_runs[backend])
    assert [f.name.endswith(".parity") for f in (large_runs[backend] / "results").iterdir()] == [True]  # one file
    assert result >= 2 * N * 8 and pickled <= 0.1 * result, (result, pickled)


def test_large_equal_outputs_pass_the_pickle_check(large_runs, tmp_path):
    _, report, _ = compare(large_runs["gold"], large_runs["fsproxy"], tmp_path, check=0)
    assert [c["ok"] for c in pickle_checks(report)] == [True], report["scenarios"]


def test_a_lossy_pickle_of_large_arrays_is_still_caught_by_the_pickle_check(large_runs, tmp_path):
    _, report, _ = compare(large_runs["gold"], large_runs["broken.lossy_pickle"], tmp_path, check=1)
    failed = {(c["check"], c["path"]) for s in report["scenarios"] for c in s["checks"] if not c["ok"]}
    assert ("pickle", "outputs['c']._fsproxy_wrapped") in failed and ("pickle", "outputs['be']._fsproxy_wrapped") \
        in failed, failed


def as_format_1(results):
    """Rewrites every pickle of `results` as the previous version wrote it: the bare stream, data in band, its MAC, in
    a pickle file of its own (manifest version 1: a run that appends its pickles writes only format 2)."""
    as_manifest_version_1(results)
    for region in pickle_regions(results):
        payload = pickle.dumps({"c": numpy.arange(N, dtype="f8"), "be": numpy.arange(N, dtype=">f8"),
                                "small": numpy.arange(3)}, protocol=5)
        digest = trust.mac(trust.key())
        digest.update(payload)
        write_pickle_region(region, payload + trust.trailer(digest))


def test_pickles_of_the_previous_format_still_compare(large_runs, tmp_path):
    import shutil
    gold, cand = tmp_path / "gold", tmp_path / "cand"
    shutil.copytree(large_runs["gold"], gold)
    shutil.copytree(large_runs["gold"], cand)
    as_format_1(cand)
    assert sizes(cand)[1] > 2 * N * 8  # the data is in the stream
    _, report, _ = compare(gold, cand, tmp_path, check=0)
    assert [c["ok"] for c in pickle_checks(report)] == [True], report["scenarios"]


def test_a_signed_pickle_over_an_altered_result_array_is_never_unpickled(large_runs, tmp_path):
    import shutil
    cand = tmp_path / "cand"
    shutil.copytree(large_runs["gold"], cand)
    result = next((cand / "results").glob("*.parity"))
    data = bytearray(result.read_bytes())
    at = data.find(numpy.arange(N, dtype="f8")[5000:5008].tobytes())  # inside outputs['c']'s data
    assert at > 0
    data[at:at + 8] = numpy.float64(-1.0).tobytes()
    result.write_bytes(bytes(data))
    _, report, _ = compare(large_runs["gold"], cand, tmp_path, check=1)
    skipped = [k for s in report["scenarios"] for k in s.get("skipped_checks", []) if k["check"] == "pickle"]
    assert [(k["side"], k["kind"]) for k in skipped] == [("candidate", "unverified-pickle")], skipped
    assert "outputs['c']" in skipped[0]["reason"] and "not unpickled" in skipped[0]["reason"]
    assert not pickle_checks(report)


# Outputs that unpickle nowhere but in the run: unpickling their pickle raises, so a `pickle` verdict on them says
# whether compare unpickled (old behaviour: both sides raise, and the check is left out) or not.
FRAGILE = '''
from parity import reducers


class Fragile:
    def __init__(self, values):
        self.values = values

    def __reduce__(self):
        return (_unpickled, (self.values,))


def _unpickled(values):
    raise RuntimeError("compare unpickled a Fragile")


reducers.register(Fragile, lambda f: {"values": f.values}, lambda state: Fragile(state["values"]))


@parity.scenario()
def fragile(xp, rng):
    return {"f": Fragile(xp.arange(4.0)), "plain": xp.arange(3)}
'''


@pytest.fixture(scope="module")
def fragile_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("fragile")
    scenarios = scenario_dir(root, "fragile", FRAGILE)
    for name in ("gold", "gold2"):
        run("gold", root / name, "--scenarios", scenarios)
    return root, scenarios


def test_the_same_result_and_pickle_as_gold_pass_without_unpickling(fragile_runs, tmp_path):
    root, scenarios = fragile_runs
    _, report, _ = compare(root / "gold", root / "gold2", tmp_path, "--scenarios", scenarios, check=0)
    assert [c["ok"] for c in pickle_checks(report)] == [True], report["scenarios"]


def test_a_result_that_differs_from_gold_is_unpickled_though_its_pickle_is_the_same(fragile_runs, tmp_path):
    import shutil
    root, scenarios = fragile_runs
    cand = tmp_path / "cand"
    shutil.copytree(root / "gold2", cand)
    result = next((cand / "results").glob("*.parity"))
    data = bytearray(result.read_bytes())
    at = data.find(numpy.arange(3).tobytes())  # outputs['plain']: the pickle still holds the original
    assert at > 0
    data[at:at + 8] = numpy.int64(7).tobytes()
    result.write_bytes(bytes(data))
    _, report, _ = compare(root / "gold", cand, tmp_path, "--scenarios", scenarios, check=1)
    # Both sides unpickled and both raised alike: no verdict, as before; the altered values fail elsewhere.
    assert not pickle_checks(report), report["scenarios"]


def test_pickles_raising_on_both_sides_give_no_verdict_that_could_hide_a_candidate_loss(fragile_runs, tmp_path):
    # Unpickling stops at the first error: with a Fragile beside it, the lossy candidate's loss at outputs['plain']
    # is never looked at, so a pass here would hide it. Its coverage shows that pickle reached no leaf, and its
    # skipped check why.
    root, scenarios = fragile_runs
    cand = tmp_path / "cand"
    run("broken.lossy_pickle", cand, "--scenarios", scenarios, "--role", "candidate")
    _, report, _ = compare(root / "gold", cand, tmp_path, "--scenarios", scenarios)
    assert not pickle_checks(report), report["scenarios"]
    assert "pickle" not in report["scenarios"][0]["coverage"]["checks"], report["scenarios"][0]["coverage"]
    assert_unjudged(report, "raised too")


def assert_unjudged(report, what):
    """The scenario's pickle check is skipped for gold, its reason naming gold's error, and the report's notices say
    so: the check is missing for a reason a reader can see, not silently."""
    [scenario] = report["scenarios"]
    [skipped] = scenario["skipped_checks"]
    assert (skipped["check"], skipped["side"], skipped["kind"]) == ("pickle", "gold", "unjudged-pickle"), skipped
    assert "RuntimeError" in skipped["reason"] and f"which {what}" in skipped["reason"], skipped
    assert [(n["kind"], n["check"], n["scenarios"]) for n in report["notices"]] == [("unjudged-pickle", "pickle", 1)]


def fragile_returning(body: str) -> str:
    """FRAGILE with its scenario's body replaced by `body`, so that only one side's run makes a Fragile."""
    returned = 'return {"f": Fragile(xp.arange(4.0)), "plain": xp.arange(3)}'
    assert returned in FRAGILE, "FRAGILE's scenario changed: the tests below would no longer make one side differ"
    return FRAGILE.replace(returned, body)


def test_a_candidate_that_loses_nothing_passes_without_golds_pickle_unpickled(tmp_path):
    # compare unpickles gold's pickle only when the candidate's verdict needs it (issue #20, target 2): here gold's
    # would raise, and the candidate's round trip loses nothing, so its verdict is a pass. (Before, both were unpickled
    # first, and gold's error left no verdict.) The two sides' outputs differ, which the values check says.
    scenarios = scenario_dir(tmp_path, "fragile", "import numpy\n" + fragile_returning(
        'plain = xp.arange(3)\n'
        '    return {"f": Fragile(xp.arange(4.0)) if type(plain) is numpy.ndarray else plain}'))
    run("gold", tmp_path / "gold", "--scenarios", scenarios)
    run("fsproxy", tmp_path / "cand", "--scenarios", scenarios, "--role", "candidate")
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, "--scenarios", scenarios, check=1)
    [scenario] = report["scenarios"]
    assert [c["ok"] for c in pickle_checks(report)] == [True], scenario
    assert not scenario.get("skipped_checks"), scenario


def test_a_lossy_candidate_gets_no_verdict_where_golds_pickle_raises(tmp_path):
    # The other side of unpickling gold's pickle only when needed: a candidate that loses something needs gold's
    # losses to excuse any, and gold's pickle raises here, so what NumPy's pickle keeps is unknown: no verdict (no
    # pass, no failure), as when both were unpickled first, and a skipped check that says why. Only gold's run makes
    # a Fragile (the variable below).
    scenarios = scenario_dir(tmp_path, "fragile", "import os\n" + fragile_returning(
        'fragile = os.environ.get("PARITY_TEST_FRAGILE") == "1"\n'
        '    return {"f": Fragile(xp.arange(4.0)) if fragile else xp.arange(4.0), "plain": xp.arange(3)}'))
    parity("run", "--backend", "gold", "--out", tmp_path / "gold", "-q", "--scenarios", scenarios,
           env={"PARITY_TEST_FRAGILE": "1"}, check=0)
    run("broken.lossy_pickle", tmp_path / "cand", "--scenarios", scenarios, "--role", "candidate")
    _, report, _ = compare(tmp_path / "gold", tmp_path / "cand", tmp_path, "--scenarios", scenarios, check=1)
    [scenario] = report["scenarios"]
    assert not pickle_checks(report), scenario
    assert "pickle" not in scenario["coverage"]["checks"], scenario["coverage"]
    assert_unjudged(report, "loses something")


def test_the_same_tampered_pickle_on_both_sides_is_refused_not_unpickled(fragile_runs, tmp_path):
    import shutil
    root, scenarios = fragile_runs
    sides = {name: tmp_path / name for name in ("gold", "gold2")}
    for name, side in sides.items():
        shutil.copytree(root / name, side)
        [region] = pickle_regions(side)
        data = bytearray(read_pickle_region(region))
        data[40] ^= 1
        write_pickle_region(region, bytes(data))
    assert read_pickle_region(pickle_regions(sides["gold"])[0]) == read_pickle_region(pickle_regions(sides["gold2"])[0])
    _, report, _ = compare(sides["gold"], sides["gold2"], tmp_path, "--scenarios", scenarios, check=0)
    skipped = [k for s in report["scenarios"] for k in s.get("skipped_checks", []) if k["check"] == "pickle"]
    assert sorted((k["side"], k["kind"]) for k in skipped) == [("candidate", "unverified-pickle"),
                                                               ("gold", "unverified-pickle")], skipped
    assert all("does not verify" in k["reason"] for k in skipped), skipped
    assert not pickle_checks(report)


def as_manifest_version_1(results):
    """Rewrites a run as parity wrote it before manifest version 2: each pickle in a file of its own (pickle_file)."""
    import json
    manifest = results / "manifest.json"
    doc = json.loads(manifest.read_text())
    doc["version"] = 1
    for s in doc["scenarios"]:
        if "pickle_offset" not in s:
            continue
        data = (results / s["file"]).read_bytes()
        (results / s["file"]).write_bytes(data[:s["pickle_offset"]])
        s["pickle_file"] = s["file"] + ".pickle"
        (results / s["pickle_file"]).write_bytes(data[s.pop("pickle_offset"):])
    manifest.write_text(json.dumps(doc))


def test_runs_of_manifest_version_1_still_compare_their_pickles(large_runs, tmp_path):
    import shutil
    gold, cand = tmp_path / "gold", tmp_path / "cand"
    shutil.copytree(large_runs["gold"], gold)
    shutil.copytree(large_runs["broken.lossy_pickle"], cand)
    as_manifest_version_1(cand)
    assert list((cand / "results").glob("*.pickle"))
    _, report, _ = compare(gold, cand, tmp_path, check=1)
    failed = {(c["check"], c["path"]) for s in report["scenarios"] for c in s["checks"] if not c["ok"]}
    assert ("pickle", "outputs['c']._fsproxy_wrapped") in failed, failed
    as_manifest_version_1(gold)
    _, report, _ = compare(gold, results_copy(gold), tmp_path, check=0)
    assert [c["ok"] for c in pickle_checks(report)] == [True], report["scenarios"]
