"""Bad input never costs the run: damaged results, wrong pairs of directories, unwritable and full disks."""
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

import demo_run
from e2e_test import results_copy  # the shared e2e helpers (tests/conftest.py)

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))
E2E_SCENARIOS = REPO / "tests" / "e2e" / "scenarios"


def parity(*args, check):
    return demo_run.parity(BIN, *args, check=check)


def run(backend, out, *extra, check):
    return parity("run", "--backend", backend, "--scenarios", E2E_SCENARIOS, "--out", out, "-q", *extra, check=check)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A gold and a candidate (fsproxy) run of tests/e2e/scenarios, for tests to copy and damage."""
    tmp = tmp_path_factory.mktemp("pair")
    run("gold", tmp / "gold", check=1)  # basic.raises raises
    run("fsproxy", tmp / "cand", check=1)
    return tmp / "gold", tmp / "cand"


def statuses(report_file):
    return {s["id"]: s for s in json.loads(report_file.read_text())["scenarios"]}


def damaged_copy(cand, tmp_path, damage):
    """A copy of `cand` with the result file of basic.matrix damaged by `damage(path)`; returns (copy, file)."""
    copy = tmp_path / "damaged"
    shutil.copytree(cand, copy)
    entry = next(s for s in json.loads((copy / "manifest.json").read_text())["scenarios"] if s["id"] == "basic.matrix")
    damage(copy / entry["file"])
    return copy, entry["file"]


@pytest.mark.parametrize("damage, status, check", [
    (lambda f: f.write_bytes(f.read_bytes()[: len(f.read_bytes()) // 2]), "error", "error"),
    (lambda f: f.write_bytes(b"\x00garbage" * 64), "error", "error"),
    (lambda f: f.unlink(), "fail", "missing"),
], ids=["truncated", "garbage", "deleted"])
def test_a_damaged_result_file_is_that_scenarios_failure_naming_it_and_the_rest_is_compared(pair, tmp_path, damage,
                                                                                           status, check):
    gold, cand = pair
    copy, file = damaged_copy(cand, tmp_path, damage)
    report = tmp_path / "report.json"
    parity("compare", gold, copy, "--json", report, check=1)
    by_id = statuses(report)
    assert by_id["basic.matrix"]["status"] == status
    assert {c["check"] for c in by_id["basic.matrix"]["checks"] if not c["ok"]} == {check}
    message = next(c["message"] for c in by_id["basic.matrix"]["checks"] if not c["ok"])
    assert file.split("/")[-1] in message, message
    assert by_id["basic.integers"]["status"] == "pass"


@pytest.mark.parametrize("damage", [
    lambda f: f.write_bytes(f.read_bytes()[:-100]),  # cut inside the pickle at its end, the codec's bytes whole
    lambda f: f.write_bytes(f.read_bytes() + b"\n"),
], ids=["cut", "added-to"])
def test_a_result_file_whose_pickle_is_not_whole_is_that_scenarios_error_naming_it(pair, tmp_path, damage):
    """A run appends each scenario's pickle to its result file (manifest version 2, pickle_offset): a file cut short
    or added to there is a damaged result file like any other, not a pickle that merely fails to verify."""
    gold, cand = pair
    copy, file = damaged_copy(cand, tmp_path, damage)
    report = tmp_path / "report.json"
    parity("compare", gold, copy, "--json", report, check=1)
    by_id = statuses(report)
    assert by_id["basic.matrix"]["status"] == "error", by_id["basic.matrix"]
    message = by_id["basic.matrix"]["checks"][0]["message"]
    assert file.split("/")[-1] in message and "pickle_offset" in message and "is not whole" in message, message
    assert by_id["basic.integers"]["status"] == "pass"


def test_a_keyword_that_selects_nothing_is_an_error_not_an_empty_pass(tmp_path):
    proc = run("gold", tmp_path / "gold", "-k", "no-id-has-this", check=5)  # pytest's "no tests collected"
    assert "-k 'no-id-has-this' selects none of the" in proc.stderr
    run("gold", tmp_path / "gold", "-k", "basic", check=1)  # a keyword that selects some runs them


@pytest.mark.parametrize("args, said", [
    (["--trust-backend", "--json", "{report}"], "--trust-backend: got the option --json where its value belongs"),
    (["--json", "--html", "{report}"], "--json: got the option --html where its value belongs"),
    (["--json={report}", "--baseline", "--strict-differences"],
     "--baseline: got the option --strict-differences where its value belongs"),
    # --out is run's: a name of any command is refused
    (["--json", "--out", "{report}"], "--json: got the option --out where its value belongs"),
    (["--json", "--jsn", "{report}"], "--json: got '--jsn' where its value belongs"),  # a misspelt option
    # another program's option (pytest's -x): it had become the report's file name, "-x" in the working directory
    (["--json", "-x", "{report}"], "--json: got '-x' where its value belongs"),
], ids=["trust-backend", "json", "baseline", "another-commands-option", "misspelt-option", "single-dash-word"])
def test_an_option_missing_its_value_is_a_usage_error_naming_both_options(pair, tmp_path, args, said):
    # CLI11 hands an option the next argument whatever it is: `--trust-backend --json r.json` had trusted "--json" and
    # "r.json" and written no report, exiting as if nothing were wrong.
    gold, cand = pair
    report = tmp_path / "report.json"
    proc = parity("compare", gold, cand, *(a.format(report=report) for a in args), check=2)
    assert said in proc.stderr, proc.stderr
    assert not report.exists()


def test_a_negative_number_and_a_path_holding_a_dash_word_stay_values(pair, tmp_path):
    # Only a value that begins with - is taken for an option: a negative number reaches its option's own check, and a
    # file named -x is written through a path to it.
    gold, cand = pair
    proc = parity("compare", gold, cand, "--timeout", "-1", check=2)
    assert "where its value belongs" not in proc.stderr and "-1" in proc.stderr, proc.stderr
    report = tmp_path / "-x"
    parity("compare", gold, cand, "--only", "basic.integers", "--json", report, check=0)
    assert statuses(report)["basic.integers"]["status"] == "pass"


@pytest.mark.parametrize("option, value, code", [("--trust-backend", "fsproxy", 1), ("--only", "basic.integers", 0),
                                                 ("--scenarios", str(E2E_SCENARIOS), 1)])  # 1: basic.raises raises
def test_an_option_before_the_results_directories_leaves_them_to_compare(pair, tmp_path, option, value, code):
    # Each took every word after it: the directories became backends, ids or paths ("candidate is required").
    gold, cand = pair
    report = tmp_path / "report.json"
    parity("compare", option, value, gold, cand, "--json", report, check=code)
    assert statuses(report)["basic.integers"]["status"] == "pass"


def test_a_swapped_pair_is_refused_saying_which_way_round(pair):
    gold, cand = pair
    proc = parity("compare", cand, gold, check=2)
    assert f"{cand} is a candidate run and {gold} a gold run: they are swapped" in proc.stderr
    assert f"parity compare {gold} {cand}" in proc.stderr


def test_runs_of_different_scenario_sets_are_refused(pair, tmp_path):
    gold, _ = pair
    other = tmp_path / "other"
    parity("run", "--backend", "fsproxy", "--scenarios", REPO / "tests" / "faults" / "scenarios", "--only",
           "faults.ordinary_first", "--out", other, "-q", check=0)
    proc = parity("compare", gold, other, check=2)
    assert "have no scenario in common: they ran different scenario sets" in proc.stderr
    assert "run both over the same --scenarios" in proc.stderr


def test_a_manifest_from_a_newer_parity_is_refused_saying_what_to_do(pair, tmp_path):
    gold, cand = pair
    newer = tmp_path / "newer"
    shutil.copytree(cand, newer)
    manifest = json.loads((newer / "manifest.json").read_text())
    manifest["version"] += 1
    (newer / "manifest.json").write_text(json.dumps(manifest))
    proc = parity("compare", gold, newer, check=2)
    assert str(newer / "manifest.json") in proc.stderr and "upgrade parity" in proc.stderr


@pytest.mark.parametrize("broken", ["gold", "candidate", "both"])
def test_an_unreadable_manifest_on_either_side_is_named_and_gold_is_named_first(pair, tmp_path, broken):
    """compare reads the two manifests side by side (compare_results.cc, read_manifests): the error is still the one
    of the side that is broken, gold's when both are."""
    gold, cand = pair
    sides = {"gold": gold, "candidate": cand}
    for side in (("gold", "candidate") if broken == "both" else (broken,)):
        sides[side] = tmp_path / side
        shutil.copytree(gold if side == "gold" else cand, sides[side])
        (sides[side] / "manifest.json").write_text("{ not json")
    proc = parity("compare", sides["gold"], sides["candidate"], check=2)
    named = sides["candidate" if broken == "candidate" else "gold"] / "manifest.json"
    assert f"{named}: malformed" in proc.stderr, proc.stderr
    if broken == "both":
        assert str(sides["candidate"]) not in proc.stderr, proc.stderr


