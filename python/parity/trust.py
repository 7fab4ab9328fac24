"""What `parity compare` trusts: backends the user names, and pickles that carry a MAC made with the user's key.

A results directory may come from anywhere (a CI artifact, a colleague, a download), so nothing in it may make
compare run code: a backend spec in a manifest is never imported, and a stored pickle (the end of a result file) is
unpickled only when its MAC verifies with the user's own key (README, "Safety: what parity trusts"; docs/format.md,
"Pickles").
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
import shlex
import stat
import time
from pathlib import Path

# The end of every pickle parity writes: a fixed-length line with the HMAC-SHA256 of everything before it.
_TRAILER_PREFIX = b"\nparity-mac hmac-sha256 "
TRAILER_SIZE = len(_TRAILER_PREFIX) + 64 + 1
KEY_ENV = "PARITY_PROBE_KEY"            # the key itself, for CI jobs whose shards run on different machines
KEY_FILE_ENV = "PARITY_KEY_FILE"        # where the key file is (default: $XDG_CONFIG_HOME/parity/key)
TRUST_ENV = "PARITY_TRUST_BACKENDS"     # backend specs compare may import, separated by os.pathsep
TRUST_FLAG = "--trust-backend"


class NoKey(Exception):
    """The key file exists but cannot be used (unreadable, not a regular file, writable by others)."""


def key_file() -> Path:
    """$PARITY_KEY_FILE, else $XDG_CONFIG_HOME/parity/key, else ~/.config/parity/key."""
    return Path(_key_file_text())


def _key_file_text() -> str:
    """key_file() as text, without pathlib's parsing (asked once per scenario)."""
    named = _getenv(KEY_FILE_ENV)
    if named:
        return named
    return _default_key_file(_getenv("XDG_CONFIG_HOME"), _getenv("HOME"))


_encoded_names: dict = {}  # name -> os.environ.encodekey(name), for the os.environ they were encoded by
_encoded_by = None


def _getenv(name: str):
    """os.environ.get(name) for the key's lookup, which reads up to four names once a scenario in each of a run's
    workers and in compare: os.environ.get encodes the name and, for a name that is not set (the commonest case
    here), raises and catches a KeyError inside, ~1 µs a name; os.environ's own mapping of encoded names (`_data`,
    which its get reads) answers in a twentieth of that. The same answer either way: os.environ is looked up at each
    call (a scenario or test may replace it), and its get is used where it is not built so."""
    global _encoded_by
    environ = os.environ
    data = getattr(environ, "_data", None)
    if not isinstance(data, dict):
        return environ.get(name)
    if environ is not _encoded_by:
        _encoded_names.clear()
        _encoded_by = environ
    encoded = _encoded_names.get(name)
    if encoded is None:
        encoded = _encoded_names[name] = environ.encodekey(name)
    value = data.get(encoded)
    return None if value is None else environ.decodevalue(value)


@functools.lru_cache(maxsize=4)
def _default_key_file(config_home, home) -> str:
    """$XDG_CONFIG_HOME/parity/key, else ~/.config/parity/key (`home`: $HOME, which ~ stands for when set)."""
    config = config_home or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "parity", "key")


def _read_key(path: Path) -> bytes:
    return _read_key_and_identity(path)[0]


def _read_key_and_identity(path) -> tuple:
    """(the key, the identity of the file it was read from: _identity of its fstat)."""
    # O_NOFOLLOW | O_NONBLOCK: a symlink or FIFO planted at the key's place is refused, never waited on.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NoKey(f"key file {path} is not a regular file")
        if info.st_mode & 0o022:
            raise NoKey(f"key file {path} is writable by others (mode {info.st_mode & 0o777:o}): "
                            f"anyone could replace it; chmod 600 {shlex.quote(str(path))}")
        key = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(key) < 32:
        raise NoKey(f"key file {path} holds fewer than 32 bytes")
    return key, _identity(info)


