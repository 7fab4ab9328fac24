"""Finds scenario modules under the given paths, imports each by file path, and expands scenarios."""
from __future__ import annotations

import contextlib
import gc
import importlib.util
import inspect
import json
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

from parity import _scenario, pytest_suite
from parity._scenario import Scenario, describe_exception

# Scenario modules live under this package name so that a file called fft.py or random.py never
# shadows a real module; ids still use the bare module name.
PACKAGE = "parity_scenarios"


@dataclass
class ModuleError:
    """A scenario module that could not be imported, or that declared something invalid."""

    module: str
    source: str
    error: dict

    @property
    def id(self) -> str:
        return self.module

    def metadata(self) -> dict:
        return {"module": self.module, "source": self.source, "kind": "module"}

    def keyword_names(self) -> set:
        return {self.id}


@dataclass
class Discovery:
    scenarios: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # ModuleError, one per module that failed
    # scenario id -> (module file, part): where `parity run` routes it (plan_entries); pytest's: ("", -1)
    routes: dict = field(default_factory=dict)


@dataclass
class Module:
    """One native scenario module as a part of the discovery found it: `index` in the order of all modules, and
    either its import error or its scenarios with where each is defined, not yet admitted (merge does that)."""

    index: int
    name: str
    source: str
    error: dict = None
    scenarios: list = field(default_factory=list)  # (scenario, "file:line")


@dataclass
class Part:
    """What one worker of `parity run -j N` imported (discover_part): every N-th native module, and for part 0 the
    pytest suites. Part 0 of 1 is the whole discovery."""

    part: int
    parts: int
    modules: list = field(default_factory=list)
    tests: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # pytest's module errors


class Found:
    """A scenario another worker imported: what selection and the plan need of it (merge), without its function."""

    def __init__(self, entry: dict):
        self.id, self.source, self._meta, self._keywords = entry["id"], entry["source"], entry["meta"], entry["keywords"]

    def metadata(self) -> dict:
        return self._meta

    def keyword_names(self) -> set:
        return set(self._keywords)


def _module_files(paths, pytest_owned=frozenset()):
    """(root, file) of each native scenario module: the files pytest owns (pytest_suite.plan) are not."""
    for path in paths:
        path = Path(path).resolve()
        if path.is_file():
            if str(path) not in pytest_owned:
                yield path.parent, path
        elif path.is_dir():
            for file in sorted(path.rglob("*.py")):
                if not any(part.startswith(("_", ".")) for part in file.relative_to(path).parts) \
                        and str(file) not in pytest_owned:
                    yield path, file
        else:
            raise FileNotFoundError(f"scenario path does not exist: {path}")


def is_scenario_module(module_globals) -> bool:
    """Whether the module with these globals is scenario code: a native scenario module, or a module of a pytest
    suite (test module, conftest, helper). A transparent proxy's import hook (fixtures/fsproxy.py) proxies what
    these import, as cudf.pandas proxies what user code imports."""
    module_globals = module_globals or {}
    name = module_globals.get("__name__") or ""
    if name == PACKAGE or name.startswith(PACKAGE + "."):
        return True
    file = module_globals.get("__file__")
    if not file or not pytest_suite.SUITE_DIRS:
        return False
    path = Path(file)
    return any(path.is_relative_to(d) for d in pytest_suite.SUITE_DIRS)


def _module_name(root: Path, file: Path) -> str:
    return ".".join(file.relative_to(root).with_suffix("").parts)


def _ensure_package():
    if PACKAGE not in sys.modules:
        pkg = types.ModuleType(PACKAGE)
        pkg.__path__ = []
        sys.modules[PACKAGE] = pkg


@contextlib.contextmanager
def _blas_threads_sleep_at_once():
    """OPENBLAS_THREAD_TIMEOUT=4 while scenario modules import (unless the user set it): an OpenBLAS loaded then,
    SciPy's own above all, has its idle threads sleep at once instead of spinning about 0.1 s after every call, as
    NumPy's already do (src/parity/embed/interpreter.cc). OpenBLAS reads it once, at load; what BLAS computes does
    not depend on it. The spinning cost about a tenth of the bundled corpus's CPU, and under `run -j 2` it took the
    other worker's core (bench/README, target 3). Taken out again before any scenario runs: scenarios and what they
    start see the environment they were given."""
    name = "OPENBLAS_THREAD_TIMEOUT"
    if name in os.environ:
        yield
        return
    os.environ[name] = "4"  # os.environ's putenv: the C environment OpenBLAS reads
    try:
        yield
    finally:
        if os.environ.get(name) == "4":
            del os.environ[name]


