"""Scenario isolation (parity.isolation, README "Scenario isolation"): what a scenario changes in its worker process
does not reach the scenarios after it in the same worker, so no outputs depend on the order, -j or a shard."""
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
BIN = os.environ.get("PARITY_BIN", str(REPO / "build" / "parity"))

# Modules run in file order in one worker (-j 1): a_ changes the process, b_ looks at it.
LEAKER = '''
import os, sys
import numpy as np
import parity


@parity.scenario
def leak(xp, rng):
    np.set_printoptions(precision=2)
    np.seterr(all="raise")
    np.random.seed(123)
    os.umask(0o077)
    sys.setrecursionlimit(sys.getrecursionlimit() + 77)
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    os.close(1)
    return {"x": 1}
'''

VICTIM = '''
import json, os, sys, tempfile
import numpy as np
import parity


@parity.scenario
def look(xp, rng):
    with np.errstate():
        divide = np.geterr()["divide"]
    umask = os.umask(0o022)
    os.umask(umask)
    fd, path = tempfile.mkstemp(dir=os.environ["ISOLATION_TMP"])
    with os.fdopen(fd, "w") as f:  # takes descriptor 1 if a scenario before left it closed
        f.write("1\\n2\\n")
        f.flush()
        print(3)  # ... and then this lands in the file
    with open(path) as f:
        lines = len(f.read().split())
    os.unlink(path)
    seeded = float(np.random.random()) == np.random.RandomState(123).random_sample()
    seen = {"repr": repr(np.array([1.23456789])), "divide": divide, "umask": umask, "lines": lines,
            "recursion_limit": sys.getrecursionlimit(), "cwd": os.getcwd(), "legacy_random_seeded_by_another": seeded}
    with open(os.environ["ISOLATION_SEEN"], "w") as f:
        json.dump(seen, f)
    return {"ok": 1}
'''


def run(scenarios: Path, out: Path, *extra, env=None):
    proc = subprocess.run([BIN, "run", "--backend", "gold", "--scenarios", scenarios, "--out", out, "-q", *extra],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
    manifest = json.loads((out / "manifest.json").read_text())
    return proc, {s["id"]: s for s in manifest["scenarios"]}


def test_what_a_scenario_changes_in_its_worker_does_not_reach_the_next(tmp_path):
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "a_leak.py").write_text(textwrap.dedent(LEAKER))
    (scenarios / "b_victim.py").write_text(textwrap.dedent(VICTIM))
    (tmp_path / "tmp").mkdir()
    seen = {}
    for name, extra in (("alone", ["--only", "b_victim.look"]), ("after", ["--jobs", "1"])):
        env = {"ISOLATION_TMP": str(tmp_path / "tmp"), "ISOLATION_SEEN": str(tmp_path / f"{name}.txt")}
        proc, records = run(scenarios, tmp_path / name, *extra, env=env)
        assert records["b_victim.look"]["status"] == "ok", (proc.stderr, records)
        seen[name] = json.loads((tmp_path / f"{name}.txt").read_text())
    assert seen["after"] == seen["alone"]
    assert not seen["after"]["legacy_random_seeded_by_another"]
    assert seen["after"]["lines"] == 2


FORKER = '''
import os, time
import parity


@parity.scenario
def k1_fork(xp, rng):
    pid = os.fork()
    if pid == 0:
        time.sleep(0.4)  # returns while its parent runs the next scenarios: it had gone on as a second worker
    return {"child": int(pid == 0)}


@parity.scenario(params={"i": [0, 1, 2]})
def k2_after(xp, rng, i):
    time.sleep(0.3)  # the run still going when the child returns
    return {"v": rng.standard_normal(3)}
'''


