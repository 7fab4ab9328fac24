"""End-to-end sharding and merging with the built binary.

The bundled corpus (scenarios/, about 290 scenarios; a run takes seconds) is split into 3 shards, run under gold and
fsproxy per shard and compared per shard; merging the shard JSONs, or the shard results directories and comparing
them, must give what the unsharded compare gives. A small scenario set written here (five integer scenarios, one float
scenario, one module that fails to import) runs against broken.perturb, which fails exactly the float scenario: the
shard holding it fails, and so does the merge.
"""
import json
import shutil
from pathlib import Path

import pytest

# The e2e helpers (tests/conftest.py), shared rather than copied.
from e2e_test import REPO, parity, passes_but_corpus_xfails, run

N = 3
CORPUS = REPO / "scenarios"
# What differs between a sharded and an unsharded pipeline by nature: timings, directories, provenance.
VOLATILE = {"seconds", "started", "dir", "dirs", "merged", "shard"}

MIXED = {
    "ints.py": """import parity

@parity.scenario(params={"n": [1, 2, 3, 4, 5]})
def counts(xp, n):
    return {"c": xp.arange(n)}

@parity.scenario()
def floats(xp):
    return {"f": xp.linspace(0.0, 1.0, 5)}
""",
    "broken_import.py": "raise ImportError('deliberately broken')\n",
}
FLOATS = "ints.floats"