def _import(name: str, file: Path):
    _ensure_package()
    qualified = f"{PACKAGE}.{name}"
    spec = importlib.util.spec_from_file_location(qualified, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[qualified]
        raise
    return module


def _load_module(index: int, name: str, file: Path) -> Module:
    module = Module(index, name, str(file))
    del _scenario._collected[:]
    try:
        _import(name, file)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - a broken module must not stop the others
        module.error = describe_exception(exc)
        return module
    finally:
        collected = list(_scenario._collected)
        del _scenario._collected[:]
    for fn, params, options in collected:
        # What inspect.getsourcelines(fn)[1] returns (the first decorator's line), without tokenizing the module
        # once per function: that made discovery quadratic in a module's length (a quarter of a 5,000-scenario run).
        code = getattr(inspect.unwrap(fn), "__code__", None)
        line = code.co_firstlineno if code is not None else 0
        module.scenarios.append((Scenario(name, fn.__name__, fn, params, options, str(file), line), f"{file}:{line}"))
    return module


def _admit(scenario, module: str, where: str, found: Discovery, seen: dict):
    """Adds `scenario` unless its id is taken: a duplicate is an error under its own module (or test file), never
    under the id it duplicates, and names where the id was first defined."""
    if scenario.id in seen:
        msg = f"duplicate scenario id {scenario.id!r}: also defined in {seen[scenario.id]}"
        found.errors.append(ModuleError(module, scenario.source, {"type": "DuplicateScenario", "message": msg,
                                                                  "traceback": ""}))
        return False
    seen[scenario.id] = where
    found.scenarios.append(scenario)
    return True


def discover(paths, on_import=None, crashed=None, backend=None) -> Discovery:
    """Imports every scenario module under `paths` (files or directories, in sorted order) and collects the pytest
    suites among them with pytest (parity.pytest_suite), whose tests `backend` (the loaded one) will run.

    `on_import(file)` is called before each import: a process whose import kills it (a segfaulting extension)
    has said which file did. `crashed` maps such files to how their import ended; they are not imported again
    but reported as module errors, so that the rest still runs.
    """
    return merge(discover_part(paths, 0, 1, on_import, crashed, backend))


def discover_part(paths, part: int, parts: int, on_import=None, crashed=None, backend=None, freeze=False) -> Part:
    """Part `part` of `parts` of discover(): the native modules whose index in the order of all is `part` modulo
    `parts` and, for part 0, the pytest suites. `parity run -j N` has each of its N workers import one part at once,
    so that none imports every module; merge() puts the parts together as discover() would have found them.

    `freeze` (a fork server's, which gc.freeze()s everything it holds before each fork anyway: fork_server.cc) freezes
    what is loaded before the imports and each native module once imported, so that the collections its imports
    trigger do not traverse the backend, NumPy and every module imported before it again: at 5,000 scenarios in 100
    modules that had been a fifth of the discovery's instructions (345M to 276M), on the serial part of
    `parity run -j N` (bench/README, issue #20 target 3)."""
    with _blas_threads_sleep_at_once():
        return _discover_part(paths, part, parts, on_import, crashed or {}, backend, freeze)


def _discover_part(paths, part: int, parts: int, on_import, crashed: dict, backend, freeze=False) -> Part:
    for path in paths:
        if not Path(path).exists():
            raise FileNotFoundError(f"scenario path does not exist: {Path(path).resolve()}")
    found = Part(part, parts)
    if part == 0:
        owned, found.tests, found.errors = pytest_suite.collect(paths, getattr(backend, "role", None), backend,
                                                                on_import, crashed, ModuleError)
    else:
        owned = pytest_suite.plan(paths).owned
    if freeze:
        gc.freeze()
    for index, (root, file) in enumerate(_module_files(paths, owned)):
        if index % parts != part:
            continue
        name = _module_name(root, file)
        if str(file) in crashed:
            message = f"importing it killed the worker process ({crashed[str(file)]}); it was not imported again"
            found.modules.append(Module(index, name, str(file), {"type": "Crash", "message": message, "traceback": ""}))
            continue
        if on_import is not None:
            on_import(str(file))
        found.modules.append(_load_module(index, name, file))
        if freeze:
            gc.freeze()
    return found


def part_payload(found: Part) -> dict:
    """What merge() needs of another worker's part, JSON-able: each module's error or its scenarios' ids, metadata,
    -k names and where each is defined."""
    def entry(scenario, where):
        return {"id": scenario.id, "source": scenario.source, "where": where, "meta": scenario.metadata(),
                "keywords": sorted(scenario.keyword_names())}

    return {"modules": [{"index": m.index, "name": m.name, "source": m.source, "error": m.error,
                         "scenarios": [entry(s, where) for s, where in m.scenarios]} for m in found.modules]}


def _payload_module(entry: dict) -> Module:
    return Module(entry["index"], entry["name"], entry["source"], entry["error"],
                  [(Found(s), s["where"]) for s in entry["scenarios"]])


def merge(local: Part, others=()) -> Discovery:
    """The discovery of every module: `local` (this worker's part, with the pytest suites) and the other parts'
    part_payload()s, in the order of all modules, ids admitted as one process importing them in order would."""
    modules = {m.index: m for m in local.modules}
    for payload in others:
        modules.update((m.index, m) for m in map(_payload_module, payload["modules"]))
    found, seen = Discovery(), {}
    order = sorted(modules)
    for position, index in enumerate(order):
        module = modules[index]
        if module.error is not None:
            found.errors.append(ModuleError(module.name, module.source, module.error))
            continue
        # Workers that imported every N-th module each run what they imported. When this process imported them all
        # (a fork server's discovery), each worker takes a contiguous run of the modules instead: neighbours in name
        # order share libraries and what those start lazily in the process that runs them (joblib_parallel and
        # known_bugs one loky pool of three processes, not one in each worker; bench/README, target 3).
        part = index % local.parts if others else position * local.parts // len(order)
        for scenario, where in module.scenarios:
            if _admit(scenario, module.name, where, found, seen):
                found.routes[scenario.id] = (module.source, part)
    for test in local.tests:
        _admit(test, test.id.partition("::")[0], test.source, found, seen)
    found.errors += local.errors
    return found


def runnable(found: Part) -> dict:
    """{(module file, id): scenario} of what this worker imported itself; pytest's under the file ""."""
    table = {}
    for module in found.modules:
        for scenario, _ in module.scenarios:
            table.setdefault((module.source, scenario.id), scenario)
    for test in found.tests:
        table.setdefault(("", test.id), test)
    return table


def native_modules(paths) -> list:
    """(root, file) of each native scenario module under `paths`: what discover() imports, the pytest suites' aside."""
    return list(_module_files(paths, pytest_suite.plan(paths).owned))


def import_module(root: Path, file: Path) -> Module:
    """The native scenario module `file` under `root` (an entry of native_modules), imported now under the name
    discover() gives it; its error, if its import failed, in .error."""
    with _blas_threads_sleep_at_once():
        return _load_module(-1, _module_name(root, file), file)


def import_for_run(paths, file: str) -> dict:
    """{(file, id): scenario} of the native module `file`, imported now: a worker sent a scenario of a module
    another part imported (its own part is done, or it replaced a worker that died)."""
    entry = next((e for e in native_modules(paths) if str(e[1]) == file), None)
    if entry is None:
        raise FileNotFoundError(f"no scenario module {file} under the scenario paths")
    module = import_module(*entry)
    if module.error is not None:
        raise ImportError(f"importing {file} failed here: {module.error.get('message', '')}")
    return runnable(Part(0, 1, [module]))


def plan_entries(found: Discovery) -> list:
    """[{id, meta, file, part}] of the selected scenarios, in order: what `parity run` dispatches (runner.cc)."""
    return [_plan_entry(found, scenario) for scenario in found.scenarios]


def _plan_entry(found: Discovery, scenario) -> dict:
    file, part = found.routes.get(scenario.id, ("", -1))
    return {"id": scenario.id, "meta": scenario.metadata(), "file": file, "part": part}


def plan_text(entries: list):
    """plan_entries' `entries` as JSON text for the worker's ready reply to carry as it is, in the form nlohmann's
    compact dump writes (keys sorted, no spaces), which the supervisor reads without building the plan's documents
    where it can prove them the same (src/parity/run/protocol.h, read_plain_ready); valid UTF-8 as
    _scenario.json_text's. None where JSON has no text for them (a NaN in a declaration) or their keys do not sort
    (mixed types): the worker then converts them as any metadata (and refuses a NaN). At 5,000 scenarios the plan is 1.5 MB:
    parsed into C++ JSON and dumped again, it had cost the serial part of `parity run -j N` about 60 ms of CPU
    (bench/README, issue #20 target 3)."""
    try:
        text = _json_text(entries)
    except (ValueError, TypeError):
        return None
    return _scenario.valid_utf8(text)


def _json_text(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":"))


