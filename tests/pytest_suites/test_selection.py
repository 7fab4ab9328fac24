"""Selection as pytest users expect it: -k keyword expressions, exit 5 for a selection of nothing, compare --only."""
import json
import os
import subprocess
import sys

import pytest

from e2e_test import REPO, compare, manifest_entries, parity, run  # shares the e2e helpers

MODULES = {
    "fft.py": """import parity

@parity.scenario(params={"kind": ["real", "complex"]}, tags=["spectral"])
def transform(xp, kind):
    return {"x": xp.arange(3)}

@parity.scenario
def inverse(xp):
    return {"x": xp.arange(2)}
""",
    "ufuncs.py": """import parity

@parity.scenario(params={"op": ["add", "sub", "mul"]})
def binary(xp, op):
    return {"x": xp.arange(4)}

@parity.scenario(tags=["Reduction"])
def total(xp):
    return {"x": xp.arange(5)}
""",
}
ALL = ["fft.transform[kind=real]", "fft.transform[kind=complex]", "fft.inverse", "ufuncs.binary[op=add]",
       "ufuncs.binary[op=sub]", "ufuncs.binary[op=mul]", "ufuncs.total"]


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    directory = tmp_path_factory.mktemp("selection") / "scenarios"
    directory.mkdir()
    for name, source in MODULES.items():
        (directory / name).write_text(source)
    return directory


def listed(*args, check=0):
    return parity("list", *args, check=check).stdout.split()


@pytest.mark.parametrize("expression, expected", [
    ("fft and not real", ["fft.transform[kind=complex]", "fft.inverse"]),
    ("add or sub", ["ufuncs.binary[op=add]", "ufuncs.binary[op=sub]"]),
    ("not ufuncs", ALL[:3]),
    ("(transform or total) and not complex", ["fft.transform[kind=real]", "ufuncs.total"]),
    ("SPECTRAL", ALL[:2]),  # a tag, matched case-insensitively as pytest matches its keywords
    ("reduction", ["ufuncs.total"]),  # in no id: the tag alone selects it
    ("  ", ALL),  # an empty expression selects everything, as pytest's -k ""
])
def test_list_takes_pytests_keyword_expressions(scenarios, expression, expected):
    assert listed("--scenarios", scenarios, "-k", expression) == expected


def test_run_selects_by_the_same_expression(scenarios, tmp_path):
    run("gold", tmp_path / "gold", "--scenarios", scenarios, "-k", "fft and not real")
    assert list(manifest_entries(tmp_path / "gold")) == ["fft.transform[kind=complex]", "fft.inverse"]


@pytest.fixture(scope="module")
def corpus_listing():
    """`parity list --json` of the bundled corpus, made once for the module: each listing imports every corpus module
    (pandas, SciPy, scikit-learn: about 3 CPU seconds), and the tests only read it."""
    return json.loads(parity("list", "--json", check=0).stdout)


@pytest.mark.parametrize("word", ["linalg", "fft", "matmul"])
def test_a_plain_word_still_selects_every_id_that_contains_it(corpus_listing, word):
    """What -k WORD selected before (the ids containing it) it still selects; what more it selects now, pytest's
    matcher selects too: a scenario whose tag (pytest: mark) contains the word."""
    everything = corpus_listing
    selected = listed("-k", word)
    assert [e["id"] for e in everything if word in e["id"]] == [i for i in selected if word in i]
    tags = {e["id"]: " ".join(e["meta"]["tags"]).lower() for e in everything}
    assert all(word in tags[i] for i in selected if word not in i)


@pytest.mark.parametrize("command", ["list", "run"])
def test_an_expression_that_selects_nothing_exits_5_naming_it(scenarios, tmp_path, command):
    out = tmp_path / "gold"
    extra = ["--backend", "gold", "--out", out] if command == "run" else []
    proc = parity(command, *extra, "--scenarios", scenarios, "-k", "fft and mul", check=5)
    assert f"-k 'fft and mul' selects none of the 7 scenarios in {scenarios}" in proc.stderr, proc.stderr
    assert not out.exists()