def test_a_compare_refused_says_why_even_where_python_cannot_start(pair, tmp_path):
    """compare starts the interpreter while it reads the manifests (compare_results.cc, read_manifests); an interpreter
    that cannot start is told where it is needed, after every refusal, as when it started after them."""
    gold, cand = pair
    env = {**os.environ, "PARITY_PYTHON_EXECUTABLE": str(tmp_path / "no-python" / "bin" / "python")}
    refused = subprocess.run([BIN, "compare", tmp_path / "missing", cand], capture_output=True, text=True, env=env,
                             timeout=300)
    assert refused.returncode == 2, refused.stderr
    assert f"{tmp_path / 'missing'}: not a results directory" in refused.stderr and "NumPy" not in refused.stderr
    swapped = subprocess.run([BIN, "compare", cand, gold], capture_output=True, text=True, env=env, timeout=300)
    assert swapped.returncode == 2 and "they are swapped" in swapped.stderr and "NumPy" not in swapped.stderr, \
        swapped.stderr
    no_python = subprocess.run([BIN, "compare", gold, cand, "-q"], capture_output=True, text=True, env=env,
                               timeout=300)
    assert no_python.returncode == 2 and "NumPy's C API could not be imported by" in no_python.stderr, \
        no_python.stderr


def test_an_output_directory_that_cannot_be_created_is_named_and_nothing_is_written(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    proc = run("gold", blocker / "out", check=2)
    assert "cannot create the results directory" in proc.stderr and str(blocker / "out") in proc.stderr


BIG_AND_SMALL = '''
import parity


@parity.scenario
def big(xp):
    return {"big": xp.ones((1024, 1024), dtype=xp.float64)}


@parity.scenario
def small(xp):
    return {"small": xp.arange(4)}
'''


def test_a_full_disk_fails_the_write_naming_the_file_and_leaves_nothing_half_written(tmp_path):
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "sizes.py").write_text(BIG_AND_SMALL)
    out = tmp_path / "out"

    def small_disk():  # a file may not grow past 1 MB: writes past it fail with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))

    proc = subprocess.run([BIN, "run", "--backend", "gold", "--scenarios", scenarios, "--out", out, "-q"],
                          capture_output=True, text=True, timeout=300, preexec_fn=small_disk)
    assert proc.returncode == 1, proc.stderr
    entries = {s["id"]: s for s in json.loads((out / "manifest.json").read_text())["scenarios"]}
    assert entries["sizes.small"]["status"] == "ok"
    big = entries["sizes.big"]
    assert big["status"] == "error" and big["error"]["type"] == "ResultWriteError"
    assert "cannot write" in big["error"]["message"] and str(out / "results") in big["error"]["message"]
    assert [p.name for p in (out / "results").iterdir() if p.name.startswith("sizes.big")] == []
    report = tmp_path / "report.json"
    parity("compare", out, results_copy(out), "--json", report, check=1)
    assert statuses(report)["sizes.small"]["status"] == "pass"