_DEFAULT_OPTIONS = _scenario.default_options()  # the options of a scenario declared with none (plan_text_of)


def _declared_plainly(scenario, part) -> bool:
    """Whether plan_text_of may write `scenario`'s entry from its template: a Scenario with every option at its
    default, each of the type json.dumps writes as the template does (0 compares equal to False, but is written 0)."""
    if type(scenario) is not Scenario or scenario.options != _DEFAULT_OPTIONS:
        return False
    options = scenario.options
    return (options["signed_zeros"] is False and type(options["tags"]) is list and type(options["tolerances"]) is dict
            and type(options["policy"]) is dict and type(options["xfail"]) is dict and type(scenario.line) is int
            and type(part) is int)


def plan_text_of(found: Discovery):
    """plan_text(plan_entries(found)), made without building the entries: a scenario declared with no options (most
    of them) has its entry's text filled in from the fields that differ, the others' are dumped as plan_text dumps
    them. At 5,000 scenarios the entries and their dump had taken 35-45 ms of the serial start of `parity run -j N`,
    this ~10 ms (bench/README, issue #20 target 3). None where plan_text gives None, and where a text field is not a
    str (discovery makes them so): the worker then converts the entries as any metadata."""
    encode = json.encoder.encode_basestring  # what json.dumps writes a str with when ensure_ascii is False
    by_module = {}  # (module, source, file) -> those three encoded: shared by every scenario of a module
    texts = []
    try:
        for scenario in found.scenarios:
            file, part = found.routes.get(scenario.id, ("", -1))
            if not _declared_plainly(scenario, part):
                texts.append(_json_text(_plan_entry(found, scenario)))
                continue
            key = (scenario.module, scenario.source, file)
            module, source, file_text = by_module.get(key) or by_module.setdefault(key, tuple(map(encode, key)))
            params = _json_text({k: _scenario.format_param(v) for k, v in scenario.params.items()}) \
                if scenario.params else "{}"
            # plan_text's text of the entry: its keys sorted, _DEFAULT_OPTIONS' values among them.
            texts.append(f'{{"file":{file_text},"id":{encode(scenario.id)},"meta":{{"atol":null,"function":'
                         f'{encode(scenario.function)},"line":{scenario.line},"module":{module},"params":{params},'
                         f'"policy":{{}},"rtol":null,"signed_zeros":false,"source":{source},"tags":[],"timeout":null,'
                         f'"tolerances":{{}},"xfail":{{}}}},"part":{part}}}')
    except (ValueError, TypeError):
        return None
    return _scenario.valid_utf8("[" + ",".join(texts) + "]")


