"""assert_eq for pytest suites: compare reads the asserter from the trusted suite and calls it on rebuilt outputs."""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from pathlib import Path

from parity import probe, pytest_suite, trust
from parity._scenario import describe_exception

CHECK = "assert_eq"


class _Collected:
    """One test file as pytest collects it in the compare process: each test's asserter, by the node id's part after
    the file (`test_dot[25]`, `TestLinalg::test_inv`), or why the file could not be collected."""

    def __init__(self, asserters: dict, problem: str | None):
        self.asserters, self.problem = asserters, problem


_collected: dict = {}  # (resolved test file, base, trusted dir) -> _Collected: each is collected once per compare


def _ini_dir(file: Path, base: Path) -> Path | None:
    """The directory of the suite's pytest ini between the file and `base`, as pytest_suite.plan finds suites."""
    for directory in file.parents:
        if pytest_suite._has_pytest_ini(directory):
            return directory
        if directory == base or not directory.is_relative_to(base):
            return None
    return None


def _collect(file: Path, base: Path, trusted: Path) -> _Collected:
    """Collects `file` with pytest as `run` collected it (the suite's ini and conftests, the same rootdir), then ends
    the session: no pytest session stays configured, and nothing is written into the suite (no cache, no bytecode).
    The modules it imported from the suite leave sys.modules and sys.path is restored, so the next suite's files of
    the same name import afresh. No conftest above `trusted` (the trusted directory holding file and base) loads."""
    # As the worker: an ini suite is its own rootdir (pytest finds the ini from the file); loose test files have the
    # path `run` was given as theirs. --confcutdir: pytest would otherwise load conftests from the ini's folder or
    # the rootdir down, and an ini above the trusted directory would reach out of it.
    ini_dir = _ini_dir(file, base)
    cut = ini_dir or trusted
    args = [str(file), f"--confcutdir={cut}", *([] if ini_dir else [f"--rootdir={base}"])]
    suite = pytest_suite.Suite(base, args, None, None)  # no role: no pass's xfail swap
    saved_path, saved_modules, saved_bytecode = list(sys.path), set(sys.modules), sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        items = suite.start()
        asserters = {item.nodeid.partition("::")[2]: pytest_suite.asserter(item)
                     for item in items if Path(item.path) == file}
        failed = [r for r in suite.collect_reports if not r.skipped]
        problem = None
        if failed:
            problem = f"pytest cannot collect {file}: {pytest_suite._last_line(pytest_suite._text(failed[0].longrepr))}"
        return _Collected(asserters, problem)
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException as exc:  # noqa: BLE001 - a suite pytest refuses (a bad ini, pytest.exit): its assert_eq fails
        return _Collected({}, f"pytest cannot collect {file}: {type(exc).__name__}: {exc}")
    finally:
        try:
            suite.finish()
        finally:
            sys.dont_write_bytecode = saved_bytecode
            sys.path[:] = saved_path
            for name in set(sys.modules) - saved_modules:
                module_file = getattr(sys.modules[name], "__file__", None)
                if module_file and Path(module_file).resolve().is_relative_to(cut):
                    del sys.modules[name]


def _failure(criterion: str, check_message: str, **details) -> dict:
    return {"criterion": criterion, "message": check_message, "details": {"criterion": criterion, **details}}


