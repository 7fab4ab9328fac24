"""Issue #17, item 5: reducers a scenario module registers reach compare's probes, from trusted directories only, and a
fidelity failure names the part of the state a reducer's rebuild changed."""
import os
import xml.etree.ElementTree as ET

import pytest
from conftest import backend_path, checks_of, compare, parity, run, run_pair

# A scenario module outside the repository, with classes of its own and the reducers for them. It marks its imports
# so that the tests can tell whether compare imported it.
MODULE = '''
import os

import parity
from parity import reducers

if os.environ.get("PROBE_TEST_MARKER"):
    with open(os.environ["PROBE_TEST_MARKER"], "a") as marker:
        marker.write("imported\\n")


class Box:
    def __init__(self, values, label):
        self.values, self.label = values, label


class Named:
    def __init__(self, values, name):
        self.values, self.name = values, name


reducers.register(Box, lambda b: {"values": b.values, "label": b.label}, lambda s: Box(s["values"], s["label"]))
# Lossy on purpose: the rebuild drops the name, as a DataFrame reducer that forgets the index name would.
reducers.register(Named, lambda n: {"values": n.values, "name": n.name}, lambda s: Named(s["values"], None))


@parity.scenario(rtol=0, atol=0)
def box(xp, rng):
    return {"b": Box(xp.arange(4.0), "metres")}


@parity.scenario(rtol=0, atol=0)
def named(xp, rng):
    return {"t": Named(xp.arange(3), "idx")}
'''


# A module beside it whose outputs need nothing of objs.py: compare has no reason to import it for objs' scenarios.
OTHER = '''
import os

import parity

if os.environ.get("PROBE_TEST_MARKER"):
    with open(os.environ["PROBE_TEST_MARKER"], "a") as marker:
        marker.write("other imported\\n")


@parity.scenario
def plain(xp):
    return {"a": xp.arange(3.0)}
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A scenario directory outside the repo, run under gold, gold again and the doubling candidate."""
    tmp = tmp_path_factory.mktemp("probe")
    scenarios = tmp / "mine"
    scenarios.mkdir()
    (scenarios / "objs.py").write_text(MODULE)
    (scenarios / "other.py").write_text(OTHER)
    for name, backend in (("gold", "gold"), ("gold2", "gold"), ("doubled", backend_path("probe_doubling"))):
        run(backend, tmp / name, "--scenarios", scenarios)
    return tmp, scenarios


def skipped(report):
    return {(s["id"], k["check"], k["side"], k["kind"]): k["reason"] for s in report["scenarios"]
            for k in s.get("skipped_checks", [])}


def test_without_trust_the_probes_are_skipped_with_a_notice_and_the_module_is_never_imported(runs, tmp_path):
    tmp, scenarios = runs
    marker = tmp_path / "marker"
    os.environ["PROBE_TEST_MARKER"] = str(marker)
    try:
        proc, report, junit = compare(tmp / "gold", tmp / "gold2", tmp_path, check=0)
    finally:
        del os.environ["PROBE_TEST_MARKER"]
    assert not marker.exists(), "compare imported a scenario module the results directory names"
    box = checks_of(report, "objs.box")
    assert any(c["check"] == "values" and c["ok"] for c in box), box  # the ordinary checks still ran
    assert not {c["check"] for c in box} & {"fidelity", "pickle"}, box
    reasons = skipped(report)
    assert {(i, check, side) for i, check, side, kind in reasons if kind == "untrusted-scenarios"} == {
        (i, check, side) for i in ("objs.box", "objs.named") for check, side in
        (("fidelity", "gold"), ("fidelity", "candidate"), ("pickle", "candidate"))}, reasons
    assert all(f"--scenarios {scenarios}" in r and "PARITY_TRUST_SCENARIOS" in r for r in reasons.values()), reasons
    notices = [n for n in report["notices"] if n["kind"] == "untrusted-scenarios"]
    assert notices and all("--scenarios" in n["message"] for n in notices), report["notices"]
    assert "notice" in proc.stderr and "--scenarios" in proc.stderr, proc.stderr
    props = [p.get("value") for p in ET.parse(junit).iter("property") if p.get("name") == "notice"]
    assert {n["message"] for n in notices} <= set(props), props
    html = tmp_path / "r.html"
    parity("compare", tmp / "gold", tmp / "gold2", "--html", html, check=0)
    assert 'id="notices"' in html.read_text() and "PARITY_TRUST_SCENARIOS" in html.read_text()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_trusted_scenario_directory_lets_the_probes_run(runs, tmp_path, how):
    tmp, scenarios = runs
    args, env = (["--scenarios", scenarios], {}) if how == "flag" else ([], {"PARITY_TRUST_SCENARIOS": str(scenarios)})
    os.environ.update(env)
    try:
        _, report, _ = compare(tmp / "gold", tmp / "gold2", tmp_path, *args, check=1)  # objs.named's rebuild is lossy
    finally:
        for key in env:
            del os.environ[key]
    assert not skipped(report), skipped(report)
    box = checks_of(report, "objs.box")
    assert {c["check"] for c in box if c["ok"]} >= {"values", "fidelity", "pickle"} and all(c["ok"] for c in box), box
    assert next(s for s in report["scenarios"] if s["id"] == "objs.box")["status"] == "pass"


def test_a_trusted_directory_is_imported_one_needed_module_at_a_time(runs, tmp_path):
    """compare imported the whole trusted directory for any one scenario whose outputs needed a reducer: the bundled
    corpus, 1.5 s of a 2.1 s compare, in each process of `compare --jobs`. Now only the scenario's own module."""
    tmp, scenarios = runs
    marker = tmp_path / "marker"
    os.environ["PROBE_TEST_MARKER"] = str(marker)
    try:
        compare(tmp / "gold", tmp / "gold2", tmp_path, "--scenarios", scenarios, check=1)
    finally:
        del os.environ["PROBE_TEST_MARKER"]
    assert marker.read_text() == "imported\n", marker.read_text()


# A module whose outputs need a reducer a sibling module registers, without importing it: `run` writes them (a fork
# server's workers import every module), so compare must rebuild them too, whatever --jobs.
USER = '''
import fractions