class SelectionError(ValueError):
    """A selection refused before anything runs: a usage error (exit 2: a malformed -k expression, an --only id that no
    scenario has) or, with `no_tests`, one that selects nothing (exit 5, pytest's "no tests collected")."""

    def __init__(self, message: str, no_tests: bool = False):
        super().__init__(message)
        self.no_tests = no_tests

    @property
    def exit_code(self) -> int:
        """For `python -m parity list`; the binary maps no_tests itself (src/parity/base/outcome.h, ExitCode)."""
        return 5 if self.no_tests else 2


def keyword_filter(keyword: str):
    """The predicate of the -k expression `keyword` over an item's keyword_names(), None for an empty one (pytest too
    selects everything then). pytest's own parser and matcher: `-k "fft and not real"` means what it means there."""
    keyword = keyword.strip()
    if not keyword:
        return None
    from _pytest.mark import KeywordMatcher
    from _pytest.mark.expression import Expression
    from pytest import UsageError

    try:
        expression = Expression.compile(keyword)
    except SyntaxError as exc:
        raise SelectionError(f"-k {keyword!r} is not a keyword expression: at column {exc.offset}: {exc.msg} "
                             "(to select one scenario by its exact id, give it with --only)") from None

    def keep(item) -> bool:
        try:
            return expression.evaluate(KeywordMatcher(item.keyword_names()))
        except UsageError as exc:  # the grammar's `name(arg=value)`, which only -m gives a meaning
            raise SelectionError(f"-k {keyword!r}: {exc}") from None

    return keep


