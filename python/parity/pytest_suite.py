"""Pytest-style test files as parity scenarios: pytest collects and runs them, parity takes what each test returns."""
from __future__ import annotations

import contextlib
import fnmatch
import io
import os
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from parity._scenario import Skip, _check_options, describe_exception, format_param, seed_for

# The file names pytest collects by default (its `python_files`); a suite's ini may name others.
TEST_FILES = ("test_*.py", "*_test.py")
CONFTEST = "conftest.py"
# Where a suite's pytest settings live, and the section that makes a file count (README, "pytest suites").
_INI_SECTIONS = {"pytest.ini": None, "pyproject.toml": "[tool.pytest", "tox.ini": "[pytest]",
                 "setup.cfg": "[tool:pytest]"}

# The markers parity gives meaning to; cuDF's candidate-pass marker is accepted under its own name.
CANDIDATE_XFAIL_MARKERS = ("xfail_candidate", "xfail_cudf_pandas")
XFAIL_MARKERS = {"gold": ("xfail_gold",), "candidate": CANDIDATE_XFAIL_MARKERS, "compare": ("xfail_compare",)}
MARKERS = {
    "xfail_gold": "xfail_gold(reason=..., strict=...): the test is expected to fail under the gold backend",
    "xfail_candidate": "xfail_candidate(reason=..., strict=...): expected to fail under the candidate backend",
    "xfail_cudf_pandas": "xfail_cudf_pandas(...): cuDF's name for xfail_candidate",
    "xfail_compare": "xfail_compare(reason=..., strict=...): the compare of the two results is expected to fail",
    "assert_eq": "assert_eq(fn=...): compares the gold and candidate results with fn(gold, candidate)",
    "parity": "parity(rtol=, atol=, tolerances=, signed_zeros=, policy=, tags=): parity's scenario options",
}
# pytest's own plugins that would write into the user's suite or take the worker's output away from it. faulthandler's
# dump of a crash (40 lines and more) would push what the test printed last out of the crash report's tail.
_DISABLED_PLUGINS = ("faulthandler",)
# Plugins that stay loaded, since their options are common in a suite's addopts (-ra, -v, --tb, --junitxml,
# --cache-clear) and pytest refuses options nobody defines, but that must not write into the suite: unregistered once
# configured (Suite._quiet_writers).
_WRITING_PLUGINS = ("lfplugin", "nfplugin", "stepwiseplugin")


# The ini options parity reads itself (metadata's xfail_strict).
_INI_READ = ("xfail_strict",)


def _is_test_file(path: Path, patterns=TEST_FILES) -> bool:
    return any(fnmatch.fnmatch(path.name, p) for p in patterns)


# A decorator line of a native scenario module: `@parity.scenario` or `@scenario(...)`.
_DECLARES_SCENARIOS = re.compile(rb"^[ \t]*@[ \t]*(parity[ \t]*\.[ \t]*)?scenario\b", re.M)


def _is_pytest_file(path: Path) -> bool:
    """A test file or conftest that is pytest's: a `test_*.py` declaring @parity.scenario functions was a native
    scenario module before parity ran pytest suites, and stays one."""
    if path.name == CONFTEST:
        return True
    if not _is_test_file(path):
        return False
    try:
        return not _DECLARES_SCENARIOS.search(path.read_bytes())
    except OSError:
        return True  # pytest reports what it cannot read


def _has_pytest_ini(directory: Path) -> bool:
    for name, section in _INI_SECTIONS.items():
        ini = directory / name
        if ini.is_file():
            if section is None:
                return True
            try:
                if section in ini.read_text(encoding="utf-8", errors="replace"):
                    return True
            except OSError:
                continue
    return False


def _visible(path: Path, root: Path) -> bool:
    """As native discovery does: parts starting with '_' or '.' (caches, private helpers) are not scenarios."""
    return not any(part.startswith(("_", ".")) for part in path.relative_to(root).parts[:-1])


@dataclass
class SuitePlan:
    """How the files under the scenario paths split between pytest and native discovery."""

    sessions: list = field(default_factory=list)  # (base: the path ids are relative to, [pytest args])
    owned: set = field(default_factory=set)  # files native discovery must leave to pytest (str paths)
    dirs: list = field(default_factory=list)  # directories whose modules are pytest's (for import hooks)