def _create_key(path: Path) -> bytes:
    """A new random key at `path`, mode 0600; whole or not at all, and the first of concurrent creators wins."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)  # atomic, and fails if another worker created the key first: then its key is used
    except FileExistsError:
        pass
    finally:
        os.unlink(temp)
    return _read_key(path)


# The key file last read, as (where it was looked for, its lstat identity, its key): a run or compare asks for the
# key once per scenario, and a file whose inode, mode, size and times are unchanged holds the same accepted key.
_last_read = None

# A file's times are as coarse as its filesystem's ticks (FAT's 2 s, ext3's 1 s): one changed within a tick of a read
# may change again with the same identity. Its key is reused only once its times are older than this at the read
# (git's "racily clean" entries).
_RACY_NS = 3 * 10**9
_clock = time.time_ns


def _identity(info: os.stat_result) -> tuple:
    return info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _read_key_once(path: str) -> bytes:
    """_read_key, or the key read before when the file at `path` is still that same, unchanged file (a symlink or
    FIFO put in its place, a chmod or a rewrite change its lstat identity, and it is read and checked again)."""
    global _last_read
    if _last_read is not None and _last_read[0] == path:
        try:
            if _identity(os.lstat(path)) == _last_read[1]:
                return _last_read[2]
        except OSError:
            pass  # gone or unreadable now: _read_key says why
    _last_read = None
    value, identity = _read_key_and_identity(path)
    if _clock() - max(identity[4], identity[5]) > _RACY_NS:
        _last_read = (path, identity, value)
    return value


def key(create: bool = False) -> bytes:
    """The MAC key: $PARITY_PROBE_KEY, else the key file's (created when `create` and missing). Raises NoKey
    when there is none (or it is unusable), with a message saying where it was looked for."""
    given = _getenv(KEY_ENV)
    if given:
        return given.encode()
    path = _key_file_text()
    try:
        return _read_key_once(path)
    except FileNotFoundError:
        if create:
            return _create_key(Path(path))
        raise NoKey(f"no key: {KEY_ENV} is unset and {path} does not exist (parity run creates it)") from None
    except OSError as exc:
        raise NoKey(f"key file {path} cannot be read: {exc}") from None




def trailer(digest) -> bytes:
    return _TRAILER_PREFIX + digest.hexdigest().encode() + b"\n"


# The last key's HMAC with nothing fed yet, as (key, hmac object): a copy of its keyed SHA-256 states signs or verifies
# a small pickle in half the time of hmac.digest, which keys OpenSSL's HMAC afresh for every call (a run signs one
# pickle a scenario, compare verifies two).
_keyed = (None, None)


def mac(key_bytes: bytes):
    """A fresh HMAC-SHA256 under `key_bytes`, to be fed: a copy of that key's keyed state."""
    global _keyed
    if _keyed[0] != key_bytes:
        _keyed = (key_bytes, hmac.new(key_bytes, digestmod=hashlib.sha256))
    return _keyed[1].copy()


def _hex_mac(key_bytes: bytes, payload) -> str:
    """The HMAC-SHA256 of `payload` under `key_bytes`, in hex (hmac.digest's)."""
    digest = mac(key_bytes)
    digest.update(payload)
    return digest.hexdigest()


def signature(key_bytes: bytes, payload) -> bytes:
    """trailer() of `payload` signed with `key_bytes`, in one call: a small pickle is signed whole."""
    return _TRAILER_PREFIX + _hex_mac(key_bytes, payload).encode() + b"\n"


def has_trailer(blob) -> bool:
    """Whether `blob` ends with a MAC line as signature() writes it (its MAC unchecked)."""
    return len(blob) >= TRAILER_SIZE and blob[-TRAILER_SIZE:][:len(_TRAILER_PREFIX)] == _TRAILER_PREFIX and \
        blob[-1:] == b"\n"


def verified_payload(blob: bytes, key_source=None) -> tuple:
    """(pickle bytes, None) when `blob` ends with a trailer whose MAC verifies with the user's key; else (None,
    why not), saying what would make it verify. `key_source`: what gives the key (default key())."""
    if not has_trailer(blob):
        return None, "the pickle carries no MAC (written by another program, or by an older parity)"
    try:
        key_bytes = (key_source or key)()
    except NoKey as exc:
        return None, str(exc)
    # A view, not a copy: a pickle of large outputs is not held twice.
    payload, written = memoryview(blob)[:-TRAILER_SIZE], blob[-TRAILER_SIZE + len(_TRAILER_PREFIX):-1]
    expected = _hex_mac(key_bytes, payload)
    if not hmac.compare_digest(expected.encode(), written):
        return None, (f"the pickle's MAC does not verify with your key: it was written with another key (another "
                      f"machine or user) or altered; for your own CI shards set {KEY_ENV} to one secret for all jobs")
    return payload, None