def normalized(doc):
    """`doc` without the fields that VOLATILE names, at any depth."""
    if isinstance(doc, dict):
        return {k: normalized(v) for k, v in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [normalized(v) for v in doc]
    return doc


def manifest(results):
    return json.loads((Path(results) / "manifest.json").read_text())


def ids(results):
    return [s["id"] for s in manifest(results)["scenarios"]]


def compare_json(gold, cand, out, *extra, check=0):
    proc = parity("compare", gold, cand, "-q", "--json", out, *extra, check=check)
    return proc, json.loads(Path(out).read_text())


def merge(*args, check=None):
    return parity("merge", *args, check=check)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The corpus unsharded (gold, fsproxy, their compare) and in 3 shards (runs and per-shard compares)."""
    tmp = tmp_path_factory.mktemp("sharded-corpus")
    run("gold", tmp / "gold", "-j", 2)
    run("fsproxy", tmp / "fsproxy", "-j", 2)
    compare_json(tmp / "gold", tmp / "fsproxy", tmp / "full.json")
    for i in range(1, N + 1):
        run("gold", tmp / f"gold-{i}", "--shard", f"{i}/{N}")
        run("fsproxy", tmp / f"fsproxy-{i}", "--shard", f"{i}/{N}")
        compare_json(tmp / f"gold-{i}", tmp / f"fsproxy-{i}", tmp / f"shard-{i}.json")
    return tmp


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """The mixed set unsharded and in 3 shards, gold against broken.perturb."""
    tmp = tmp_path_factory.mktemp("sharded-mixed")
    scenarios = tmp / "scenarios"
    scenarios.mkdir()
    for name, source in MIXED.items():
        (scenarios / name).write_text(source)
    run("gold", tmp / "gold", "--scenarios", scenarios, check=1)  # the module error
    run("broken.perturb", tmp / "perturb", "--scenarios", scenarios, check=1)
    compare_json(tmp / "gold", tmp / "perturb", tmp / "full.json", check=1)
    for i in range(1, N + 1):
        for backend, name in (("gold", "gold"), ("broken.perturb", "perturb")):
            parity("run", "--backend", backend, "--out", tmp / f"{name}-{i}", "-q", "--scenarios", scenarios,
                   "--shard", f"{i}/{N}")
        compare_json(tmp / f"gold-{i}", tmp / f"perturb-{i}", tmp / f"shard-{i}.json", check=None)
    return tmp


def test_every_scenario_runs_in_exactly_one_shard_and_the_manifest_records_the_partition(corpus):
    everything = ids(corpus / "gold")
    sharded = [ids(corpus / f"gold-{i}") for i in range(1, N + 1)]
    assert sorted(sum(sharded, [])) == sorted(everything)
    assert all(abs(len(s) - len(everything) / N) <= 1 for s in sharded), "balanced by count without times"
    for i in range(1, N + 1):
        shard = manifest(corpus / f"gold-{i}")["run"]["shard"]
        assert (shard["index"], shard["total"], shard["scenarios"]) == (i, N, everything)
        assert ids(corpus / f"fsproxy-{i}") == ids(corpus / f"gold-{i}"), "gold and candidate shards line up"


def test_merged_shard_reports_equal_the_unsharded_compare(corpus, tmp_path):
    shards = [corpus / f"shard-{i}.json" for i in (3, 1, 2)]  # any order
    merge("--json", tmp_path / "m.json", "--junit", tmp_path / "m.xml", "--html", tmp_path / "m.html", *shards,
          check=0)
    merged, full = json.loads((tmp_path / "m.json").read_text()), json.loads((corpus / "full.json").read_text())
    assert normalized(merged) == normalized(full)
    assert merged["summary"]["total"] == len(ids(corpus / "gold")) and merged["merged"]["missing"] == []
    shard_seconds = sum(json.loads(s.read_text())["seconds"] for s in shards)
    assert merged["seconds"] == pytest.approx(shard_seconds), "seconds are summed"
    assert merged["gold"]["run"]["seconds"] == pytest.approx(
        sum(manifest(corpus / f"gold-{i}")["run"]["seconds"] for i in range(1, N + 1)))
    assert f'tests="{merged["summary"]["total"]}"' in (tmp_path / "m.xml").read_text()
    assert "<html" in (tmp_path / "m.html").read_text()


def test_merged_results_directories_compare_as_the_unsharded_runs(corpus, tmp_path):
    for side in ("gold", "fsproxy"):
        merge("--out", tmp_path / side, *[corpus / f"{side}-{i}" for i in range(1, N + 1)], check=0)
        assert ids(tmp_path / side) == ids(corpus / side), "the unsharded run's order"
        assert manifest(tmp_path / side)["complete"] and "shard" not in manifest(tmp_path / side)["run"]
    _, report = compare_json(tmp_path / "gold", tmp_path / "fsproxy", tmp_path / "m.json")
    assert normalized(report) == normalized(json.loads((corpus / "full.json").read_text()))
    linked = next((tmp_path / "gold" / "results").iterdir())
    assert linked.stat().st_nlink == 2, "result files are hard links to the shards' files"


def test_compare_shards_of_full_runs_and_merge_them(corpus, tmp_path):
    reports = []
    for i in range(1, N + 1):
        _, report = compare_json(corpus / "gold", corpus / "fsproxy", tmp_path / f"s{i}.json", "--shard", f"{i}/{N}")
        assert [s["id"] for s in report["scenarios"]] == ids(corpus / f"gold-{i}"), "the runs' partition"
        assert report["shard"]["index"] == i
        reports.append(tmp_path / f"s{i}.json")
    merge("--json", tmp_path / "m.json", *reports, check=0)
    merged = json.loads((tmp_path / "m.json").read_text())
    assert normalized(merged) == normalized(json.loads((corpus / "full.json").read_text()))
    assert merged["gold"]["run"]["seconds"] == manifest(corpus / "gold")["run"]["seconds"], "one run, counted once"


def test_a_full_gold_run_compares_against_one_candidate_shard(corpus, tmp_path):
    _, report = compare_json(corpus / "gold", corpus / "fsproxy-2", tmp_path / "r.json")
    assert [s["id"] for s in report["scenarios"]] == ids(corpus / "fsproxy-2")
    assert passes_but_corpus_xfails(report, "fsproxy")


def test_googletest_variables_choose_the_shard(corpus, tmp_path):
    status = tmp_path / "status"
    env = {"GTEST_TOTAL_SHARDS": str(N), "GTEST_SHARD_INDEX": "1", "GTEST_SHARD_STATUS_FILE": str(status)}
    parity("run", "--backend", "gold", "--out", tmp_path / "g", "-q", env=env, check=0)
    assert ids(tmp_path / "g") == ids(corpus / "gold-2"), "GTEST_SHARD_INDEX counts from 0"
    assert manifest(tmp_path / "g")["run"]["shard"]["index"] == 2
    assert status.exists(), "a sharding program touches GTEST_SHARD_STATUS_FILE"
    proc = parity("compare", corpus / "gold", corpus / "fsproxy", "-q", "--json", tmp_path / "r.json", env=env,
                  check=0)
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["id"] for s in report["scenarios"]] == ids(corpus / "gold-2"), proc.stderr
    # --shard wins over the variables.
    parity("run", "--backend", "gold", "--out", tmp_path / "g3", "-q", "--shard", "3/3", env=env, check=0)
    assert ids(tmp_path / "g3") == ids(corpus / "gold-3")


@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize("flag, env, named", [
    (["--shard", "4/3"], {}, "--shard '4/3'"),
    (["--shard", "0/3"], {}, "--shard '0/3'"),
    (["--shard", "two"], {}, "--shard 'two'"),
    (["--shard", "1/0"], {}, "--shard '1/0'"),
    ([], {"GTEST_SHARD_INDEX": "1"}, "GTEST_SHARD_INDEX is set but GTEST_TOTAL_SHARDS is not"),
    ([], {"GTEST_TOTAL_SHARDS": "3"}, "GTEST_TOTAL_SHARDS is set but GTEST_SHARD_INDEX is not"),
    ([], {"GTEST_TOTAL_SHARDS": "0", "GTEST_SHARD_INDEX": "0"}, "GTEST_TOTAL_SHARDS='0'"),
    ([], {"GTEST_TOTAL_SHARDS": "3", "GTEST_SHARD_INDEX": "3"}, "GTEST_SHARD_INDEX='3'"),
    ([], {"GTEST_TOTAL_SHARDS": "x", "GTEST_SHARD_INDEX": "0"}, "GTEST_TOTAL_SHARDS='x'"),
    (["--shard-times", "nowhere.json"], {}, "--shard-times needs a shard"),
    (["--shard", "1/3", "--shard-times", "nowhere.json"], {}, "--shard-times nowhere.json"),
])
def test_bad_shard_values_exit_2_naming_the_flag_or_variable(corpus, tmp_path, command, flag, env, named):
    args = (["run", "--backend", "gold", "--out", tmp_path / "out"] if command == "run"
            else ["compare", corpus / "gold", corpus / "fsproxy"])
    proc = parity(*args, *flag, env=env, check=2)
    assert named in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists(), "nothing is run"


def test_shard_times_balance_the_shards_and_both_sides_line_up(corpus, tmp_path):
    times = corpus / "full.json"
    for side, backend in (("gold", "gold"), ("fsproxy", "fsproxy")):
        for i in (1, 2):
            run(backend, tmp_path / f"{side}-{i}", "--shard", f"{i}/2", "--shard-times", times)
    shard = manifest(tmp_path / "gold-1")["run"]["shard"]
    assert shard["times_from"] == str(times) and len(shard["times"]) == len(shard["scenarios"])
    assert ids(tmp_path / "fsproxy-1") == ids(tmp_path / "gold-1")
    assert sorted(ids(tmp_path / "gold-1") + ids(tmp_path / "gold-2")) == sorted(ids(corpus / "gold"))
    # Balanced by the recorded times: the shards' loads differ by at most the longest scenario.
    loads = [sum(shard["times"][s] for s in ids(tmp_path / f"gold-{i}")) for i in (1, 2)]
    assert abs(loads[0] - loads[1]) <= max(shard["times"].values())
    # A shard of runs split by other times does not line up with them.
    proc = parity("compare", tmp_path / "gold-1", corpus / "fsproxy-1", check=2)
    assert "do not line up" in proc.stderr, proc.stderr


def test_one_failing_shard_fails_the_merge(mixed, tmp_path):
    full = json.loads((mixed / "full.json").read_text())
    assert {s["id"] for s in full["scenarios"] if s["status"] == "fail"} == {FLOATS}
    holder = next(i for i in range(1, N + 1) if FLOATS in ids(mixed / f"gold-{i}"))
    for i in range(1, N + 1):  # only the shard that holds the float scenario has a failure
        report = json.loads((mixed / f"shard-{i}.json").read_text())
        assert (report["summary"]["fail"] == 1) == (i == holder)
    module_error = [i for i in range(1, N + 1) if "broken_import" in ids(mixed / f"gold-{i}")]
    assert len(module_error) == 1, "a module's import error lands in exactly one shard"
    proc = merge("--json", tmp_path / "m.json", *[mixed / f"shard-{i}.json" for i in range(1, N + 1)], check=1)
    merged = json.loads((tmp_path / "m.json").read_text())
    assert normalized(merged) == normalized(full), proc.stderr
    # The same from the merged results directories, as `run` would exit.
    merge("--out", tmp_path / "g", *[mixed / f"gold-{i}" for i in range(1, N + 1)], check=1)  # the module error


def test_a_missing_shard_is_reported_missing_and_fails(corpus, tmp_path):
    proc = merge("--json", tmp_path / "m.json", "--junit", tmp_path / "m.xml", corpus / "shard-1.json",
                 corpus / "shard-3.json", check=1)
    merged = json.loads((tmp_path / "m.json").read_text())
    lost = ids(corpus / "gold-2")
    assert [g["scenarios"] for g in merged["merged"]["missing"]] == [lost]
    assert [s["id"] for s in merged["scenarios"]] == ids(corpus / "gold"), "missing ones at their places"
    by_id = {s["id"]: s for s in merged["scenarios"]}
    for scenario_id in lost:
        scenario = by_id[scenario_id]
        assert scenario["status"] == "fail" and [c["check"] for c in scenario["checks"]] == ["missing"]
        message = scenario["checks"][0]["message"]
        assert "(shard 2/3 should have it): no report of shard 2/3 was given" in message, message
        assert "--shard 2/3" in scenario["repro"] and " run --backend gold " in scenario["repro"]
    assert merged["summary"]["fail"] == len(lost)
    assert f'failures="{len(lost)}"' in (tmp_path / "m.xml").read_text()
    assert f"missing: {len(lost)} scenarios of shard 2/3" in proc.stderr
    # Results directories: the merged manifest is incomplete and names them; compare then fails them on one side.
    proc = merge("--out", tmp_path / "g", corpus / "gold-1", corpus / "gold-3", check=1)
    assert f"missing: {len(lost)} scenarios of shard 2/3" in proc.stderr and "--shard 2/3" in proc.stderr
    merged_manifest = manifest(tmp_path / "g")
    assert not merged_manifest["complete"] and merged_manifest["run"]["merged"]["missing"][0]["scenarios"] == lost


def test_merge_refuses_shards_of_different_backends_naming_both_files(corpus, tmp_path):
    perturbed = tmp_path / "perturbed-1"
    run("broken.perturb", perturbed, "--shard", f"1/{N}", check=None)
    compare_json(corpus / "gold-1", perturbed, tmp_path / "p1.json", check=None)
    a, b = corpus / "shard-2.json", tmp_path / "p1.json"
    proc = merge("--json", tmp_path / "m.json", a, b, check=2)
    assert f"{a} and {b} disagree on the candidate backend (" in proc.stderr, proc.stderr
    proc = merge("--out", tmp_path / "dirs", corpus / "fsproxy-2", perturbed, check=2)
    assert "disagree on the backend (\"fsproxy\" vs " in proc.stderr, proc.stderr
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "dirs" / "manifest.json").exists()


def test_merge_refuses_shards_of_different_scenario_sets(corpus, mixed, tmp_path):
    proc = merge("--out", tmp_path / "dirs", corpus / "gold-1", mixed / "gold-2", check=2)
    assert f"{corpus / 'gold-1' / 'manifest.json'} and {mixed / 'gold-2' / 'manifest.json'} disagree on the " \
           "scenario set" in proc.stderr, proc.stderr
    # The same backends over another selection of the corpus.
    for backend in ("gold", "fsproxy"):
        run(backend, tmp_path / backend, "-k", "linalg", "--shard", f"1/{N}")
    compare_json(tmp_path / "gold", tmp_path / "fsproxy", tmp_path / "linalg-1.json")
    a, b = corpus / "shard-2.json", tmp_path / "linalg-1.json"
    proc = merge("--json", tmp_path / "m.json", a, b, check=2)
    assert f"{a} and {b} disagree on the scenario set (" in proc.stderr, proc.stderr


def test_merge_refuses_a_shard_given_twice(corpus, tmp_path):
    copy = tmp_path / "again.json"
    shutil.copy(corpus / "shard-2.json", copy)
    proc = merge("--json", tmp_path / "m.json", corpus / "shard-2.json", copy, check=2)
    assert f"{corpus / 'shard-2.json'} and {copy} are both shard 2/3" in proc.stderr, proc.stderr
    proc = merge("--out", tmp_path / "dirs", corpus / "gold-2", corpus / "gold-2", check=2)
    assert "are both shard 2/3" in proc.stderr


def test_merge_names_a_damaged_shard_report(corpus, tmp_path):
    damaged = tmp_path / "damaged.json"
    report = json.loads((corpus / "shard-2.json").read_text())
    del report["scenarios"][0]["id"]
    damaged.write_text(json.dumps(report))
    proc = merge("--json", tmp_path / "m.json", corpus / "shard-1.json", damaged, check=2)
    assert f'{damaged}: scenarios[0] has no string "id"' in proc.stderr, proc.stderr


def test_merge_refuses_an_unsharded_input_and_a_mix_of_modes(corpus, tmp_path):
    proc = merge("--json", tmp_path / "m.json", corpus / "full.json", check=2)
    assert "not the report of one shard" in proc.stderr
    proc = merge("--out", tmp_path / "d", corpus / "gold", check=2)
    assert "is not a sharded run" in proc.stderr
    proc = merge("--out", tmp_path / "d", "--json", tmp_path / "m.json", corpus / "gold-1", check=2)
    assert "give either --out DIR" in proc.stderr


def test_compare_refuses_shards_that_do_not_line_up(corpus):
    proc = parity("compare", corpus / "gold-1", corpus / "fsproxy-2", check=2)
    assert "is shard 1/3 and" in proc.stderr and "shard 2/3" in proc.stderr
    proc = parity("compare", corpus / "gold-1", corpus / "fsproxy-1", "--shard", "2/3", check=2)
    assert "shard 2/3 was asked for, but" in proc.stderr


def shard_copies(mixed, tmp_path):
    """The mixed set's gold shards copied, to be edited: their directories and manifests."""
    dirs = [tmp_path / f"gold-{i}" for i in range(1, N + 1)]
    for i, d in enumerate(dirs, 1):
        shutil.copytree(mixed / f"gold-{i}", d)
    return dirs, [manifest(d) for d in dirs]


def with_files(doc):
    return [s for s in doc["scenarios"] if s["file"]]


def test_merge_refuses_two_records_naming_one_file_and_never_writes_into_a_shard(mixed, tmp_path):
    """A shard's record renamed to another shard's file name: the link into OUT went over the first, writing the second
    shard's file through the hard link to the first's (an input changed, one file for two ids, exit 0)."""
    dirs, docs = shard_copies(mixed, tmp_path)
    first, second = with_files(docs[0])[0], with_files(docs[1])[0]
    (dirs[1] / second["file"]).rename(dirs[1] / first["file"])
    second["file"] = first["file"]
    (dirs[1] / "manifest.json").write_text(json.dumps(docs[1]))
    before = [(d / first["file"]).read_bytes() for d in dirs[:2]]
    proc = merge("--out", tmp_path / "out", *dirs, check=2)
    assert f"both name the result file {first['file']}" in proc.stderr, proc.stderr
    assert [(d / first["file"]).read_bytes() for d in dirs[:2]] == before


def test_merge_never_writes_through_what_is_already_in_its_out(mixed, tmp_path):
    dirs, docs = shard_copies(mixed, tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("SECRET")
    planted = tmp_path / "out" / with_files(docs[0])[0]["file"]
    planted.parent.mkdir(parents=True)
    planted.symlink_to(victim)
    proc = merge("--out", tmp_path / "out", *dirs, check=2)
    assert f"{planted} already exists: merge into a new directory" in proc.stderr, proc.stderr
    assert victim.read_text() == "SECRET"


def test_merge_keeps_a_record_its_plan_does_not_list(mixed, tmp_path):
    """A crash recorded outside run.shard.scenarios had been dropped: 'N scenarios, 0 missing', complete."""
    dirs, docs = shard_copies(mixed, tmp_path)
    extra = dict(with_files(docs[0])[0], id="evil.crashed", status="crash", file="",
                 error={"type": "Crash", "message": "its worker died", "traceback": ""})
    extra.pop("pickle_offset", None)
    docs[0]["scenarios"].append(extra)
    (dirs[0] / "manifest.json").write_text(json.dumps(docs[0]))
    merge("--out", tmp_path / "out", *dirs, check=1)
    merged = {s["id"]: s["status"] for s in manifest(tmp_path / "out")["scenarios"]}
    assert merged["evil.crashed"] == "crash"
