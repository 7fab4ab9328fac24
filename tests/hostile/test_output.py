"""What parity writes from hostile ids, roles and names (issue #16 D9, D11, D12): file names it derives from any id
stay in results/, Repro lines run nothing a results directory chose, and nothing printed can drive a terminal."""
import json
import re
import shlex
import shutil
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import SCENARIOS, parity, read_json, statuses

# Parameter values that once made parity refuse its own result file names ("1..2" held ".."), beside others that
# spell paths, and pairs that a filesystem-safe spelling alone would merge ("1..2" and "1.,2").
# "x.tmp-1" first: a resume had removed its result, as it removes a killed writer's "<file>.tmp-<pid>".
AWKWARD_PARAMS = ["x.tmp-1", "1..2", "1.,2", "..", "../x", "/etc/passwd", ".hidden", "a/b", "1.2", "1_2", "x" * 300]
AWKWARD = f'''"""Scenarios whose ids hold dots, slashes and long parameter values."""
import parity


@parity.scenario(params={{"r": {AWKWARD_PARAMS!r}}})
def ranges(xp, r):
    return {{"n": xp.arange(3), "r": r}}
'''

ESC = "\x1b"
# Terminal controls in ids and messages: erase the screen, forge a pass line over the real one, set the title,
# reverse the text that follows, ring the bell, and C1 CSI.
TERMINAL_ATTACK = f"{ESC}[2J\r{ESC}[1A[1/1] pass   forged{ESC}]0;owned\x07\u202eliaf\u009b2J"
CONTROL = f'''"""Scenarios whose ids, errors and output hold terminal control sequences."""
import sys

import parity

ATTACK = {TERMINAL_ATTACK!r}


@parity.scenario(params={{"t": [ATTACK]}})
def loud(xp, t):
    print(ATTACK)
    print(ATTACK, file=sys.stderr)
    raise ValueError(ATTACK + "\\nsecond line " + ATTACK)


@parity.scenario(params={{"t": [ATTACK + "</script><script>alert(1)</script><!--"]}})
def quiet(xp, t):
    return {{"a": xp.arange(2)}}
'''