def plan(paths) -> SuitePlan:
    """Finds the pytest suites among `paths`: a directory holding a pytest ini is a suite of its own (all of its
    .py files are pytest's), and test files and conftests elsewhere are pytest's, run from the path given."""
    found = SuitePlan()
    for path in (Path(p).resolve() for p in paths):
        if path.is_file():
            if _is_pytest_file(path):
                found.sessions.append((path.parent, [str(path), *_rootdir(path.parent)]))
                found.owned.add(str(path))
            continue
        if not path.is_dir():
            continue
        suites = sorted({f.parent for f in path.rglob("*") if f.name in _INI_SECTIONS and _visible(f, path)
                         and _has_pytest_ini(f.parent)})
        suites = [s for s in suites if not any(o != s and o in s.parents for o in suites)]  # outermost only
        loose, native_tests = [], []
        for file in sorted(path.rglob("*.py")):
            if not _visible(file, path) or file.name.startswith("_") and file.name != CONFTEST:
                continue
            if any(s == file.parent or s in file.parents for s in suites):
                found.owned.add(str(file))
            elif _is_pytest_file(file):
                found.owned.add(str(file))
                loose.append(file)
            elif _is_test_file(file):
                native_tests.append(file)  # pytest, given the directory, must leave it to native discovery
        found.sessions += [(path, [str(s)]) for s in suites]
        found.dirs += suites
        if any(f.name != CONFTEST for f in loose):
            ignored = [f"--ignore={p}" for p in (*suites, *native_tests)]
            found.sessions.append((path, [str(path), *ignored, *_rootdir(path)]))
            found.dirs += sorted({f.parent for f in loose})
    return found


def _rootdir(base: Path) -> list:
    """Without an ini of its own a session's rootdir (and so where conftests stop being loaded) would be the common
    ancestor of the suite and the working directory: the suite would collect differently from another directory.
    It is the directory given, as `cd DIR && pytest` has it; an ini above it still applies."""
    return [f"--rootdir={base}"]


def _node_path_id(base: Path, nodeid_path: Path) -> str:
    try:
        relative = nodeid_path.relative_to(base).as_posix()
    except ValueError:
        return nodeid_path.as_posix()
    return base.name if relative == "." else relative  # the suite is the directory given: its error is its name


def scenario_id(base: Path, item) -> str:
    """The pytest node id with its file part relative to the directory given: the same in every checkout."""
    _, sep, rest = item.nodeid.partition("::")
    return _node_path_id(base, Path(item.path)) + (sep + rest if sep else "")