def test_only_and_keyword_that_select_nothing_together_exit_5_naming_both(scenarios, tmp_path):
    proc = run("gold", tmp_path / "gold", "--scenarios", scenarios, "--only", "ufuncs.total", "-k", "fft", check=5)
    assert "--only ufuncs.total -k 'fft' selects none" in proc.stderr, proc.stderr


def test_the_old_keyword_typo_exits_5():
    proc = parity("list", "-k", "no-id-has-this", check=5)
    assert "-k 'no-id-has-this' selects none of the" in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", ["list", "run"])
def test_a_directory_without_scenarios_exits_5_naming_it(tmp_path, command):
    wrong = tmp_path / "not_scenarios"
    wrong.mkdir()
    (wrong / "helpers.py").write_text("def helper():\n    return 1\n")  # a module, but no scenario in it
    out = tmp_path / "gold"
    extra = ["--backend", "gold", "--out", out] if command == "run" else []
    proc = parity(command, *extra, "--scenarios", wrong, check=5)
    assert f"no scenario found in {wrong}" in proc.stderr, proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("command", ["list", "run"])
@pytest.mark.parametrize("expression, complaint", [
    ("fft and", "at column 8: expected not OR left parenthesis OR identifier; got end of input"),
    ("fft[kind=real]", "at column 9: expected end of input; got ="),
    ("fft(kind=1)", "Keyword expressions do not support call parameters"),
])
def test_a_malformed_expression_is_a_usage_error_naming_it(scenarios, tmp_path, command, expression, complaint):
    extra = ["--backend", "gold", "--out", tmp_path / "gold"] if command == "run" else []
    proc = parity(command, *extra, "--scenarios", scenarios, "-k", expression, check=2)
    assert f"-k {expression!r}" in proc.stderr and complaint in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", ["list", "run"])
def test_an_unknown_only_id_stays_a_usage_error(scenarios, tmp_path, command):
    extra = ["--backend", "gold", "--out", tmp_path / "gold"] if command == "run" else []
    proc = parity(command, *extra, "--scenarios", scenarios, "--only", "fft.inverse", "--only", "fft.nope", check=2)
    assert "no scenario has the id 'fft.nope'" in proc.stderr, proc.stderr


def test_a_shard_without_scenarios_of_a_selection_is_no_error(scenarios, tmp_path):
    run("gold", tmp_path / "gold", "--scenarios", scenarios, "-k", "total", "--shard", "3/3")
    assert manifest_entries(tmp_path / "gold") == {}


@pytest.fixture(scope="module")
def pair(scenarios, tmp_path_factory):
    """A gold run of everything and a candidate run of the fft scenarios only."""
    tmp = tmp_path_factory.mktemp("pair")
    run("gold", tmp / "gold", "--scenarios", scenarios)
    run("fsproxy", tmp / "fsproxy", "--scenarios", scenarios, "-k", "fft")
    return tmp / "gold", tmp / "fsproxy"


def test_compare_only_an_id_in_neither_run_exits_2_naming_it(pair, tmp_path):
    gold, cand = pair
    proc = parity("compare", gold, cand, "--only", "fft.inverse", "--only", "fft.nope", "--json", tmp_path / "r.json",
                  check=2)
    assert f"no scenario of {gold} and {cand} has the id 'fft.nope' given with --only" in proc.stderr, proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_compare_only_an_id_in_one_run_is_that_scenarios_missing_failure(pair, tmp_path):
    gold, cand = pair
    _, report, _ = compare(gold, cand, tmp_path, "--only", "fft.inverse", "--only", "ufuncs.total", check=1)
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert status == {"fft.inverse": "pass", "ufuncs.total": "fail"}
    assert json.dumps(report).count('"missing"') >= 1


def test_the_ctest_listing_of_a_directory_without_scenarios_exits_5(tmp_path):
    """cmake's parity_add_scenario_tests lists with `python -m parity list`: an empty listing would register no test
    and an empty ctest passes, so the configure step must fail instead."""
    proc = subprocess.run([sys.executable, "-m", "parity", "list", tmp_path], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert proc.returncode == 5 and f"no scenario found in {tmp_path}" in proc.stderr, proc.stderr