def acts_on_terminal(text):
    """The characters of `text` a terminal would act on or hide: controls (but newline), DEL, C1, bidi, zero-width."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
            or 0x200b <= ord(c) <= 0x200f or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]


def assert_inert(proc):
    for name in ("stdout", "stderr"):
        bad = acts_on_terminal(getattr(proc, name))
        assert not bad, f"{name} holds raw control characters {sorted(set(bad))!r}:\n{getattr(proc, name)}"


def write_module(directory, name, text):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)
    return directory


@pytest.fixture(scope="module")
def awkward(tmp_path_factory):
    """A gold and an fsproxy run of scenarios with awkward ids."""
    tmp = tmp_path_factory.mktemp("awkward")
    scenarios = write_module(tmp / "scenarios", "awkward.py", AWKWARD)
    for backend, out in (("gold", "gold"), ("fsproxy", "cand")):
        parity("run", "--backend", backend, "--scenarios", scenarios, "--out", tmp / out, "-q", check=0)
    return scenarios, tmp / "gold", tmp / "cand"


# D12: file names are derived safely from any id.

def test_awkward_ids_run_into_safe_distinct_result_files(awkward):
    _, gold, _ = awkward
    manifest = read_json(gold / "manifest.json")
    records = manifest["scenarios"]
    assert manifest["complete"] and len(records) == len(AWKWARD_PARAMS)
    assert {r["status"] for r in records} == {"ok"}
    files = [r["file"] for r in records]
    assert len(set(files)) == len(files), "two ids share a result file"
    assert all(r["pickle_offset"] > 0 and "pickle_file" not in r for r in records), records  # in the result files
    for file in files:
        name = file.removeprefix("results/")
        assert file.startswith("results/") and "/" not in name and ".." not in name and not name.startswith(".")
        assert len(name) < 200 and (gold / file).is_file()
    assert sorted(p.name for p in (gold / "results").iterdir()) == sorted(Path(f).name for f in files)


def test_awkward_ids_compare_and_pass(awkward, tmp_path):
    _, gold, cand = awkward
    parity("compare", gold, cand, "--json", tmp_path / "r.json", check=0)
    assert {s["status"] for s in statuses(tmp_path / "r.json").values()} == {"pass"}
    assert len(statuses(tmp_path / "r.json")) == len(AWKWARD_PARAMS)


def test_awkward_ids_resume(awkward, tmp_path):
    scenarios, gold, _ = awkward
    out = tmp_path / "gold"
    shutil.copytree(gold, out)
    manifest = read_json(out / "manifest.json")
    dropped = manifest["scenarios"][3:]
    manifest["scenarios"], manifest["complete"] = manifest["scenarios"][:3], False
    (out / "manifest.json").write_text(json.dumps(manifest))
    for record in dropped:
        (out / record["file"]).unlink()
    proc = parity("run", "--backend", "gold", "--scenarios", scenarios, "--out", out, "--resume", check=0)
    assert "3 of 11 scenarios already finished" in proc.stderr
    resumed = read_json(out / "manifest.json")
    assert resumed["complete"] and [r["file"] for r in resumed["scenarios"]] == [
        r["file"] for r in read_json(gold / "manifest.json")["scenarios"]]


def test_compare_of_nothing_is_an_error(pair_copy, tmp_path):
    gold, cand = pair_copy
    for run in (gold, cand):
        manifest = read_json(run / "manifest.json")
        manifest["scenarios"] = []
        (run / "manifest.json").write_text(json.dumps(manifest))
    proc = parity("compare", gold, cand, "--json", tmp_path / "r.json", check=2)
    assert "covered 0 scenarios" in proc.stderr and str(gold) in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_compare_only_of_no_scenario_is_an_error(pair):
    gold, cand = pair
    proc = parity("compare", gold, cand, "--only", "plain.nothing", check=2)
    assert "covered 0 scenarios" in proc.stderr and "--only" in proc.stderr


# D9: Repro lines run nothing a results directory chose.

def test_injected_role_is_refused_by_name(pair_copy, tmp_path):
    gold, cand = pair_copy
    manifest = read_json(cand / "manifest.json")
    manifest["backend"]["role"] = f"candidate; touch {tmp_path}/owned #"
    (cand / "manifest.json").write_text(json.dumps(manifest))
    for args in (("compare", gold, cand), ("merge", cand, "--out", tmp_path / "merged")):
        proc = parity(*args, check=2)
        assert "backend.role" in proc.stderr and str(cand) in proc.stderr, proc.stderr
    assert not (tmp_path / "owned").exists()


def repro_runs(repro):
    """The commands of a Repro line (joined by ' ; '), each as the argv a POSIX shell makes of it."""
    commands = [[]]
    for word in shlex.split(repro):
        if word == ";":
            commands.append([])
        else:
            commands[-1].append(word)
    return commands


def test_repro_quotes_every_word(tmp_path):
    """A role its backend does not have by default, and an id full of shell syntax: each stays one word."""
    evil = "$(touch owned)`touch owned`;touch owned #'\""
    scenarios = write_module(tmp_path / "scenarios", "shelly.py", f'''
import parity


@parity.scenario(params={{"s": [{evil!r}]}})
def quoted(xp, s):
    return {{"a": xp.arange(3)}}
''')
    gold, cand = tmp_path / "gold", tmp_path / "cand"
    parity("run", "--backend", "gold", "--scenarios", scenarios, "--out", gold, "-q", check=0)
    parity("run", "--backend", "fsproxy", "--role", "gold", "--scenarios", scenarios, "--out", cand, "-q", check=0)
    parity("compare", gold, cand, "--json", tmp_path / "r.json", cwd=tmp_path)
    (entry,) = statuses(tmp_path / "r.json").values()
    runs = repro_runs(entry["repro"])
    assert [run[1] for run in runs] == ["run", "run", "compare"], entry["repro"]
    assert runs[1][runs[1].index("--role") + 1] == "gold"
    for run in runs[:2]:
        assert evil in entry["id"] and run[run.index("--only") + 1] == entry["id"]
        assert run[run.index("--scenarios") + 1] == str(scenarios / "shelly.py")
    assert not (tmp_path / "owned").exists()


def test_rerun_of_a_missing_shard_quotes_the_role_a_report_names(tmp_path):
    """Compare JSONs are not manifests: the role a shard report names reaches merge's rerun commands quoted."""
    gold, cand, report = tmp_path / "gold", tmp_path / "cand", tmp_path / "shard-1.json"
    for backend, out in (("gold", gold), ("fsproxy", cand)):
        parity("run", "--backend", backend, "--scenarios", SCENARIOS, "--out", out, "--shard", "1/2", "-q", check=0)
    parity("compare", gold, cand, "--json", report, check=0)
    doc = read_json(report)
    role = f"candidate; touch {tmp_path}/owned #"
    doc["candidate"]["backend"]["role"] = role
    report.write_text(json.dumps(doc))
    proc = parity("merge", report, "--json", tmp_path / "merged.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    (group,) = read_json(tmp_path / "merged.json")["merged"]["missing"]
    runs = repro_runs(group["rerun"])
    assert [run[1] for run in runs] == ["run", "run", "compare"], group["rerun"]
    assert runs[1][runs[1].index("--role") + 1] == role
    assert_inert(proc)


# D11: nothing printed can drive a terminal; the reports keep the data and stay well-formed.

@pytest.fixture(scope="module")
def controlled(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("controlled")
    scenarios = write_module(tmp / "scenarios", "control.py", CONTROL)
    runs = {}
    for backend, out in (("gold", "gold"), ("fsproxy", "cand")):
        runs[out] = parity("run", "--backend", backend, "--scenarios", scenarios, "--out", tmp / out, "-v", check=1)
    return scenarios, tmp, runs


def test_run_output_is_inert(controlled):
    _, _, runs = controlled
    for proc in runs.values():
        assert_inert(proc)
        assert r"\x1b[2J" in proc.stderr and r"\u202e" in proc.stderr  # escaped visibly, not dropped


def test_list_output_is_inert(controlled):
    scenarios, _, _ = controlled
    proc = parity("list", "--scenarios", scenarios, check=0)
    assert_inert(proc)
    assert r"\x1b]0;owned\x07" in proc.stdout


def test_compare_output_and_reports_of_hostile_names(controlled, tmp_path):
    _, tmp, _ = controlled
    gold, cand = tmp_path / "gold", tmp_path / "cand"
    shutil.copytree(tmp / "gold", gold)
    shutil.copytree(tmp / "cand", cand)
    manifest = read_json(cand / "manifest.json")
    manifest["backend"]["version"] = TERMINAL_ATTACK
    manifest["environment"]["python"] = TERMINAL_ATTACK
    for record in manifest["scenarios"]:
        if record.get("error"):
            record["error"]["message"] += "</script><script>alert(1)</script>]]>\x00\x0b\ufffe"
    (cand / "manifest.json").write_text(json.dumps(manifest))
    reports = {"json": tmp_path / "r.json", "junit": tmp_path / "r.xml", "html": tmp_path / "r.html"}
    proc = parity("compare", gold, cand, "-v", *(a for k, p in reports.items() for a in (f"--{k}", p)))
    assert proc.returncode in (0, 1), proc.stderr
    assert_inert(proc)
    report = read_json(reports["json"])
    assert any(TERMINAL_ATTACK in s["id"] for s in report["scenarios"]), "the JSON keeps the id as it is"
    ElementTree.parse(reports["junit"])  # well-formed despite controls and NULs
    html = reports["html"].read_text()
    assert "alert(1)" in html and "<script>alert(1)" not in html, "the HTML keeps the id, escaped"
    HTMLParser().feed(html)


def test_error_messages_quoting_a_file_are_inert(pair_copy):
    gold, cand = pair_copy
    manifest = read_json(cand / "manifest.json")
    manifest["scenarios"][0]["file"] = f"../{TERMINAL_ATTACK}"
    (cand / "manifest.json").write_text(json.dumps(manifest))
    proc = parity("compare", gold, cand, check=2)
    assert_inert(proc)
    assert r"\x1b[2J" in proc.stderr


def test_progress_of_compare_ids_is_inert(pair_copy):
    """Ids of a damaged pair reach the per-scenario lines and the summary: escaped there."""
    gold, cand = pair_copy
    for run in (gold, cand):
        manifest = read_json(run / "manifest.json")
        for record in manifest["scenarios"]:
            record["id"] += TERMINAL_ATTACK
        (run / "manifest.json").write_text(json.dumps(manifest))
    proc = parity("compare", gold, cand)
    assert_inert(proc)
    assert re.search(r"plain\.matrix\\x1b\[2J", proc.stderr), proc.stderr