# ---------------------------------------------------------------------------------------------------------
# Backends compare may import for their reducers.

_trusted_loaded: dict = {}  # user-named spec -> (its Backend, None), or (None, why it failed to load)
_loaded_sides: dict = {}    # side (gold, candidate) -> the Backend load_reducers loaded for it


def _shown(value) -> str:
    """A value from a results file, printable only: it cannot move the cursor or forge terminal lines."""
    return value if isinstance(value, str) and value.isprintable() else ascii(value)


def trusted_specs(named: list) -> list:
    """The specs named with --trust-backend, then those of $PARITY_TRUST_BACKENDS."""
    env = [s for s in os.environ.get(TRUST_ENV, "").split(os.pathsep) if s]
    return list(named) + env


def _path_like(spec: str) -> bool:
    return spec.endswith(".py") or "/" in spec


def _load_trusted(spec: str, role: str):
    """The Backend of a spec the user trusts, loaded once; raises BackendError when it cannot be loaded."""
    from parity import backend

    if spec not in _trusted_loaded:
        try:
            _trusted_loaded[spec] = backend.load(spec, role), None
        except backend.BackendError as exc:
            _trusted_loaded[spec] = None, f"the trusted backend {spec!r} cannot be loaded: {exc}"
    return _trusted_loaded[spec]


def _matches(user_spec: str, loaded, recorded: dict) -> bool:
    """Whether the backend a manifest records is the one the user trusts: the same spec (a path resolved), or the
    same module (a backend file in another place, as a CI artifact records it)."""
    spec = recorded.get("spec")
    if _path_like(user_spec) and str(Path(user_spec).resolve()) == spec:
        return True
    if user_spec == spec:
        return True
    return loaded is not None and loaded.module.__name__ == recorded.get("module")


def load_reducers(recorded: dict, side: str, named: list) -> str | None:
    """Registers the reducers of the backend a manifest records (its `backend` object), if compare may run its
    code: a built-in backend, looked up by name, or one the user trusts. Returns None when they are loaded, else
    why not, naming the flag that would trust it. Never imports the spec the manifest names."""
    from parity import backend

    recorded = recorded if isinstance(recorded, dict) else {}
    spec, role = recorded.get("spec"), recorded.get("role")
    role = role if isinstance(role, str) else ""
    _loaded_sides.pop(side, None)
    if isinstance(spec, str) and spec in backend.builtin_names():
        _loaded_sides[side] = backend.load(spec, role if role in backend.ROLES else "")
        return None
    problems = []
    for user_spec in trusted_specs(named):
        loaded, problem = _load_trusted(user_spec, "gold" if side == "gold" else "candidate")
        if problem:
            problems.append(problem)
        if isinstance(spec, str) and _matches(user_spec, loaded, recorded):
            if loaded is not None:
                _loaded_sides[side] = loaded
            return None if loaded is not None else problem
    shown = _shown(spec)  # it came from a file
    return (f"the {side} run's backend {shown!r} is not a built-in backend and you have not trusted it; compare "
            f"never imports code a results directory names, so checks that need its reducers are skipped (trust "
            f"it with {TRUST_FLAG} {shlex.quote(shown)} or {TRUST_ENV}, if you trust that code)"
            + "".join(f"; {p}" for p in problems))


def current_differences(side: str):
    """The DIFFERENCES of the backend load_reducers loaded for `side`, as its code declares them now (validated when
    it loaded); None when it was not loaded (compare then uses those the run recorded)."""
    loaded = _loaded_sides.get(side)
    return None if loaded is None else loaded.differences


# ---------------------------------------------------------------------------------------------------------
# Scenario directories compare may import for the reducers their modules register.

SCENARIOS_ENV = "PARITY_TRUST_SCENARIOS"  # scenario directories compare may import, separated by os.pathsep
SCENARIOS_FLAG = "--scenarios"

