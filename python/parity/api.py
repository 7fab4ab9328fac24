"""parity's Python API (README, "Python API"): read and write result files, and run parity's checks on two in-memory
outputs or two results directories, from your own code and tests. The work is done by the C++ engine, the extension
module parity._core; importing parity never needs it (the embedded interpreter of the `parity` program runs
without it), the first call of a function here does."""
import os

from parity.arguments import byte_count, finite_number, flag, optional, output_tolerances, str_mapping, text

CORE_DIR_ENV = "PARITY_CORE_DIR"  # a source checkout's build directory holding _core (CMake: <build>/python)


def _core(needed_by="parity's Python API"):
    """The extension module, or an ImportError saying that `needed_by` needs it and how to build it."""
    try:
        from parity import _core as core
    except ImportError as error:
        raise ImportError(
            f"{needed_by} needs parity's C++ extension module parity._core, which this parity does not have "
            f"({error}). `pip install .` builds and installs it; in a source checkout build it with `cmake --build "
            f"build --target parity_python` and set {CORE_DIR_ENV}=build/python (where it is built)") from error
    return core


def read_result(file, *, max_memory=None):
    """The outputs a result file holds (`results/*.parity` of a results directory, or a file write_result wrote),
    rebuilt as `parity compare` rebuilds them: arrays with their dtype, byte order, strides and flags, NumPy scalars,
    Python scalars and containers, and objects through the reducers registered in this process (parity.reducers:
    import your backend first). Reading never imports a module the file names nor unpickles anything: a type whose
    reducer is not registered, or an ndarray subclass of a module not on parity.reducers' allow-list, raises.

    `max_memory` bounds in bytes what the file may expand to, its decoded nodes included (compare's
    --max-result-memory; default 2 GiB): a whole number from 1, else a TypeError or ValueError naming it.
    Arrays from a file over 64 KiB view a private mapping of it, as np.load(mmap_mode="c") gives: a file truncated in
    place while they live ends the process with SIGBUS (write_result's rename leaves them whole; np.array copies).
    Raises ValueError (parity._core.FormatError) naming the file when it is damaged, hostile, too new or refused."""
    return _core().read_result(os.fspath(file), optional(byte_count, "max_memory", max_memory))


def write_result(file, outputs):
    """Writes `outputs` (nested dicts with str keys, lists and tuples over arrays, scalars, str, bytes, None and
    objects with a reducer) to `file` atomically, in the format a run writes (docs/format.md). Raises TypeError
    (parity._core.UnsupportedOutput) naming the path of an output the format cannot carry, e.g. outputs['f'][1], and
    ValueError when `file` names a device, FIFO, socket or directory (never replaced)."""
    _core().write_result(os.fspath(file), outputs)


def _items(name, given, *, paths=False):
    """A list argument's items as the engine takes them (str; os.fspath of each when `paths`). One str (or path) is
    that one item, as subprocess takes a str for one program: iterated, it was one-letter ids, names or paths ("/",
    the first of "/my/scenarios", trusted every directory). Anything else that is no iterable of them is a TypeError
    naming `name`."""
    single = (str, os.PathLike) if paths else (str,)
    if given is None:
        return []
    if isinstance(given, single):
        given = [given]
    elif isinstance(given, (bytes, bytearray)) or not hasattr(given, "__iter__"):
        raise TypeError(f"{name} must be a str or a list of them, got {given!r}")
    items = list(given)
    for item in items:
        if not isinstance(item, single):
            raise TypeError(f"{name}: each item must be {'a str or a path' if paths else 'a str'}, got {item!r}")
    return [os.fspath(item) for item in items] if paths else items


def _scenario_dirs(given):
    """The directories to trust, each one that exists: as `parity compare --scenarios` refuses one that does not, for
    a misspelt directory would trust nothing, silently."""
    dirs = _items("trust_scenarios", given, paths=True)
    for directory in dirs:
        if not os.path.exists(directory):
            raise ValueError(f"trust_scenarios: {directory} does not exist")
    return dirs