# --- report destinations: checked before any work, never replaced when they are not files ----------------------------

def test_a_report_into_a_fifo_is_written_into_it_and_the_fifo_stays(pair, tmp_path):
    """`--json /dev/stdout`, `--junit /dev/null`, a shell's `>(jq ...)`: a report was written beside the name and
    renamed over it, which replaced the FIFO (and, as root, /dev/null itself) with a regular file and exited 0."""
    gold, cand = pair
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    parity("compare", gold, cand, "--json", fifo, "-q", check=1)
    reader.join(timeout=60)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert got and json.loads(got[0])["format"] == "parity-compare"


def test_a_report_through_a_link_is_written_where_it_points_and_the_link_stays(pair, tmp_path):
    gold, cand = pair
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "today.json").write_text("yesterday's")
    latest = tmp_path / "latest.json"
    latest.symlink_to(Path("archive") / "today.json")
    parity("compare", gold, cand, "--json", latest, "-q", check=1)
    assert latest.is_symlink(), "the link was replaced by a file"
    assert json.loads((tmp_path / "archive" / "today.json").read_text())["format"] == "parity-compare"


@pytest.mark.parametrize("spelling", ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"])
def test_a_report_to_stdout_that_is_a_file_goes_into_that_file_not_over_it(pair, tmp_path, spelling):
    """`parity compare ... --json /dev/stdout > build.log`: /dev/stdout's link was followed to build.log, and a
    report renamed over it, which replaced the shell's file (what the run printed before was gone, what it printed
    after went to the unlinked one). Now the report is written through the process's own descriptor, as its output
    is, and two reports may go there."""
    gold, cand = pair
    log = tmp_path / "build.log"
    with open(log, "w") as stdout:
        stdout.write("before\n")
        stdout.flush()
        proc = subprocess.run([BIN, "compare", gold, cand, "--json", spelling, "--junit", spelling, "-q"],
                              stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=300)
        inode = os.fstat(stdout.fileno()).st_ino
    assert proc.returncode == 1, proc.stderr
    assert os.stat(log).st_ino == inode, "the file the shell opened was replaced"
    text = log.read_text()
    assert text.startswith("before\n{"), text[:200]
    document, end = json.JSONDecoder().raw_decode(text, len("before\n"))
    assert document["format"] == "parity-compare"
    assert text[end:].lstrip().startswith("<?xml"), text[end:end + 200]


def test_a_fifos_late_reader_gets_the_report_and_a_sigterm_ends_the_wait_with_130(pair, tmp_path):
    """A report into a FIFO waits for its reader (one started after parity gets it whole); a SIGTERM while it waits,
    a CI job's cancel, ended the compare with exit 2 ("cannot create"), as a failed write, not an interruption."""
    gold, cand = pair
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([BIN, "compare", gold, cand, "--json", fifo], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    got = fifo.read_bytes()  # the reader comes late
    assert proc.wait(timeout=60) == 1, proc.stderr.read()
    assert json.loads(got)["format"] == "parity-compare"
    proc = subprocess.Popen([BIN, "compare", gold, cand, "--json", fifo], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:  # the last scenario's line, then the report's wait for a reader
        lines.append(line)
        if line.startswith("[4/4]"):
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    err = "".join(lines) + proc.stderr.read()
    assert proc.wait(timeout=60) == 130, err
    assert "stopped by signal 15 while a report was written" in err, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_report_waiting_on_a_fifos_reader_stops_on_a_signal_with_130(pair, tmp_path, sig):
    """`parity report r.json --html FIFO` starts an interpreter (the HTML is rendered by Python), whose handler only
    noted a Ctrl-C: the wait for the FIFO's reader went on through any number of them."""
    gold, cand = pair
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, "-q", check=1)
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([BIN, "report", report, "--html", fifo], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        # Until it waits in the FIFO's open (its interpreter started first); where the kernel hides wchan, 10 s.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and Path(f"/proc/{proc.pid}/wchan").read_text() != "wait_for_partner":
            time.sleep(0.05)
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=60)
    assert f"stopped by signal {int(sig)}" in err, err


def test_a_ctrl_c_while_report_renders_its_html_ends_it_with_130(pair, tmp_path):
    """A Ctrl-C while `parity report` started its interpreter or rendered the HTML was a KeyboardInterrupt inside
    them, told as their error ("NumPy's C API could not be imported", "the HTML report could not be rendered"), exit
    2. Now the reports are written and the command ends as interrupted."""
    gold, cand = pair
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, "-q", check=1)
    proc = subprocess.Popen([BIN, "report", report, "--html", tmp_path / "r.html"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60  # until NumPy is being loaded: its interpreter is starting
        while time.monotonic() < deadline and proc.poll() is None and \
                "_multiarray_umath" not in Path(f"/proc/{proc.pid}/maps").read_text():
            time.sleep(0.001)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=60)
    assert code == 130, err
    assert "stopped by signal 2" in err and "KeyboardInterrupt" not in err, err


def test_a_sigterm_while_a_stalled_pipe_holds_a_report_ends_the_compare_with_130(pair):
    """`parity compare ... --json /dev/stdout | slow-consumer`: a SIGTERM while the full pipe held the report back
    was retried as an interrupted write, for ever; an Interrupted thrown for it then aborted the process (134)."""
    import fcntl
    gold, cand = pair
    proc = subprocess.Popen([BIN, "compare", gold, cand, "--json", "/dev/stdout"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, 4096)  # smaller than the report: the write blocks
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("[4/4]"):
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 130, "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate(timeout=60)
    assert "stopped by signal 15 while a report was written" in err, err


def test_check_writes_its_report_into_the_out_directory_it_makes(tmp_path):
    """`check --out DIR --json DIR/report.json` was refused before any work ("its directory DIR does not exist"),
    though the check makes DIR before it writes the report."""
    out = tmp_path / "new"
    parity("check", "--backend", "fsproxy", "--scenarios", E2E_SCENARIOS, "--out", out, "--json", out / "r.json",
           "-q", check=1)
    assert json.loads((out / "r.json").read_text())["format"] == "parity-compare"
    # ... but not as one of the two results directories it makes there: that failed only after both runs
    other = tmp_path / "other"
    proc = parity("check", "--backend", "fsproxy", "--scenarios", E2E_SCENARIOS, "--out", other, "--junit",
                  other / "candidate", "-q", check=2)
    assert f"--junit {other / 'candidate'} names the same file as the input {other / 'candidate'}" in proc.stderr
    assert not other.exists()
    # ... nor as one of their manifests, refused as that ("its directory OUT/candidate does not exist", it had said)
    manifest = other / "candidate" / "manifest.json"
    proc = parity("check", "--backend", "fsproxy", "--scenarios", E2E_SCENARIOS, "--out", other, "--json", manifest,
                  "-q", check=2)
    assert f"--json {manifest} names the same file as the input {manifest}" in proc.stderr, proc.stderr
    assert not other.exists()


@pytest.mark.parametrize("command", ["compare", "check"])
@pytest.mark.parametrize("case", ["missing-directory", "a-directory", "same-file", "link-loop"])
def test_a_report_that_cannot_be_written_is_refused_before_any_work(pair, tmp_path, command, case):
    """Found after the work, a report's missing directory had cost a whole check (both runs, the compare) and ended
    with no report; two reports naming one file had left only the last, and said both were written."""
    gold, cand = pair
    reports = {"missing-directory": ["--json", tmp_path / "nowhere" / "r.json"],
               "a-directory": ["--html", tmp_path],
               "same-file": ["--json", tmp_path / "r.txt", "--html", tmp_path / "." / "r.txt"],
               "link-loop": ["--json", tmp_path / "a.json"]}[case]
    (tmp_path / "a.json").symlink_to("b.json")  # a loop of links: its last link had been replaced by the report
    (tmp_path / "b.json").symlink_to("a.json")
    out = tmp_path / "out"
    args = (["compare", gold, cand] if command == "compare" else
            ["check", "--backend", "fsproxy", "--scenarios", E2E_SCENARIOS, "--out", out])
    proc = parity(*args, *reports, "-q", check=2)
    said = {"missing-directory": f"--json {reports[1]}: its directory {tmp_path / 'nowhere'} does not exist",
            "a-directory": f"--html {tmp_path}: is a directory",
            "same-file": f"--html {tmp_path / '.' / 'r.txt'} names the same file as --json {tmp_path / 'r.txt'}",
            "link-loop": f"--json {tmp_path / 'a.json'}: its symbolic links make a loop"}[case]
    assert f"parity {command}: {said}" in proc.stderr, proc.stderr
    assert not out.exists() and not (tmp_path / "r.txt").exists()  # nothing ran, nothing written
    assert (tmp_path / "a.json").is_symlink() and (tmp_path / "b.json").is_symlink()


@pytest.mark.parametrize("side", ["gold", "candidate"])
def test_a_report_over_a_compared_runs_manifest_is_refused(pair, tmp_path, side):
    """`--json $GOLD/manifest.json`, a report meant to sit beside the run, was written over its manifest: the run
    was gone, and the next compare refused it."""
    gold, cand = (shutil.copytree(d, tmp_path / d.name, symlinks=True) for d in pair)
    target = (gold if side == "gold" else cand) / "manifest.json"
    before = target.read_bytes()
    proc = parity("compare", gold, cand, "--json", target, "-q", check=2)
    assert f"--json {target} names the same file as the input {target}" in proc.stderr, proc.stderr
    assert target.read_bytes() == before

def test_report_refuses_to_write_over_its_own_input(pair, tmp_path):
    gold, cand = pair
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--json", report, "-q", check=1)
    before = report.read_bytes()
    proc = parity("report", report, "--junit", report, check=2)
    assert f"--junit {report} names the same file as the input {report}" in proc.stderr, proc.stderr
    assert report.read_bytes() == before


# --- values a script gets wrong: an unset variable, a number out of reach ---------------------------------------------

@pytest.mark.parametrize("args", [
    ["list", "--scenarios", ""],
    ["run", "--backend", "gold", "--out", ""],
    ["compare", "GOLD", "CAND", "--json", ""],
    ["compare", "", "CAND"],
    ["compare", "GOLD", "CAND", "--baseline", ""],
    ["report", "", "--html", "r.html"],
], ids=["list --scenarios", "run --out", "compare --json", "compare gold", "compare --baseline", "report"])
def test_an_empty_path_is_a_usage_error_naming_the_option(pair, tmp_path, args):
    """`--json "$REPORT"` with REPORT unset wrote no report and exited 0; `--scenarios ''` imported every module under
    the current directory (their code ran); `--out ''` was an internal error."""
    gold, cand = pair
    (tmp_path / "tool.py").write_text("import pathlib\npathlib.Path('IMPORTED').write_text('ran')\n")
    args = [gold if a == "GOLD" else cand if a == "CAND" else a for a in args]
    proc = demo_run.subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "an empty path (an unset variable?)" in proc.stderr, proc.stderr
    assert not (tmp_path / "IMPORTED").exists()


@pytest.mark.parametrize("option,value,said", [("--timeout", "nan", "'nan' is not a finite number"),
                                               ("--timeout", "-1", "'-1' must be 0 or more"),
                                               ("--jobs", "0", "'0' must be above 0")])
def test_a_number_out_of_range_is_refused_saying_what_is_expected(pair, option, value, said):
    """A NaN timeout had been taken for none; 0 jobs was refused with 'Value 0 not in range 0.000000 to 1797...'
    (309 digits)."""
    gold, cand = pair
    proc = parity("compare", gold, cand, option, value, "-q", check=2)
    assert f"{option}: {said}" in proc.stderr and "179769" not in proc.stderr, proc.stderr


def test_a_timeout_beyond_the_clocks_reach_is_none(pair, tmp_path):
    """`--timeout 1e10` (recorded by a run, or given to compare) overflowed the clock's nanoseconds: every scenario
    was a timeout at once."""
    gold, cand = pair
    report = tmp_path / "r.json"
    parity("compare", gold, cand, "--timeout", "1e10", "--json", report, "-q", check=1)  # basic.raises raises
    assert "timeout" not in {s["status"] for s in statuses(report).values()}


def test_one_results_directory_given_twice_is_refused(pair, tmp_path):
    """`compare $GOLD $GOLD`, a script's typo, passed every scenario and exited 0: a green night that checked nothing.
    The same directory by another path (a link) is the same directory."""
    gold, _ = pair
    (tmp_path / "link").symlink_to(gold)
    proc = parity("compare", gold, tmp_path / "link", "-q", check=2)
    assert f"{gold} and {tmp_path / 'link'} are the same results directory" in proc.stderr, proc.stderr


WAITS_FOR_GO = '''
import os
import time

import parity


@parity.scenario(timeout=120)
def waits(xp):
    open(os.environ["BAD_INPUT_STARTED"], "w").close()
    while not os.path.exists(os.environ["BAD_INPUT_GO"]):
        time.sleep(0.02)
    return {"x": xp.arange(3.0)}
'''


def test_a_second_run_into_a_results_directory_being_written_is_refused(tmp_path):
    """Two runs into one --out at once both ended 'results <out>', exit 0: the manifest was the last one's, the other's
    results lost. The second is refused (exit 2) before it writes anything; the first ends as if alone."""
    scenarios, out = tmp_path / "scenarios", tmp_path / "out"
    scenarios.mkdir()
    (scenarios / "slow.py").write_text(WAITS_FOR_GO)
    started, go = tmp_path / "started", tmp_path / "go"
    env = {**os.environ, "BAD_INPUT_STARTED": str(started), "BAD_INPUT_GO": str(go)}
    first = subprocess.Popen([BIN, "run", "--backend", "gold", "--scenarios", scenarios, "--out", out, "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists(), first.stderr.read() if first.poll() is not None else "the scenario never started"
        second = run("fsproxy", out, check=2)
        assert f"{out} is being written by another parity run" in second.stderr, second.stderr
    finally:
        go.touch()
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["backend"]["name"] == "gold" and [s["id"] for s in manifest["scenarios"]] == ["slow.waits"]



def test_a_resume_takes_the_lock_before_it_reads_the_manifest(tmp_path):
    """--resume read the manifest, then started its workers, then locked: it could read a manifest another run was
    replacing. Here a directory that another process holds locked, with no manifest yet, is "being written", not
    "nothing to resume"."""
    import fcntl
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc = run("gold", out, "--resume", check=2)
    finally:
        os.close(fd)
    assert f"{out} is being written by another parity run" in proc.stderr, proc.stderr
    assert list(out.iterdir()) == []

SLOW_TO_IMPORT = '''
import os
import time

import parity

open(os.environ["BAD_INPUT_STARTED"], "w").close()
time.sleep(60)


@parity.scenario
def never(xp):
    return {"x": xp.arange(2)}
'''


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_list_stopped_by_a_signal_while_a_module_imports_exits_130(tmp_path, sig):
    """Ctrl-C during `list` was 'parity: internal error (Python): KeyboardInterrupt' with a traceback, exit 2; SIGTERM
    killed it (143). Both are an interruption, 130, as for run and compare."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "slow.py").write_text(SLOW_TO_IMPORT)
    started = tmp_path / "started"
    proc = subprocess.Popen([BIN, "list", "--scenarios", tmp_path / "scenarios"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "BAD_INPUT_STARTED": str(started)})
    deadline = time.monotonic() + 120
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "parity: stopped by a signal" in err and "internal error" not in err, err