def find(meta: dict, scenario_id: str, named: list, bundled: str):
    """The asserter of a pytest scenario whose run recorded one (meta.assert_eq), read from its test in a trusted
    suite: (asserter, its qualified name, None), or (None, the recorded name, failure) when it cannot be run, the
    failure a dict {criterion, message, details} saying why."""
    recorded = meta.get("assert_eq") if isinstance(meta, dict) else None
    recorded = recorded if isinstance(recorded, str) else "the asserter"
    file, base, trusted, why = trust.trusted_test_file(meta, named, bundled)
    if file is None:
        return None, recorded, _failure(recorded, f"the asserter {recorded} of {scenario_id} was not run: {why}")
    if (file, base, trusted) not in _collected:
        _collected[file, base, trusted] = _collect(file, base, trusted)
    collected = _collected[file, base, trusted]
    if collected.problem is not None:
        return None, recorded, _failure(recorded, f"the asserter {recorded} of {scenario_id} was not run: "
                                                  f"{collected.problem}")
    test = scenario_id.partition("::")[2]
    if test not in collected.asserters:
        return None, recorded, _failure(recorded, f"the asserter {recorded} was not run: {file} holds no test "
                                                  f"{test!r} now (the suite changed since the run?)")
    fn = collected.asserters[test]
    if fn is None:
        return None, recorded, _failure(recorded, f"the asserter {recorded} was not run: the test {scenario_id} in "
                                                  f"{file} has no assert_eq(fn=...) mark now (the suite changed "
                                                  "since the run?)")
    return fn, pytest_suite._qualified(fn), None


class TimedOut(probe.DeadlineExceeded):
    """The asserter ran past the scenario's compare time limit: compare records the scenario as timeout."""


class _Alarm(BaseException):
    """Raised into a running asserter when its time is up; a BaseException, so that its `except Exception` lets it
    by (and raised again each second after, should it swallow one)."""


def _call_within_time_limit(fn, criterion: str, gold, candidate):
    """fn(gold, candidate), stopped by SIGALRM once the scenario's compare time (compare --timeout) is up: a hanging
    asserter would hang compare, whose own deadline is only checked in parity's loops. Raises TimedOut then. Only the
    main thread gets signals: elsewhere (never in compare) the asserter runs without a limit."""
    left = probe.remaining()
    if left is None or threading.current_thread() is not threading.main_thread():
        return fn(gold, candidate)
    out_of_time = TimedOut(f"the asserter {criterion} did not return within {max(left, 0):.3g} s (the rest of the "
                           f"scenario's compare time limit)")
    if left <= 0:
        raise out_of_time
    state = {"armed": True, "fired": False}

    def alarm(signum, frame):
        if state["armed"]:
            state["fired"] = True
            raise _Alarm()

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, left, 1.0)
            fn(gold, candidate)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            state["armed"] = False
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    except _Alarm:
        raise out_of_time from None
    if state["fired"]:  # it swallowed the alarm and returned late
        raise out_of_time


@contextlib.contextmanager
def _no_process_exit(criterion: str):
    """os._exit inside an asserter would end compare at once with the asserter's exit status, before any report is
    written: `os._exit(0)` would turn a nightly green. It raises instead while the asserter runs, failing its check."""
    real = os._exit

    def refused(status):
        raise RuntimeError(f"{criterion} called os._exit({status}); compare does not end for an asserter")

    os._exit = refused
    try:
        yield
    finally:
        os._exit = real


def call(fn, criterion: str, gold, candidate) -> dict | None:
    """Calls fn(gold, candidate): None when it returns, else the failure {criterion, message, details}. An
    AssertionError is the asserter's verdict, its text the message; anything else it raises is a bug in it and fails
    the check too, with its type and message. MemoryError, KeyboardInterrupt and TimedOut (past the scenario's
    compare time limit) are compare's own."""
    try:
        with _no_process_exit(criterion):
            _call_within_time_limit(fn, criterion, gold, candidate)
        return None
    except (KeyboardInterrupt, MemoryError, TimedOut):
        raise
    except BaseException as exc:  # noqa: BLE001 - pytest.fail() raises a BaseException: a failure like any other
        error = describe_exception(exc)
        text = str(exc).strip()
        if isinstance(exc, AssertionError):
            message = f"{criterion}(gold, candidate) failed: {text or 'AssertionError with no message'}"
        else:
            message = (f"{criterion}(gold, candidate) raised {error['type']}: {text} (an asserter fails by raising "
                       "AssertionError; anything else is a bug in it)")
        return _failure(criterion, message, type=error["type"], message=text, traceback=error["traceback"])