_scenario_code_loaded: set = set()  # (trusted directory, native module file or "suites") imported
_scenario_modules: dict = {}  # trusted directory -> its native modules (_native_modules)


def trusted_scenario_dirs(named: list, bundled: str) -> list:
    """The directories (or files) named with compare's --scenarios, then those of $PARITY_TRUST_SCENARIOS, then the
    bundled corpus, resolved."""
    env = [s for s in os.environ.get(SCENARIOS_ENV, "").split(os.pathsep) if s]
    return [Path(d).resolve() for d in [*named, *env, bundled] if d]


def _holds(directory: Path, source, module) -> bool:
    """Whether the scenario module a record names (its source file, or its dotted name under a root, as a CI
    artifact made elsewhere records it) lies in `directory` (or is that file). Only decides which trusted directory
    to import."""
    try:
        if directory.is_file():
            return (isinstance(source, str) and Path(source).resolve() == directory) or module == directory.stem
        if isinstance(source, str) and source and Path(source).resolve().is_relative_to(directory):
            return True
        file = _module_path(directory, module)
        return file is not None and file.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL: a record made to fail here
        return False


def _module_path(directory: Path, module) -> Path | None:
    """The file under `directory` of a dotted module name a record holds; None unless each part is an identifier."""
    parts = module.split(".") if isinstance(module, str) else []
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return directory.joinpath(*parts[:-1]) / f"{parts[-1]}.py"


def _own_module(directory: Path, natives: dict, source, module):
    """Of `natives` (file -> (root, file), what discover() would import in `directory`), the entry of the scenario
    module a record names, by its source as `run` recorded it or by its dotted name; None when neither is one."""
    if isinstance(source, str) and source in natives:
        return natives[source]
    path = _module_path(directory, module)
    return natives.get(str(path)) if path is not None else None


def _import_scenario_code(directory: Path, source, module, pytest_test: bool) -> None:
    """Imports the next of what may register the reducers a scenario's outputs need, each once in the process: its
    own native module (for a pytest test, the directory's pytest suites), then, should its outputs still not rebuild
    (a reducer another module registers, a NumPy submodule only its scenario imports), the rest of the directory.
    The whole directory had been imported for any one scenario: for the bundled corpus 1.5 s of a 2.1 s compare, and
    again in each process of `compare --jobs` (bench/README, issue #20). Each module is imported once, never again
    under the whole directory's import: a module run twice defines its classes twice."""
    natives = _native_modules(directory)
    own = None if pytest_test else _own_module(directory, natives, source, module)
    if own is not None and _import_native(directory, own):
        return
    if pytest_test and _import_suites(directory):
        return
    for entry in natives.values():  # a module that fails to import leaves its outputs unrebuilt: compare says so
        _import_native(directory, entry)
    _import_suites(directory)


def _native_modules(directory: Path) -> dict:
    """{file: (root, file)} of the native scenario modules in `directory`, found once in the process: compare asks
    after every failed rebuild, and the search walks the directory twice (its modules, its pytest suites)."""
    from parity import discovery

    if directory not in _scenario_modules:
        _scenario_modules[directory] = {str(file): (root, file) for root, file in discovery.native_modules([directory])}
    return _scenario_modules[directory]


def _import_native(directory: Path, entry: tuple) -> bool:
    """Imports the native scenario module `entry` ((root, file)) unless it was; whether it is imported now."""
    from parity import discovery

    key = (directory, str(entry[1]))
    if key in _scenario_code_loaded:
        return False
    _scenario_code_loaded.add(key)
    discovery.import_module(*entry)
    return True


def _import_suites(directory: Path) -> bool:
    """Collects the pytest suites in `directory` for the reducers they register, unless done; whether done now."""
    from parity import discovery, pytest_suite

    key = (directory, "suites")
    if key in _scenario_code_loaded:
        return False
    _scenario_code_loaded.add(key)
    pytest_suite.collect([directory], None, None, module_error=discovery.ModuleError)
    pytest_suite.finish_all()  # collected for their reducers only: no session stays
    return True