import parity


@parity.scenario
def u(xp):
    return {"f": fractions.Fraction(2, 3), "a": xp.arange(3.0)}
'''
REGISTERS = '''
import fractions

import parity
from parity import reducers

reducers.register(fractions.Fraction, lambda f: {"n": f.numerator, "d": f.denominator},
                  lambda s: fractions.Fraction(s["n"], s["d"]))


@parity.scenario
def r(xp):
    return {"f": fractions.Fraction(1, 3)}
'''


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_reducer_a_sibling_module_registers_rebuilds_its_outputs_at_any_jobs(tmp_path, jobs):
    """ada7561 imported only the scenario's own module: a reducer another module of the trusted directory registers
    was missing, and the scenario failed fidelity (at --jobs 2 even where --jobs 1 passed, by which module came first).
    Now the rest of the directory is imported when the own module's import does not rebuild the outputs."""
    scenarios = tmp_path / "sib"
    scenarios.mkdir()
    (scenarios / "a_user.py").write_text(USER)
    (scenarios / "z_regs.py").write_text(REGISTERS)
    proc, report, _ = run_pair(tmp_path, scenarios, "fsproxy", "--scenarios", scenarios, "--jobs", jobs, compare_check=0)
    assert {s["id"]: s["status"] for s in report["scenarios"]} == {"a_user.u": "pass", "z_regs.r": "pass"}, proc.stdout
    assert {"fidelity", "pickle"} <= {c["check"] for c in checks_of(report, "a_user.u") if c["ok"]}


def test_a_numpy_subclass_of_a_submodule_numpy_imports_late_is_rebuilt(tmp_path):
    """np.char's chararray and np.rec's recarray live in NumPy submodules NumPy imports on first use: a compare whose
    process had not imported them (only numpy_strings' own module, a shard) could not rebuild them."""
    scenarios = tmp_path / "np"
    scenarios.mkdir()
    (scenarios / "subclasses.py").write_text('''
import parity


@parity.scenario
def both(xp):
    return {"c": xp.char.array(["x ", "yy"]), "r": xp.rec.fromarrays([xp.arange(2)], names="a")}
''')
    proc, report, _ = run_pair(tmp_path, scenarios, "gold", "--scenarios", scenarios, compare_check=0)
    assert {c["check"] for c in checks_of(report, "subclasses.both") if c["ok"]} >= {"fidelity", "pickle"}, proc.stdout


def test_a_doubled_reducer_state_fails_values_at_its_part(runs, tmp_path):
    tmp, scenarios = runs
    _, report, _ = compare(tmp / "gold", tmp / "doubled", tmp_path, "--scenarios", scenarios, check=1)
    box = checks_of(report, "objs.box")
    assert {(c["check"], c["path"]) for c in box if not c["ok"]} == {("values", "outputs['b'].values")}, box
    assert {"fidelity", "pickle"} <= {c["check"] for c in box if c["ok"]}, box


def test_a_rebuild_that_drops_a_name_fails_fidelity_at_that_part_saying_both_values(runs, tmp_path):
    tmp, scenarios = runs
    _, report, _ = compare(tmp / "gold", tmp / "gold2", tmp_path, "--scenarios", scenarios, check=1)
    failed = [c for c in checks_of(report, "objs.named") if not c["ok"]]
    # Each side's reload differs at the name alone: not at the object, not as two digests.
    assert [(c["check"], c["path"]) for c in failed] == [("fidelity", "outputs['t'].name")] * 2, failed
    for check in failed:
        assert "written builtins.str 'idx', reloaded builtins.NoneType None" in check["message"], check["message"]
        assert check["details"]["written_value"] == "builtins.str 'idx'"


def test_a_scenario_directory_that_does_not_exist_is_a_usage_error_naming_it(runs, tmp_path):
    # A misspelt --scenarios trusted nothing and compare went on silently (the probes then skipped for want of it).
    tmp, _ = runs
    proc = parity("compare", tmp / "gold", tmp / "doubled", "--scenarios", tmp / "no-such-dir", check=2)
    assert "no-such-dir" in proc.stderr and "does not exist" in proc.stderr