def _describe(only, keyword: str) -> str:
    return " ".join([*(f"--only {i}" for i in only), *([f"-k {keyword.strip()!r}"] if keyword.strip() else [])])


def select(found: Discovery, only=(), keyword: str = "", paths=()) -> Discovery:
    """Keeps the scenarios (and module errors) whose id is in `only`, when given, and that the -k expression `keyword`
    selects. Raises SelectionError for a malformed expression, when `paths` (named in the message) hold nothing at
    all, when an `only` id names nothing, and when nothing is left: an empty run must never pass."""
    matches = keyword_filter(keyword) or (lambda item: True)
    where = ", ".join(map(str, paths)) or "the scenario paths"
    everything = [*found.scenarios, *found.errors]
    if not everything:
        raise SelectionError(f"no scenario found in {where} (is it the right directory?)", no_tests=True)
    known = {item.id for item in everything}
    unknown = next((i for i in only if i not in known), None)
    if unknown is not None:
        raise SelectionError(f"no scenario has the id '{unknown}' (see 'parity list')")
    wanted = set(only)
    keep = lambda item: (not wanted or item.id in wanted) and matches(item)  # noqa: E731
    selected = Discovery([s for s in found.scenarios if keep(s)], [e for e in found.errors if keep(e)], found.routes)
    if not selected.scenarios and not selected.errors:
        broken = f" and {len(found.errors)} broken modules" if found.errors else ""
        raise SelectionError(f"{_describe(only, keyword)} selects none of the {len(found.scenarios)} scenarios{broken} "
                             f"in {where} (see 'parity list')", no_tests=True)
    pytest_suite.link(selected.scenarios)  # pytest's fixtures end where the selection leaves their scope
    return selected


# Libraries scenarios commonly use (module -> the name the manifest gives it): a run records the versions of those it
# imported (environment.libraries), so that an install that changed one is visible in the reports.
LIBRARIES = {"pandas": "pandas", "scipy": "scipy", "sklearn": "scikit-learn", "pyarrow": "pyarrow"}


def library_versions(extra=()) -> dict:
    """{name: version} of LIBRARIES and the `extra` modules a backend names (its LIBRARIES), for those already in
    sys.modules: asking never imports one."""
    found = {}
    for module, name in [*LIBRARIES.items(), *((m, m) for m in extra)]:
        loaded = sys.modules.get(module)
        if loaded is not None:
            version = getattr(loaded, "__version__", None)
            found[name] = str(version) if version is not None else "unknown"
    return found


def _platform_text(platform) -> str:
    """platform.platform() without the `uname -p` child process it starts on Linux (2-3 ms of every run): there it
    names the processor only when `uname -p` says neither "unknown" nor the machine, which only patched `uname`
    builds do (Gentoo's CPU model name). The banner does without it."""
    compose = getattr(platform, "_platform", None)
    if sys.platform != "linux" or compose is None:
        return platform.platform()
    info = platform.uname()  # its processor is found only when asked for
    libc, version = platform.libc_ver()
    return compose(info.system, info.release, info.machine, "with", libc + version)


def environment_info() -> dict:
    """Python, NumPy and platform versions for banners and manifests."""
    import platform

    import numpy

    return {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "numpy": numpy.__version__,
        "platform": _platform_text(platform),
        "machine": platform.machine(),
        "byteorder": sys.byteorder,
        "cwd": os.getcwd(),
    }