def compare_outputs(gold, candidate, *, policy=None, rtol=None, atol=None, tolerances=None, signed_zeros=False,
                    type_map=None, id="outputs"):
    """Compares two output trees with parity's checks and returns the outcome the JSON report holds for a scenario
    (docs/report-json.md): a dict with `status` ("pass", "fail", or "error" when an output cannot be written),
    `message` ("failed checks: dtype, values"), `checks` (failures first, each with `check`, `ok`, `path` such as
    outputs['x'][0], `message` and `details`; then one entry per check that passed with its `leaves`), `coverage`
    and `policy`.

    Both trees are written to result files and read back first, as a run and compare do, so what is compared is
    what travels. The tree's checks run (structure, shape, dtype, layout, strides, writeable, type, attrs, values,
    uncompared); the fidelity and pickle probes, xfails and declared differences belong to `parity run` and
    `parity compare`. `policy` is {name: value} of parity's policies (README, "Policies"), e.g. {"layout": "strides"};
    `rtol`/`atol` override the per-dtype tolerances for every value, `tolerances` for a path and what is under it;
    `type_map` maps a gold type's qualified name to the candidate type expected in its place, as a backend's
    TYPE_MAP. They are refused by @parity.scenario's rules (parity.arguments), naming the argument and the value:
    `policy` and `type_map` must be dicts of str to str and `tolerances` a dict of output paths to one or both of
    rtol and atol, so a list of pairs, or a key, value or tolerance of the wrong type (or `signed_zeros`), raises
    TypeError; an unknown policy name or value, a tolerance that is no finite number >= 0, an empty tolerances entry
    or a path that does not start with "outputs" raises ValueError. `id` is the outcome's id (a str, else TypeError;
    one UTF-8 cannot encode, a lone surrogate, ValueError)."""
    return _core().compare_outputs(gold, candidate, str_mapping("policy", policy),
                                   optional(finite_number, "rtol", rtol), optional(finite_number, "atol", atol),
                                   output_tolerances("tolerances", tolerances),
                                   flag("signed_zeros", signed_zeros), str_mapping("type_map", type_map),
                                   text("id", id))


def compare_results(gold, candidate, *, only=(), policy=None, trust_backends=(), trust_scenarios=(),
                    pickle_probe=True, strict_differences=False, timeout=None, max_result_memory=None,
                    progress=False):
    """Compares two results directories as `parity compare GOLD CANDIDATE --json` does (the same code) and returns
    that JSON report as a dict (docs/report-json.md): `summary` holds the counts, `scenarios` each scenario's outcome.

    The same trust rules apply (README, "Safety: what parity trusts"): only built-in backends and those named in
    `trust_backends` (or PARITY_TRUST_BACKENDS) are imported for their reducers, scenario modules only from the
    bundled corpus and `trust_scenarios` (or PARITY_TRUST_SCENARIOS), pickles only when they carry your key's MAC
    (`pickle_probe=False`: never). `only`, `policy` (a dict {name: value} of str), `strict_differences`, `timeout`
    (seconds per scenario; 0: none; None: the runs' own, as their manifests record it) and `max_result_memory` (bytes)
    are compare's --only, --NAME-policy, --strict-differences, --timeout and --max-result-memory, and refused by the
    same rules, naming the argument: a `timeout` that is NaN, infinite or negative, a `max_result_memory` below 1 byte
    or a `trust_scenarios` directory that does not exist raises ValueError, a value of the wrong type (a flag that is no
    bool, an id that is no str) TypeError. `only`, `trust_backends` and `trust_scenarios` take a list of items or one
    str (or path) as that one item. Nothing is printed unless `progress`: then stderr shows what `parity compare`
    shows. Raises ValueError
    (parity._core.CompareRefused) with parity's message for a pair `parity compare` refuses: a missing or malformed
    manifest, runs given the wrong way round or with no scenario in common, one directory given as both, a compare of
    0 scenarios (an `only` naming none of them), runs whose shards do not line up, or malformed declared differences.
    A Ctrl-C (SIGINT, or SIGTERM) during the compare stops it at its next check and raises KeyboardInterrupt."""
    return _core().compare_results(os.fspath(gold), os.fspath(candidate), _items("only", only),
                                   str_mapping("policy", policy),
                                   _items("trust_backends", trust_backends), _scenario_dirs(trust_scenarios),
                                   flag("pickle_probe", pickle_probe), flag("strict_differences", strict_differences),
                                   optional(finite_number, "timeout", timeout, unit="seconds", note="0: none"),
                                   optional(byte_count, "max_result_memory", max_result_memory),
                                   flag("progress", progress))