def _text(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (file, line, "Skipped: reason")
        return longrepr[2]
    return str(longrepr) if longrepr is not None else ""


def _last_line(text: str) -> str:
    """The line of pytest's report that says what went wrong (its 'E   ' prefix dropped)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip().removeprefix("E").strip() if lines else text


def register_markers(config):
    """Declares parity's markers in a pytest config (a parity session's, or plain pytest's: parity.pytest_plugin)."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def swap_xfail_markers(items, role):
    """As cuDF's conftest does: the pass's own marker (xfail_gold in the gold pass, ...) becomes a real xfail, so
    that the suite's xfail_strict and the marker's own strict=, raises= and condition hold."""
    import pytest

    for item in items:
        for name in XFAIL_MARKERS.get(role, ()):
            mark = item.get_closest_marker(name)
            if mark is not None:
                item.add_marker(pytest.mark.xfail(*mark.args, **mark.kwargs))
                break


def call_test(pyfuncitem, execute):
    """(True, what the test returned) calling it with its fixtures through execute(fn, **kwargs); (False, None) for
    a coroutine, which pytest's own call refuses with its message."""
    import inspect

    fn = pyfuncitem.obj
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return False, None
    names = pyfuncitem._fixtureinfo.argnames
    return True, execute(fn, **{name: pyfuncitem.funcargs[name] for name in names})


def returned_none(test_id: str) -> str:
    """What parity says of a test that returned None."""
    return (f"{test_id} returned None: parity compares what a test returns, so it must return its result (a value, "
            "an array, a dict of them)")


# A scenario not yet told which test follows it (link()): its teardown keeps its module's and session's fixtures.
UNLINKED = object()


class _KeepParents:
    """What runtestprotocol's teardown is told comes next: the item's own parents, so that module, class and session
    fixtures stay set up for the next test this worker runs (teardown_exact(next) ends what that one does not share)."""

    def __init__(self, item):
        self._chain = item.listchain()[:-1]

    def listchain(self):
        return self._chain


class _ParityPlugin:
    """Registered in every pytest session parity starts: markers, the per-pass xfail swap and the return value."""

    def __init__(self, role, backend, suite):
        self.role, self.backend, self.suite = role, backend, suite
        self.results = {}  # nodeid -> what the test returned, materialized
        self.exceptions = {}  # (nodeid, when) -> the exception a phase raised

    def pytest_configure(self, config):
        register_markers(config)

    def pytest_ignore_collect(self, collection_path, config):
        crashed = self.suite.crashed
        if str(collection_path) in crashed or str(collection_path / CONFTEST) in crashed:
            return True  # a file, or a directory whose conftest, killed an earlier worker: reported, not imported
        return None

    def pytest_collectstart(self, collector):
        path = getattr(collector, "path", None)
        if self.suite.on_import is not None and path is not None and str(path).endswith(".py"):
            self.suite.on_import(str(path))

    def pytest_collectreport(self, report):
        if not report.passed:
            self.suite.collect_reports.append(report)

    def pytest_collection_modifyitems(self, session, config, items):
        swap_xfail_markers(items, self.role)

    def pytest_pyfunc_call(self, pyfuncitem):  # tryfirst: marked by _mark_hooks, as @pytest.hookimpl would
        import pytest

        try:
            called, outputs = call_test(pyfuncitem, self.backend.execute)
        except Skip as exc:  # a backend's parity.skip (one that runs only some scenarios) is pytest's skip here
            pytest.skip(str(exc))
        if called:
            self.results[pyfuncitem.nodeid] = self.backend.materialize(outputs)
        return called or None

    def pytest_runtest_makereport(self, item, call):
        if call.excinfo is not None:
            self.exceptions[(item.nodeid, call.when)] = call.excinfo.value


def _mark_hooks():
    """Marks _ParityPlugin's hooks with pytest's hook marker once, when the first suite starts: pluggy is imported
    only by a run that has a pytest suite, not by every worker and compare that imports this module."""
    from pluggy import HookimplMarker  # comes with pytest

    call = _ParityPlugin.pytest_pyfunc_call
    if not hasattr(call, "pytest_impl"):
        HookimplMarker("pytest")(tryfirst=True)(call)


@contextlib.contextmanager
def _no_terminal_summary(config):
    """The session ends without pytest_terminal_summary: the terminal reporter writes into the StringIO it was
    configured with (Suite.start), so every summary is output nobody reads, and plugins' summaries cost (Hypothesis's
    imports all of Hypothesis: ~0.8 s in each worker and compare) or write reports into the suite (pytest-cov's),
    which parity must not do. The hook's caller stays in place and only what runs its implementations is swapped:
    pluggy walks every caller when a plugin is registered or unregistered (a conftest's sessionfinish may), and a
    plain function there had made that an AttributeError."""
    caller = config.hook.pytest_terminal_summary
    run = caller._hookexec
    caller._hookexec = lambda name, implementations, kwargs, firstresult: []
    try:
        yield
    finally:
        caller._hookexec = run


class Suite:
    """One pytest session: its config, the collected items as scenarios, and the set-up state between tests."""

    def __init__(self, base: Path, args: list, role: str, backend, on_import=None, crashed=None):
        self.base, self.args, self.role = base, args, role
        # The scenario path the ids are relative to (a file given directly, else the directory given): a repro's
        # `--scenarios ROOT --only ID` finds the same id.
        self.root = args[0] if Path(args[0]).is_file() else str(base)
        self.on_import, self.crashed = on_import, crashed or {}
        self.collect_reports = []
        self.plugin = _ParityPlugin(role, backend, self)
        self.session = None

    def start(self):
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        _mark_hooks()  # before pytest registers the plugin
        if self.on_import is not None and self.initial_conftest.is_file():
            self.on_import(str(self.initial_conftest))  # imported while the config is made
        disabled = [arg for name in _DISABLED_PLUGINS for arg in ("-p", f"no:{name}")]
        # -s: what a test prints reaches the worker's output (a crash report shows it), as a scenario's does.
        config = _prepareconfig([*self.args, "-s", *disabled], plugins=[self.plugin])
        for name in _INI_READ:  # read by every test's metadata: a value pytest refuses is the suite's error
            try:
                config.getini(name)
            except Exception as exc:  # noqa: BLE001 - pytest's UsageError, ValueError
                raise ValueError(f"its ini option {name}: {exc}") from exc
        self.session = Session.from_config(config)
        if self.on_import is not None:
            self.session.gethookproxy = self._announcing(self.session.gethookproxy)
        # The terminal reporter writes to the stdout it finds when configured: its header and summary are not the
        # worker's output (nor `parity list`'s listing).
        with contextlib.redirect_stdout(io.StringIO()):
            config._do_configure()
        self._quiet_writers(config)
        config.hook.pytest_sessionstart(session=self.session)
        config.hook.pytest_collection(session=self.session)
        return self.session.items

    @staticmethod
    def _quiet_writers(config):
        """Unregisters what would write into the suite: the last-failed cache, stepwise's, a --junitxml file."""
        from _pytest.junitxml import xml_key

        for name in _WRITING_PLUGINS:
            plugin = config.pluginmanager.get_plugin(name)
            if plugin is not None:
                config.pluginmanager.unregister(plugin)
        xml = config.stash.get(xml_key, None)
        if xml is not None:
            del config.stash[xml_key]
            config.pluginmanager.unregister(xml)

    def _announcing(self, gethookproxy):
        """pytest imports a directory's conftests when it first asks for the hooks of a path under it, before any
        hook of ours runs there: each is announced (on_import) just before, so that a conftest whose import kills
        the worker is blamed, not the last test module."""
        announced = set()

        def hooks_for(fspath):
            path = Path(fspath)
            for directory in [path, *path.parents] if path.is_dir() else path.parents:
                conftest = directory / CONFTEST
                if str(conftest) not in announced and conftest.is_file():
                    announced.add(str(conftest))
                    self.on_import(str(conftest))
                if directory == self.base:
                    break
            return gethookproxy(fspath)

        return hooks_for

    @property
    def initial_conftest(self) -> Path:
        """The conftest pytest imports before collecting: the one beside the path the session is given."""
        first = Path(self.args[0])
        return (first if first.is_dir() else first.parent) / CONFTEST

    def path_of(self, report) -> Path:
        """The file or directory a collect report is about: its node id is relative to the session's rootdir."""
        return (Path(self.session.config.rootpath) / report.nodeid.partition("::")[0]).resolve()

    def finish(self):
        """Tears down what is still set up (module and session fixtures) and ends the session as pytest would."""
        if self.session is None:
            return
        session, self.session = self.session, None
        try:
            session._setupstate.teardown_exact(None)
        finally:
            with _no_terminal_summary(session.config):
                session.config.hook.pytest_sessionfinish(session=session, exitstatus=0)
            session.config._ensure_unconfigure()

    def run(self, item, scenario_id: str) -> dict:
        """Runs `item`'s setup and call phases, as pytest's runtestprotocol does; its teardown is teardown()'s, run
        once the worker has written what the test returned: a fixture's teardown may change that very object (zero
        a buffer, drop a column), and what is recorded must be what the test returned (cuDF's harness pickles it
        before the teardown too)."""
        from _pytest.runner import call_and_report

        # This worker's last test may not have been the one the selection put before this one (another worker or
        # shard ran that): what it left set up that this one does not share ends now.
        try:
            self.session._setupstate.teardown_exact(item)
            left = None
        except Exception as exc:  # noqa: BLE001 - reported on this test below, never dropped
            left = describe_exception(exc)
        if hasattr(item, "_request") and not item._request:
            item._initrequest()  # run again in this worker (teardown() dropped its request), as pytest-rerunfailures
        reports = [call_and_report(item, "setup", log=False)]
        if reports[0].passed and not item.config.getoption("setuponly", False):
            reports.append(call_and_report(item, "call", log=False))
        outcome = self._outcome(item, scenario_id, reports)
        if left is not None and outcome["status"] in ("ok", "skip"):
            left["message"] = ("before it ran, the teardown of fixtures an earlier test in this worker left set up "
                               f"failed: {left['message']}")
            outcome = {"status": "error", "error": left}
        return outcome

    def teardown(self, item, nextitem=UNLINKED):
        """Runs `item`'s teardown phase; `nextitem` is the test that follows it in the selection (None: the last of
        this session), whose needs decide what the teardown ends, as in a pytest session: a module fixture's failing
        teardown is the error of its module's last test. Unlinked, everything stays set up for whatever comes next.
        Returns the outcome a failing teardown gives (an error saying `in teardown:`), else None."""
        from _pytest.runner import call_and_report

        if item.session.shouldfail or item.session.shouldstop:
            nextitem = None  # as runtestprotocol: a session about to stop tears everything down
        try:
            report = call_and_report(item, "teardown", log=False,
                                     nextitem=_KeepParents(item) if nextitem is UNLINKED else nextitem)
        finally:  # as runtestprotocol: the test's fixture values and request go, whatever the teardown did
            if hasattr(item, "_request"):
                item._request = False
                item.funcargs = None
        return self._error(item, report) if report.failed else None

    def _error(self, item, report) -> dict:
        exc = self.plugin.exceptions.pop((item.nodeid, report.when), None)
        error = describe_exception(exc) if exc is not None else {"type": "Failed", "message": "", "traceback": ""}
        text = _text(report.longrepr)
        error["traceback"] = text or error["traceback"]
        if not error["message"]:
            error["message"] = _last_line(text)
        if report.when != "call":
            error["message"] = f"in {report.when}: {error['message']}"
        return {"status": "crash" if isinstance(exc, MemoryError) else "error", "error": error}

    def _outcome(self, item, scenario_id: str, reports) -> dict:
        result = self.plugin.results.pop(item.nodeid, None)
        failed = next((r for r in reports if r.failed), None)
        skipped = next((r for r in reports if r.skipped), None)
        xfailed = getattr(skipped, "wasxfail", None) if skipped is not None else None
        if failed is not None:
            if failed.when == "call" and "XPASS(strict)" in _text(failed.longrepr):
                return {"status": "xpass", "error": {"type": "XPASS", "message": _text(failed.longrepr),
                                                     "traceback": ""}}
            return self._error(item, failed)
        if skipped is not None:
            reason = _text(skipped.longrepr)
            if xfailed is not None:  # as a native scenario's xfail: what it raised, and why that was expected
                error = self._error(item, skipped)["error"]
                return {"status": "xfail", "error": dict(error, reason=xfailed or "marked xfail")}
            return {"status": "skip", "error": {"type": "Skipped", "message": reason.removeprefix("Skipped: "),
                                                "traceback": ""}}
        if result is None:
            return {"status": "error", "error": {
                "type": "ReturnedNone", "traceback": "",
                "message": returned_none(scenario_id)}}
        return {"status": "ok", "outputs": result}


@dataclass
class PytestScenario:
    """One collected pytest item, run through pytest's own set-up, call and teardown."""

    id: str
    item: object
    suite: Suite
    next_item: object = UNLINKED  # set by link()
    # Nothing it changes in the worker is put back after it (isolation.call_isolated): pytest does not isolate a
    # suite's tests, and its session and module fixtures, set up in the first test of their scope, must keep what
    # they set for the rest of it (README, "Scenario isolation").
    isolated = False
    _metadata: dict = field(default=None, init=False, repr=False, compare=False)  # metadata(), made once

    @property
    def seed(self) -> int:
        return seed_for(self.id)

    @property
    def source(self) -> str:
        return str(self.item.path)

    def keyword_names(self) -> set:
        from _pytest.mark import KeywordMatcher

        return set(KeywordMatcher.from_item(self.item)._names) | {self.id}

    def _options(self, compare) -> dict:
        """The native scenario options its marks give; `compare` is compare_xfail's answer for it."""
        mark = self.item.get_closest_marker("parity")
        kwargs = dict(mark.kwargs) if mark is not None else {}
        timeout = self.item.get_closest_marker("timeout")  # pytest-timeout's marker, read without the plugin
        return _check_options(kwargs.get("rtol"), kwargs.get("atol"), kwargs.get("tolerances"),
                              kwargs.get("signed_zeros", False), kwargs.get("policy"), kwargs.get("tags"),
                              {"compare": compare[0]} if compare is not None else None, _timeout_of(timeout))

    def metadata(self) -> dict:
        """Made once, at collection (its marks and ini settings are fixed by then); a copy each time: the worker
        asks again at every run of the test, for its xfail."""
        if self._metadata is None:
            self._metadata = self._declared()
        return dict(self._metadata)

    def _declared(self) -> dict:
        item = self.item
        callspec = getattr(item, "callspec", None)
        params = {k: format_param(v) for k, v in callspec.params.items()} if callspec is not None else {}
        compare = compare_xfail(item)
        strict = compare[1] if compare is not None else None
        fn = asserter(item)
        path, line, _ = item.location
        return {
            "kind": "pytest",
            "nodeid": self.id,
            "module": self.id.partition("::")[0],
            "function": getattr(item, "originalname", item.name),
            "params": params,
            **self._options(compare),
            "xfail_strict": bool(item.config.getini("xfail_strict") if strict is None else strict),
            "assert_eq": _qualified(fn) if fn is not None else None,
            "source": self.source,
            "root": self.suite.root,
            "line": (line or 0) + 1,
        }

    def call(self, backend) -> dict:
        """Runs the test's setup and call; never raises except KeyboardInterrupt (as Scenario.call). The worker
        calls finish() after it has written the outcome's outputs."""
        import numpy

        numpy.random.seed(self.seed % 2**32)  # tests that draw from the global generators are reproducible too
        random.seed(self.seed)
        return _guarded(lambda: self.suite.run(self.item, self.id))

    def finish(self, status: str):
        """Runs the test's teardown, whatever its call gave (a failed setup's fixtures are torn down too); never
        raises except KeyboardInterrupt. Returns None when the worker's record (of `status`) stands, else the
        outcome that replaces it: a failing teardown is the error of a test that no earlier phase failed (as pytest
        reports it), and a teardown out of memory is a crash, after which the worker retires."""
        failure = _guarded(lambda: self.suite.teardown(self.item, self.next_item), "teardown")
        if failure is None:
            return None
        if status in _TEARDOWN_DECIDES or (failure["status"] == "crash" and status != "crash"):
            return failure
        return None


# The statuses a failing teardown turns into its error: those of a test no earlier phase failed.
_TEARDOWN_DECIDES = ("ok", "skip", "xfail")


def _guarded(phase, when=None):
    """What `phase` returns, or the outcome of what it raised (its message saying `in WHEN:` for a phase other than
    the call): pytest's own failure (its Exit, an exception its machinery let through) is this test's error, never
    the worker's end; MemoryError is a crash."""
    try:
        return phase()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - pytest's own failure is this scenario's error
        error = describe_exception(exc)
        if when is not None:
            error["message"] = f"in {when}: {error['message']}"
        return {"status": "crash" if isinstance(exc, MemoryError) else "error", "error": error}


def compare_xfail(item):
    """(reason, strict or None) of the xfail_compare mark that applies to the test, None when none does: its
    conditions (`xfail_compare(sys.platform == "win32", reason=...)`, strings too) are evaluated as pytest evaluates an
    xfail's (_pytest.skipping.evaluate_xfail_marks), since the compare pass has no pytest to do it."""
    from _pytest.outcomes import OutcomeException
    from _pytest.skipping import evaluate_condition

    for mark in item.iter_markers(name="xfail_compare"):
        conditions = (mark.kwargs["condition"],) if "condition" in mark.kwargs else mark.args
        try:
            applies = [evaluate_condition(item, mark, c) for c in conditions]
        except OutcomeException as exc:  # pytest.fail from a condition that does not evaluate: this test's error
            raise ValueError(f"xfail_compare: {exc.msg}") from None
        if not conditions:
            return str(mark.kwargs.get("reason") or "marked xfail_compare"), mark.kwargs.get("strict")
        true = next((reason for result, reason in applies if result), None)
        if true is not None:
            return str(true or mark.kwargs.get("reason") or "marked xfail_compare"), mark.kwargs.get("strict")
    return None


def asserter(item):
    """The fn of the test's closest assert_eq mark (`fn=`, or its first argument), or None; compare calls it
    (parity.asserters)."""
    mark = item.get_closest_marker("assert_eq")
    if mark is None:
        return None
    return mark.kwargs.get("fn", mark.args[0] if mark.args else None)


def _timeout_of(mark):
    """The seconds of pytest-timeout's marker, `timeout(5)` or `timeout(timeout=5)`; None without one."""
    if mark is None:
        return None
    return mark.args[0] if mark.args else mark.kwargs.get("timeout")


def _qualified(fn) -> str:
    return f"{getattr(fn, '__module__', '') or ''}.{getattr(fn, '__qualname__', repr(fn))}".lstrip(".")


@dataclass
class CollectedSkip:
    """A test file that pytest skipped as a whole while collecting it (importorskip, a module-level skip)."""

    id: str
    source: str
    reason: str

    def keyword_names(self) -> set:
        return {self.id}

    def metadata(self) -> dict:
        return {"kind": "pytest", "nodeid": self.id, "module": self.id, "function": "", "params": {},
                **_check_options(None, None, None, False, None, None, None), "source": self.source, "line": 0}

    def call(self, backend) -> dict:
        return {"status": "skip", "error": {"type": "Skipped", "message": self.reason, "traceback": ""}}


def link(scenarios):
    """Tells each pytest scenario which test of its session follows it among `scenarios` (the selection, in
    order), so that running them in order sets up and tears down fixtures exactly as one pytest session would."""
    last = {}
    for scenario in scenarios:
        if isinstance(scenario, PytestScenario):
            before = last.get(id(scenario.suite))
            if before is not None:
                before.next_item = scenario.item
            scenario.next_item = None
            last[id(scenario.suite)] = scenario


_suites: list = []  # the sessions this process started, finished by finish_all()


# Directories whose modules are a pytest suite's (test modules, conftests, their helpers): a transparent proxy's
# import hook treats them as scenario modules (discovery.is_scenario_module).
SUITE_DIRS: list = []


def collect(paths, role: str, backend, on_import=None, crashed=None, module_error=None):
    """(scenarios, module errors) from the pytest suites among `paths`, one pytest session per suite."""
    found = plan(paths)
    SUITE_DIRS.extend(d for d in found.dirs if d not in SUITE_DIRS)
    scenarios, errors = [], []
    for base, args in found.sessions:
        suite = Suite(base, args, role, backend, on_import, crashed)
        if str(suite.initial_conftest) in (crashed or {}):
            continue  # its error is below, with the other files whose import killed a worker
        _suites.append(suite)
        try:
            items = suite.start()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a suite pytest refuses (a bad ini, addopts) is its error alone
            # pytest.skip/importorskip, pytest.exit or sys.exit in the conftest beside the path: BaseExceptions.
            from _pytest.outcomes import Skipped

            rid = _node_path_id(base, Path(args[0]))
            if isinstance(exc, Skipped):
                scenarios.append(CollectedSkip(rid, args[0], str(exc.msg)))
            else:
                errors.append(module_error(rid, args[0], _refusal(args[0], exc)))
            continue
        for item in items:
            scenario = PytestScenario(scenario_id(base, item), item, suite)
            try:  # its marks' options (parity(rtol=...), timeout) are checked here, as a native scenario's are
                scenario.metadata()
            except Exception as exc:  # noqa: BLE001 - that test's error, never the worker's end
                errors.append(module_error(scenario.id, str(item.path), describe_exception(exc)))
                continue
            scenarios.append(scenario)
        for report in suite.collect_reports:
            source = suite.path_of(report)
            rid = _node_path_id(base, source)
            if report.skipped:
                scenarios.append(CollectedSkip(rid, str(source), _text(report.longrepr).removeprefix(
                    "Skipped: ")))
            else:
                text = _text(report.longrepr)
                errors.append(module_error(rid, str(source),
                                           {"type": "CollectError", "message": _last_line(text), "traceback": text}))
    for file, how in (crashed or {}).items():
        if file in found.owned or Path(file).name == CONFTEST:
            base = next((b for b, _ in found.sessions if Path(file).is_relative_to(b)), Path(file).parent)
            message = f"importing it killed the worker process ({how}); it was not imported again"
            errors.append(module_error(_node_path_id(base, Path(file)), file,
                                       {"type": "Crash", "message": message, "traceback": ""}))
    return found.owned, scenarios, errors


def _refusal(suite: str, exc: BaseException) -> dict:
    """The error of a suite pytest would not start: its complaint (the `error:` lines of a usage error, whose
    usage line says nothing) and the suite's path."""
    error = describe_exception(exc)
    said = [line.strip() for line in str(exc).splitlines() if "error:" in line]
    complaint = "; ".join(said) if said else error["message"]
    error["message"] = f"pytest refused the suite {suite}: {complaint}"
    return error


def finish_all():
    """Ends every session this process started (fixture teardown, sessionfinish); the worker calls it last."""
    while _suites:
        _suites.pop().finish()