def test_a_scenarios_forked_child_ends_where_it_returns(tmp_path):
    api = pytest.importorskip("parity.api")
    pytest.importorskip("parity._core", reason="reading the result file needs parity's extension module")
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    (scenarios / "forker.py").write_text(textwrap.dedent(FORKER))
    proc, records = run(scenarios, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert {i: r["status"] for i, r in records.items()} == {
        "forker.k1_fork": "ok", "forker.k2_after[i=0]": "ok", "forker.k2_after[i=1]": "ok",
        "forker.k2_after[i=2]": "ok"}
    assert api.read_result(tmp_path / "out" / records["forker.k1_fork"]["file"]) == {"child": 0}


def scenario_dir(tmp_path: Path, **modules: str) -> Path:
    """A scenarios folder holding each `name=source` as name.py: run in name order by one worker (-j 1)."""
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for name, source in modules.items():
        (scenarios / f"{name}.py").write_text(textwrap.dedent(source))
    return scenarios


def seen_alone_and_after(tmp_path: Path, scenarios: Path, victim: str, env=None) -> dict:
    """What the victim wrote to $ISOLATION_SEEN when it ran alone and when it ran after the others in one worker."""
    seen = {}
    for name, extra in (("alone", ["--only", victim]), ("after", ["--jobs", "1"])):
        path = tmp_path / f"{name}.json"
        proc, records = run(scenarios, tmp_path / name, *extra, env={**(env or {}), "ISOLATION_SEEN": str(path)})
        assert records[victim]["status"] == "ok", (proc.stderr, records)
        seen[name] = json.loads(path.read_text())
    return seen


RANDOM_SEEDER = '''
import random
import parity


@parity.scenario
def seed(xp, rng):
    random.seed(123)
    return {"x": random.random() + random.gauss(0, 1)}  # gauss keeps its second value for the next call
'''

RANDOM_DRAWER = '''
import json, os, random
import parity


@parity.scenario(params={"i": [0, 1]})
def draw(xp, rng, i):
    with open(os.environ["ISOLATION_SEEN"] + str(i), "w") as f:
        json.dump([random.random(), random.gauss(0, 1)], f)
    return {"ok": 1}
'''


def test_pythons_random_is_put_back_after_each_scenario(tmp_path):
    scenarios = scenario_dir(tmp_path, a_seeder=RANDOM_SEEDER, b_drawer=RANDOM_DRAWER)
    seen = tmp_path / "seen"
    proc, records = run(scenarios, tmp_path / "out", "--jobs", "1", env={"ISOLATION_SEEN": str(seen)})
    assert {r["status"] for r in records.values()} == {"ok"}, (proc.stderr, records)
    first, second = (json.loads(Path(f"{seen}{i}").read_text()) for i in (0, 1))
    assert first == second  # neither the seeding scenario's state nor the first draw's reached the second
    seeded = random.Random(123)
    assert first[0] not in [seeded.random() for _ in range(8)]


GLOBAL_DRAWER = '''
import random
import numpy as np
import parity


@parity.scenario(params={"i": [0, 1]})
def draw(xp, rng, i):
    return {"python": random.random(), "legacy": np.random.random(3)}
'''


def test_the_global_generators_start_every_scenario_from_one_seed_in_every_run(tmp_path):
    # A worker had them as its start left them, seeded from the operating system: a scenario that drew from them
    # without seeding them gave other outputs in each run, gold against gold a failure, and its repro another.
    scenarios = scenario_dir(tmp_path, a_drawer=GLOBAL_DRAWER)
    digests = {}
    for name, extra in (("one", ["--jobs", "1"]), ("two", ["--jobs", "2"]), ("alone", ["--only", "a_drawer.draw[i=1]"])):
        proc, records = run(scenarios, tmp_path / name, *extra)
        assert {r["status"] for r in records.values()} == {"ok"}, (proc.stderr, records)
        digests[name] = {i: r["fidelity"] for i, r in records.items()}  # a digest for each output
    assert digests["one"] == digests["two"], digests
    assert digests["one"]["a_drawer.draw[i=0]"] == digests["one"]["a_drawer.draw[i=1]"] == digests["alone"][
        "a_drawer.draw[i=1]"], digests


NUMPY_IMPORTED_BY_A_SCENARIO = """
import sys
from parity import isolation

assert "numpy" not in sys.modules  # as in a worker of a backend without NumPy


def draw():
    import numpy as np
    return float(np.random.random())


isolation.call_isolated(draw)  # imports numpy: its legacy generator seeded from the operating system
import numpy as np
assert isolation.call_isolated(draw) == np.random.RandomState(isolation.GLOBAL_GENERATORS_SEED).random_sample()
print("ok")
"""


def test_after_the_scenario_that_imports_numpy_the_next_start_from_the_seed():
    """In a worker without NumPy at its start, the scenario that first imports it leaves the legacy generator where
    its own draws left it: the next scenarios started from there, not from the seed the others start from."""
    proc = subprocess.run([sys.executable, "-c", NUMPY_IMPORTED_BY_A_SCENARIO], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


SIGNAL_LEAKER = '''
import signal
import parity


@parity.scenario
def leak(xp, rng):
    signal.signal(signal.SIGUSR1, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker's Ctrl-C
    for number in signal.valid_signals():  # parity's own handlers, installed outside Python
        if signal.getsignal(number) is None:
            signal.signal(number, signal.SIG_IGN)
    signal.setitimer(signal.ITIMER_VIRTUAL, 100)
    signal.setitimer(signal.ITIMER_PROF, 100)
    signal.setitimer(signal.ITIMER_REAL, 0.3)  # signal.alarm's timer: SIGALRM's default action ends the process
    return {"x": 1}
'''

SIGNAL_VICTIM = '''
import json, os, signal, time
import parity


def name(handler):
    return getattr(handler, "__qualname__", None) or str(handler)


@parity.scenario
def look(xp, rng):
    time.sleep(0.5)  # past the leaker's ITIMER_REAL
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f.read().splitlines())
    seen = {"handlers": {int(s): name(signal.getsignal(s)) for s in signal.valid_signals()},
            "timers": [signal.getitimer(t) for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)],
            "dispositions": {k: status[k].strip() for k in ("SigBlk", "SigIgn", "SigCgt")}}
    with open(os.environ["ISOLATION_SEEN"], "w") as f:
        json.dump(seen, f)
    return {"ok": 1}
'''

SIGINT_TO_ITSELF = '''
import os, signal, time
import parity


@parity.scenario
def interrupted(xp, rng):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
    return {"x": 1}
'''


def test_signal_handlers_and_timers_are_put_back_after_each_scenario(tmp_path):
    scenarios = scenario_dir(tmp_path, a_leak=SIGNAL_LEAKER, b_victim=SIGNAL_VICTIM, c_sigint=SIGINT_TO_ITSELF)
    seen = seen_alone_and_after(tmp_path, scenarios, "b_victim.look")
    # Python's record of a handler installed outside it (None) keeps what a scenario set; the C level's is put back.
    for number in [n for n, handler in seen["alone"]["handlers"].items() if handler == "None"]:
        seen["after"]["handlers"].pop(number), seen["alone"]["handlers"].pop(number)
    assert seen["after"] == seen["alone"]
    assert seen["after"]["timers"] == [[0.0, 0.0]] * 3
    _, records = run(scenarios, tmp_path / "again", "--jobs", "1", env={"ISOLATION_SEEN": str(tmp_path / "x")})
    record = records["c_sigint.interrupted"]  # a real SIGINT still ends the worker, the leaker's SIG_IGN gone
    assert record["status"] == "crash" and "stopped by a signal" in record["error"]["traceback"], record


ENV_LEAKER = '''
import os, time
import parity


@parity.scenario
def leak(xp, rng):
    os.environ["ISOLATION_NEW"] = "new"
    os.environ["ISOLATION_CHANGED"] = "changed"
    del os.environ["ISOLATION_DELETED"]
    os.environ["TZ"] = "XYZ+05"  # a POSIX rule: no time zone database needed
    time.tzset()
    return {"x": 1}
'''

ENV_VICTIM = '''
import ctypes, json, os, time
import parity

NAMES = ("ISOLATION_NEW", "ISOLATION_CHANGED", "ISOLATION_DELETED", "TZ")


@parity.scenario
def look(xp, rng):
    getenv = ctypes.CDLL(None).getenv  # the C environment, which os.environ keeps in step
    getenv.restype = ctypes.c_char_p
    c_value = lambda name: None if getenv(name.encode()) is None else getenv(name.encode()).decode()
    seen = {"environ": {n: os.environ.get(n) for n in NAMES}, "c": {n: c_value(n) for n in NAMES},
            "tzname": list(time.tzname), "timezone": time.timezone}
    with open(os.environ["ISOLATION_SEEN"], "w") as f:
        json.dump(seen, f)
    return {"ok": 1}
'''


def test_environment_variables_are_put_back_after_each_scenario(tmp_path):
    scenarios = scenario_dir(tmp_path, a_leak=ENV_LEAKER, b_victim=ENV_VICTIM)
    env = {"ISOLATION_CHANGED": "before", "ISOLATION_DELETED": "here"}
    seen = seen_alone_and_after(tmp_path, scenarios, "b_victim.look", env=env)
    assert seen["after"] == seen["alone"]
    assert seen["after"]["environ"]["ISOLATION_NEW"] is None
    assert seen["after"]["c"]["ISOLATION_DELETED"] == "here"
    assert "XYZ" not in seen["after"]["tzname"]


INTERRUPTS = '''
import os, signal, time
import parity


def note_pid(name):
    with open(os.path.join(os.environ["ISOLATION_SEEN"], name), "w") as f:
        f.write(str(os.getpid()))


@parity.scenario
def a_raises(xp, rng):
    note_pid("a")
    raise KeyboardInterrupt


@parity.scenario
def b_after(xp, rng):
    note_pid("b")
    return {"x": 1}
'''


def test_a_keyboard_interrupt_a_scenario_raises_is_its_error(tmp_path):
    scenarios = scenario_dir(tmp_path, a_interrupts=INTERRUPTS, b_sigint=SIGINT_TO_ITSELF)
    seen = tmp_path / "seen"
    seen.mkdir()
    proc, records = run(scenarios, tmp_path / "out", "--jobs", "1", env={"ISOLATION_SEEN": str(seen)})
    raised = records["a_interrupts.a_raises"]
    assert raised["status"] == "error", (proc.stderr, raised)
    assert raised["error"]["type"] == "KeyboardInterrupt" and "KeyboardInterrupt" in raised["error"]["message"]
    assert records["a_interrupts.b_after"]["status"] == "ok"
    assert (seen / "a").read_text() == (seen / "b").read_text()  # the same worker went on
    signalled = records["b_sigint.interrupted"]  # a real SIGINT still stops its worker, as a Ctrl-C
    assert signalled["status"] == "crash" and "stopped by a signal" in signalled["error"]["traceback"], signalled
    assert proc.returncode == 1


SWALLOWS_SIGINT = '''
import os, signal, time
import parity


@parity.scenario
def swallows(xp, rng):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
    except KeyboardInterrupt:  # a real SIGINT, caught: the scenario goes on, and so does the run
        pass
    return {"x": 1}
'''


def test_a_sigint_an_earlier_scenario_caught_leaves_a_raised_keyboard_interrupt_an_error(tmp_path):
    """The note that a stop signal came is one scenario's: it had stayed set for the worker's life, and a later
    scenario's own `raise KeyboardInterrupt` then ended the worker (exit 130) instead of being that scenario's error."""
    scenarios = scenario_dir(tmp_path, a_swallows=SWALLOWS_SIGINT, b_interrupts=INTERRUPTS)
    seen = tmp_path / "seen"
    seen.mkdir()
    proc, records = run(scenarios, tmp_path / "out", "--jobs", "1", env={"ISOLATION_SEEN": str(seen)})
    assert records["a_swallows.swallows"]["status"] == "ok", (proc.stderr, records)
    raised = records["b_interrupts.a_raises"]
    assert raised["status"] == "error" and raised["error"]["type"] == "KeyboardInterrupt", (proc.stderr, raised)
    assert records["b_interrupts.b_after"]["status"] == "ok"
    assert (seen / "a").read_text() == (seen / "b").read_text()  # one worker throughout


OUTSIDE_HANDLER = '''
import ctypes, json, os, signal
import parity

SUPERVISOR_GONE = signal.SIGRTMIN + 4  # parity's own handler, installed outside Python (src/parity/run/process.cc)


def c_handler():
    action = ctypes.create_string_buffer(512)  # struct sigaction, its handler first
    assert ctypes.CDLL(None).sigaction(SUPERVISOR_GONE, None, action) == 0
    return int.from_bytes(action.raw[:ctypes.sizeof(ctypes.c_void_p)], "little")


@parity.scenario(params={"i": [0, 1, 2]})
def ignores(xp, rng, i):
    with open(os.environ["ISOLATION_SEEN"] + str(i), "w") as f:
        json.dump({"python": str(signal.getsignal(SUPERVISOR_GONE)), "c": c_handler()}, f)
    signal.signal(SUPERVISOR_GONE, signal.SIG_IGN)  # the same change each time
    return {"x": 1}
'''


def test_a_handler_installed_outside_python_is_put_back_after_every_scenario(tmp_path):
    """Python's record of parity's own handler keeps what the first scenario set, once set back at the C level only:
    the second scenario's identical change then looked like none, and the third found the signal ignored."""
    scenarios = scenario_dir(tmp_path, outside=OUTSIDE_HANDLER)
    seen = tmp_path / "seen"
    proc, records = run(scenarios, tmp_path / "out", "--jobs", "1", env={"ISOLATION_SEEN": str(seen)})
    assert {r["status"] for r in records.values()} == {"ok"}, (proc.stderr, records)
    first, second, third = (json.loads(Path(f"{seen}{i}").read_text()) for i in range(3))
    assert first["python"] == "None"  # installed outside Python, as this test assumes
    assert first["c"] not in (0, 1)  # neither SIG_DFL nor SIG_IGN: parity's handler
    assert second["c"] == third["c"] == first["c"]


AFTER_A_PYTEST_TEST = '''
import os
from parity import isolation


def fixture_sets():  # a pytest test whose session fixture changes the worker: nothing put back
    os.environ["SUITE_MODE"] = "fast"
    os.umask(0o027)


def native_meddles():
    del os.environ["SUITE_MODE"]
    os.environ["NATIVE"] = "1"
    os.umask(0o077)


def look():
    umask = os.umask(0o022)
    os.umask(umask)
    return os.environ.get("SUITE_MODE"), os.environ.get("NATIVE"), umask


isolation.call_isolated(fixture_sets, isolated=False)
isolation.call_isolated(native_meddles)
assert isolation.call_isolated(look, isolated=False) == ("fast", None, 0o027)
descriptors = len(os.listdir("/proc/self/fd"))
for _ in range(20):  # the state taken again each time: the descriptors it held are closed
    isolation.call_isolated(look, isolated=False)
    isolation.call_isolated(look)
assert len(os.listdir("/proc/self/fd")) == descriptors
print("ok")
'''


def test_a_scenario_after_a_pytest_test_is_put_back_to_what_the_pytest_session_left():
    """A pytest test is not put back (its fixtures keep their effects for their scope: pytest_suites/
    test_fixture_state.py); a native scenario run after it in the worker is put back to what the session left set up,
    not to what the worker started with, which would undo the fixtures for the suite's next tests."""
    proc = subprocess.run([sys.executable, "-c", AFTER_A_PYTEST_TEST], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


WITHOUT_PRIVATE_NAMES = '''
import collections.abc, os, random, signal, sys

sys.modules["_signal"] = None  # import _signal fails
del random._inst


class Plain(collections.abc.MutableMapping):  # os.environ without _data and encodekey
    def __init__(self, real):
        self.real = real
    def __getitem__(self, key):
        return self.real[key]
    def __setitem__(self, key, value):
        self.real[key] = value
    def __delitem__(self, key):
        del self.real[key]
    def __iter__(self):
        return iter(self.real)
    def __len__(self):
        return len(self.real)


real_environ, os.environ = os.environ, Plain(os.environ)
from parity import isolation

assert isolation._signal is signal


def leak():
    os.environ["ISOLATION_NEW"] = "new"
    os.environ.pop("ISOLATION_DELETED")
    random.seed(1)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)


def look():
    return (os.environ.get("ISOLATION_NEW"), os.environ.get("ISOLATION_DELETED"), random.getstate(),
            signal.getsignal(signal.SIGUSR1))


os.environ["ISOLATION_DELETED"] = "here"
before = isolation.call_isolated(look)
assert isolation._worker.environment.data is None  # the fallback, not os.environ's private dict
isolation.call_isolated(leak)
assert isolation.call_isolated(look) == before
assert os.getenv("ISOLATION_DELETED") == "here" and real_environ.get("ISOLATION_NEW") is None
print("ok")
'''


def test_isolation_without_the_private_names_it_reads_puts_back_the_same():
    """_signal, random._inst and os.environ's _data and encodekey are CPython's private names, read for speed: where
    they are missing, the public ones put back the same."""
    proc = subprocess.run([sys.executable, "-c", WITHOUT_PRIVATE_NAMES], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