def load_scenario_reducers(meta: dict, named: list, bundled: str) -> str | None:
    """Imports from the trusted scenario directory that holds the module of a scenario (`meta` as its record has it)
    the next of what may register the reducers its outputs need (_import_scenario_code): compare calls it after each
    failed rebuild. Returns None when that directory is trusted, else why not, naming the flag that would trust it.
    Never imports a path a results directory names: only directories the user trusts, through parity.discovery as
    `run` imports them."""
    meta = meta if isinstance(meta, dict) else {}
    source, module = meta.get("source"), meta.get("module")
    for directory in trusted_scenario_dirs(named, bundled):
        if not directory.exists() or not _holds(directory, source, module):
            continue
        _import_scenario_code(directory, source, module, meta.get("kind") == "pytest")
        return None
    shown = _shown(source)
    where = "DIR"
    if isinstance(source, str) and source.isprintable():  # the root run imported it under: up one per package level
        depth = len(module.split(".")) if isinstance(module, str) and module else 1
        where = shlex.quote(str(Path(source).parents[min(depth, len(Path(source).parents)) - 1]))
    return (f"the scenario module {shown} is not in the bundled corpus or a scenario directory you trust, and its "
            f"outputs need reducers compare has not loaded; compare never imports code a results directory names, "
            f"so the checks that rebuild them are skipped (trust it with {SCENARIOS_FLAG} {where} or "
            f"{SCENARIOS_ENV}, if you trust that code)")


def _suite_base(file: Path, module) -> Path:
    """The directory a pytest scenario's id is relative to (the path `run` was given): the test file with the id's
    file part (`module`, as `pytest_style/test_numpy.py`) taken off; the file's own directory when they disagree."""
    parts = Path(module).parts if isinstance(module, str) and module and not Path(module).is_absolute() else ()
    if parts and len(parts) < len(file.parts) and file.parts[-len(parts):] == parts:
        return file.parents[len(parts) - 1]
    return file.parent


def trusted_test_file(meta: dict, named: list, bundled: str) -> tuple:
    """(test file, the directory its id is relative to, the trusted directory that holds both, None) when the pytest
    test a record names (`meta` as its record has it) lies in a scenario directory the user trusts; else (None, None,
    None, why not), naming the flag that would trust it. Only ever returns a file and a base inside a trusted
    directory (for a trusted file, its folder): pytest loads conftests from the base down, so a base the record
    moved above the trusted directory (its `module` naming more folders) would import code from anywhere. The file
    is found by the recorded source path, or by the id's file part under the directory, as a CI artifact made
    elsewhere records it."""
    meta = meta if isinstance(meta, dict) else {}
    source, module = meta.get("source"), meta.get("module")
    relative = Path(module) if isinstance(module, str) and module and not Path(module).is_absolute() else None
    outside = None  # why a file found in a trusted directory was refused: its base lies outside
    for directory in trusted_scenario_dirs(named, bundled):
        candidates = []
        if isinstance(source, str) and source:
            candidates.append(Path(source))
        if relative is not None and directory.is_dir():
            candidates.append(directory / relative)
        boundary = directory if directory.is_dir() else directory.parent
        for candidate in candidates:
            try:
                file = candidate.resolve()
            except (OSError, RuntimeError):
                continue
            inside = file == directory if directory.is_file() else file.is_relative_to(directory)
            if not (inside and file.is_file()):
                continue
            base = _suite_base(file, module)
            if base.is_relative_to(boundary):
                return file, base, boundary, None
            outside = outside or (
                f"its record's module {_shown(module)} puts the suite's base at {base}, outside the trusted "
                f"directory {boundary}, and pytest would load the conftest.py files from there down; compare "
                f"imports nothing outside a directory you trust, so the record was altered or the suite was run "
                f"from a directory above the one you trust (trust that one with {SCENARIOS_FLAG})")
    if outside:
        return None, None, None, f"the test file {_shown(source)} is in a directory you trust, but {outside}"
    where = "DIR"
    if isinstance(source, str) and source.isprintable() and source:
        where = shlex.quote(str(_suite_base(Path(source), module)))
    return None, None, None, (f"the test file {_shown(source)} is not in the bundled corpus or a scenario directory "
                              f"you trust; compare never imports code a results directory names (trust the suite "
                              f"with {SCENARIOS_FLAG} {where} or {SCENARIOS_ENV}, if you trust that code)")
