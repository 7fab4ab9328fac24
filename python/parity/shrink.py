"""`parity shrink ID --backend B`: the smallest input on which candidate B still fails the same check at the same place.

A generated scenario of the operation registry (`ops.<name>[layout=L,dtype=D]`) has a search space: the sample's shape
(fewer elements), the entry's narrower dtypes of the same kind (simplest first), C in place of the layout, and the
values (rounded to integers). Hypothesis starts from the failing case and shrinks it; each case it tries is written as
a scenario module and checked as `parity check` does (runs of gold and of B side by side, in workers, then the
compare). The
smallest case that still fails the target check (name and output path) is written as a standalone scenario module
whose docstring holds its repro command (README, "Shrinking a failure").
"""
from __future__ import annotations

import ast
import dataclasses
import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy

from parity.ops import layouts as _layouts
from parity.statuses import FAILING

# Simplest first: bool, integers (signed before unsigned at one width), floats, complex; other kinds after them.
_GROUP_ORDER = ("b", "iu", "f", "c")
_NO_DTYPE = "none"  # an entry whose operation takes no array of a chosen dtype (registry.NONE)


class ShrinkError(Exception):
    """A shrink that cannot be done (an unknown or hand-written id, a run that cannot start): exit 2, the message says
    why."""


# --- the search space ---------------------------------------------------------------------------------------------


def dtype_rank(name: str) -> tuple:
    """The order dtypes are tried in: bool, int8, uint8, int16, ..., float16, ..., complex128, then the others."""
    if name == _NO_DTYPE:
        return (-1, 0, False, name)
    group, dt = dtype_group(name), numpy.dtype(name)
    rank = _GROUP_ORDER.index(group) if group in _GROUP_ORDER else len(_GROUP_ORDER)
    return (rank, dt.itemsize, dt.kind == "u", name)


def dtype_group(name: str) -> str:
    """Integers signed and unsigned are one group; every other kind is its own."""
    kind = "" if name == _NO_DTYPE else numpy.dtype(name).kind
    return "iu" if kind in ("i", "u") else kind


def layout_rank(name: str) -> int:
    """The layout matrix's order, C first (parity.ops.layouts.LAYOUTS)."""
    return _layouts.LAYOUTS.index(name)


@dataclasses.dataclass(frozen=True)
class Case:
    """One input: the operation called under `layout` and `dtype` on `inputs`, the host values its sample made."""

    layout: str
    dtype: str
    inputs: tuple

    @property
    def elements(self) -> int:
        return sum(int(a.size) for a in self.inputs if isinstance(a, numpy.ndarray))

    def key(self) -> tuple:
        """Equal for equal inputs (the cache of what was run)."""
        return (self.layout, self.dtype,
                tuple((a.dtype.str, a.shape, a.tobytes()) if isinstance(a, numpy.ndarray) else repr(a)
                      for a in self.inputs))

    def describe(self) -> str:
        return f"{self.elements} elements, dtype {self.dtype}, layout {self.layout}"


def _sampler(op):
    from parity.ops.registry import _default_sample

    return op.sample or _default_sample(op)


def _sample(op, scenario_seed: int, layout: str, dtype: str, shape: tuple) -> list:
    # The scenario's rng, as the generated scenario seeds it, so that the original variant gets its original values.
    rng = numpy.random.default_rng(scenario_seed)
    return _sampler(op)(rng, dtype, _layouts.shape_for(layout, shape))


def _shape_matters(op, dtype: str) -> bool:
    """Whether the entry's sample follows the shape it is given (a fixed-shape sample, `arrays((7,), (3,))`, does
    not)."""
    ones = tuple(1 for _ in op.shape)
    try:
        full = _sampler(op)(numpy.random.default_rng(0), dtype, tuple(op.shape))
        small = _sampler(op)(numpy.random.default_rng(0), dtype, ones)
    except Exception:  # a sample that refuses the small shape: let the search find out which shapes work
        return True
    return [getattr(a, "shape", None) for a in full] != [getattr(a, "shape", None) for a in small]


def _rounds(value) -> bool:
    """Whether the search may round the elements of this input (float and complex arrays)."""
    return isinstance(value, numpy.ndarray) and value.dtype.kind in "fc"


def _rounded(value: numpy.ndarray) -> numpy.ndarray:
    """Every element rounded to an integer (complex: both parts)."""
    if value.dtype.kind == "c":
        return (numpy.round(value.real) + 1j * numpy.round(value.imag)).astype(value.dtype)
    return numpy.round(value)


class Space:
    """The search space of one generated scenario: what Hypothesis draws, and the draws that give the original case."""

    def __init__(self, op, layout: str, dtype: str, scenario_seed: int):
        variants = set(op.variants())
        if (layout, dtype) not in variants:
            raise ShrinkError(f"operation {op.name!r} has no variant layout={layout}, dtype={dtype}")
        self.op, self.seed, self.variants = op, scenario_seed, variants
        # Narrower dtypes of the same kind (a float fault shrinks to float16, not to a bool the fault cannot
        # touch), and C or the original layout: each option the search may try costs a run.
        dtypes = sorted({d for _, d in variants if dtype_group(d) == dtype_group(dtype)}, key=dtype_rank)
        self.dtypes = dtypes[:dtypes.index(dtype) + 1]
        self.layouts = sorted({ly for ly, _ in variants} & {"C", layout}, key=layout_rank)
        self.dims = tuple(op.shape) if _shape_matters(op, dtype) else ()
        self.original = self.case(tuple(op.shape), layout, dtype, keep=None)

    def case(self, shape: tuple, layout: str, dtype: str, keep) -> Case:
        """The case of that shape, layout and dtype; keep(i) says whether the i-th float or complex input keeps its
        sampled values or has them rounded to integers (None: all keep)."""
        return self.rounded(layout, dtype, _sample(self.op, self.seed, layout, dtype, shape), keep)

    @staticmethod
    def rounded(layout: str, dtype: str, host: list, keep) -> Case:
        """The case of these host values, each float or complex input rounded unless keep(its index)."""
        inputs, index = [], 0
        for value in host:
            if _rounds(value):
                value = value if keep is None or keep(index) else _rounded(value)
                index += 1
            inputs.append(value)
        return Case(layout, dtype, tuple(inputs))

    def original_choices(self) -> list:
        """The draws (in the order strategy() makes them) that give the original case."""
        choices = [n for n in self.dims if n > 1]
        choices += [len(options) - 1 for options in (self.dtypes, self.layouts) if len(options) > 1]
        return choices + [True] * sum(1 for value in self.original.inputs if _rounds(value))

    def strategy(self):
        """Cases, drawn so that Hypothesis shrinks toward fewer elements, then simpler dtypes and layouts, then
        rounded values. A draw with one option is no draw (original_choices() counts only the others)."""
        from hypothesis import reject, strategies as st

        def pick(draw, options):
            return options[draw(st.integers(0, len(options) - 1))] if len(options) > 1 else options[0]

        @st.composite
        def cases(draw):
            shape = tuple(draw(st.integers(1, n)) if n > 1 else n for n in self.dims) or tuple(self.op.shape)
            dtype, layout = pick(draw, self.dtypes), pick(draw, self.layouts)
            if (layout, dtype) not in self.variants:
                reject()
            try:
                host = _sample(self.op, self.seed, layout, dtype, shape)
            except Exception:  # the entry's sample refuses that shape: not a case
                reject()
            return self.rounded(layout, dtype, host, keep=lambda i: draw(st.booleans()))

        return cases()


# --- running one case as a run does ------------------------------------------------------------------------------


def _literal(value) -> str:
    """Python source that rebuilds `value` (a host array, or a plain argument), checked by evaluating it."""
    if isinstance(value, numpy.ndarray):
        for text in _array_sources(value):
            rebuilt = eval(text, {"numpy": numpy, "nan": numpy.nan, "inf": numpy.inf})  # noqa: S307 (our own text)
            if rebuilt.dtype == value.dtype and rebuilt.shape == value.shape and \
                    numpy.array_equal(rebuilt, value, equal_nan=value.dtype.kind in "fc"):
                return text
        raise ShrinkError(f"cannot write an input of dtype {value.dtype} as Python source")
    text = repr(value)
    try:
        if ast.literal_eval(text) == value:
            return text
    except (ValueError, SyntaxError):
        pass
    raise ShrinkError(f"cannot write an input of type {type(value).__name__} as Python source")


def _array_sources(value: numpy.ndarray):
    # Readable values first; the raw bytes when the values do not round trip.
    listed = value.astype(str) if value.dtype.kind in "mM" else value
    yield f"numpy.array({listed.tolist()!r}, dtype={value.dtype.str!r}).reshape({value.shape!r})"
    yield (f"numpy.frombuffer(bytes.fromhex({value.tobytes().hex()!r}), dtype={value.dtype.str!r})"
           f".reshape({value.shape!r}).copy()")


@dataclasses.dataclass
class Target:
    """The failure to keep: a check failing at an output path, on the original scenario."""

    check: str
    path: str


def render(op, case: Case, function: str, tags: list, header: str) -> str:
    """The standalone scenario module of one case: `function(xp, rng, layout, dtype)` calls the registry's operation
    on the case's inputs, laid out as the generated scenario lays them out."""
    inputs = "\n".join(f"    {_literal(value)}," for value in case.inputs)
    names = "from numpy import inf, nan  # the values below may hold them\n" if any(
        word in inputs for word in ("nan", "inf")) else ""
    xfail = "parity.xfail_on(OPERATION.differences)" if op.differences else "None"
    return f'''"""{header}"""
import dataclasses

import numpy
{names}
import parity
from parity.ops import REGISTRY

OPERATION = REGISTRY[{op.name!r}]
INPUTS = [
{inputs}
]


def {function}(xp, rng, layout, dtype):
    # The registry's own call and layout matrix, on these inputs instead of the entry's sample.
    def sample(rng, dtype, shape):
        return [numpy.copy(v) if isinstance(v, numpy.ndarray) else v for v in INPUTS]

    return dataclasses.replace(OPERATION, sample=sample).run(xp, rng, layout, dtype)


parity.scenario({function}, params={{"layout": [{case.layout!r}], "dtype": [{case.dtype!r}]}}, rtol=OPERATION.rtol,
                tags={tags!r}, xfail={xfail})
'''


class Pipeline:
    """Runs scenario modules as a check does: `parity check`, the runs under gold and under the candidate side by side
    (each in its workers), then the compare, in one command; hands back the scenario's entry of the compare JSON, and
    whether compare counted it a failure (its status, not the check's exit code: a run exits 1 for a scenario's error
    that the candidate declares, which compare counts an expected failure). One command rather than `run`, `run` and
    `compare`: Python and NumPy start once a case rather than three times, half the CPU of a case of a few elements,
    where the process starts were nearly all of it (issue #20)."""

    def __init__(self, program: str, backend: str, timeout: float, trust: list, work: Path):
        self.program, self.backend, self.timeout, self.trust, self.work = program, backend, timeout, trust, work
        self.runs = 0
        # The last run imports the shrunk module where it was written, the user's directory: no __pycache__ beside it.
        self.env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def run(self, scenarios: str, only: str | None = None) -> tuple:
        self.runs += 1
        out, report = self.work / f"run-{self.runs}", self.work / f"run-{self.runs}.json"
        command = [self.program, "check", "--backend", self.backend, "--out", str(out), "-q", "--timeout",
                   str(self.timeout), "--json", str(report), "--scenarios", scenarios] + (["--only", only] if only else [])
        for spec in self.trust:
            command += ["--trust-backend", spec]
        # 0: nothing failed, 1: something did (a run's scenario error too); any other exit: the check itself could not
        # be made (a backend that does not load, a module that is not one), which the user must hear of as it is.
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env)
        if done.returncode not in (0, 1):
            raise ShrinkError(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout.strip()}")
        scenarios_found = json.loads(report.read_text())["scenarios"]
        shutil.rmtree(out, ignore_errors=True)
        report.unlink()
        if len(scenarios_found) != 1:
            raise ShrinkError(f"{scenarios}: expected one scenario in the compare, found {len(scenarios_found)}")
        return scenarios_found[0], scenarios_found[0].get("status") in FAILING


def failed_checks(entry: dict) -> list:
    """(check, path, message) of every failed check of a compare JSON scenario entry."""
    return [(c["check"], c.get("path", ""), c.get("message", "")) for c in entry.get("checks", []) if not c["ok"]]


# --- the command -------------------------------------------------------------------------------------------------


def _list(program: str, scenario_id: str, scenarios: list) -> dict:
    """The scenario's declaration, as `parity list --json --only ID` gives it (its refusals are ours)."""
    command = [program, "list", "--json", "--only", scenario_id]
    for path in scenarios:
        command += ["--scenarios", path]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise ShrinkError(done.stderr.strip() or f"{' '.join(command)} exited {done.returncode}")
    found = [s for s in json.loads(done.stdout) if s["id"] == scenario_id]
    if not found:
        raise ShrinkError(f"no scenario has the id {scenario_id!r} (see 'parity list')")
    return found[0]["meta"]


def _operation(scenario_id: str, meta: dict):
    """The registry entry a generated scenario was made from; a ShrinkError for any other scenario."""
    from parity.ops import REGISTRY

    params = meta.get("params") or {}
    if "ops" not in (meta.get("tags") or []) or set(params) != {"layout", "dtype"}:
        raise ShrinkError(f"{scenario_id} is a hand-written scenario: it has no search space to shrink in (only the "
                          "scenarios generated from the operation registry, ops.<name>[layout=...,dtype=...], have "
                          "one: README, \"Shrinking a failure\")")
    ops = [op for op in REGISTRY.values() if op.scenario_name == meta["function"]]
    if not ops:
        raise ShrinkError(f"{scenario_id}: operation {meta['function']!r} is not in parity.ops' registry (shrink "
                          "knows the bundled entries)")
    return ops[0], params["layout"], params["dtype"]


def _pick_target(entry: dict, failing: bool, check: str | None, scenario_id: str, backend: str) -> Target | None:
    """The first failed check (of that name, with --check) of the original scenario; None when compare does not count
    it a failure (a pass, a skip, an expected failure)."""
    if not failing:
        return None
    failed = failed_checks(entry)
    chosen = [f for f in failed if check is None or f[0] == check]
    if chosen:
        return Target(*chosen[0][:2])
    if failed:
        raise ShrinkError(f"{scenario_id} under {backend} fails {', '.join(sorted({f[0] for f in failed}))}, "
                          f"not {check}")
    raise ShrinkError(f"{scenario_id} under {backend} ends {entry['status']} with no failed check to keep: "
                      f"{entry.get('message', '')}")


def _header(scenario_id, backend, target, original, best, runs, repro, message) -> str:
    text = (f"Minimal repro written by `parity shrink`: under backend {backend}, check `{target.check}` fails at "
            f"{target.path}.\n\nShrunk from {scenario_id} ({original.describe()})\nto {best.describe()}, in {runs} "
            f"runs of gold, the candidate and compare.\n\nRepro (exits 1 while the candidate still fails):\n\n"
            f"    {repro}\n\nWhat compare said:\n\n    {message.strip().replace(chr(10), chr(10) + '    ')}\n")
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')  # a docstring holds it


def shrink(program: str, scenario_id: str, backend: str, *, out: str | None = None, scenarios=(), max_examples=50,
           timeout=60.0, check=None, trust=(), log=print) -> Path | None:
    """Shrinks the scenario's failure under `backend`; writes the minimal scenario module to `out` (default:
    shrunk_<function>.py here) and returns its path, or None when the scenario does not fail there."""
    try:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis.database import ExampleDatabase, choices_to_bytes
        import hypothesis
        import hypothesis.core
    except ImportError as error:
        raise ShrinkError(f"parity shrink needs Hypothesis ({error}): pip install hypothesis (requirements/runtime.in "
                          "pins it)") from None
    if not backend:
        raise ShrinkError("no candidate backend: give --backend NAME (or set PARITY_BACKEND)")
    meta = _list(program, scenario_id, list(scenarios))
    op, layout, dtype = _operation(scenario_id, meta)
    space = Space(op, layout, dtype, _scenario_seed(scenario_id))
    target_file = Path(out or f"shrunk_{meta['function']}.py").absolute()
    if not target_file.stem.isidentifier():
        raise ShrinkError(f"{target_file}: a scenario module's name must be a Python identifier")
    work = Path(tempfile.mkdtemp(prefix="parity-shrink-"))
    try:
        pipeline = Pipeline(program, backend, timeout, list(trust), work)
        entry, failing = pipeline.run(meta["source"], only=scenario_id)
        target = _pick_target(entry, failing, check, scenario_id, backend)
        if target is None:
            log(f"parity shrink: {scenario_id} ends `{entry['status']}` under {backend}: nothing to shrink")
            return None
        log(f"parity shrink: {scenario_id} under {backend} fails `{target.check}` at {target.path}; shrinking "
            f"({space.original.describe()}; at most {max_examples} runs)")

        function, tags = meta["function"], meta.get("tags") or []
        results: dict = {}
        budget = {"runs": 0}

        aborted: list = []  # a run that could not be made: the search stops, the error is the command's

        def reproduces(case: Case) -> bool:
            key = case.key()
            if key not in results:
                if budget["runs"] >= max_examples or aborted:
                    return False  # out of runs: the smallest case found so far stands
                budget["runs"] += 1
                folder = work / f"case-{budget['runs']}"
                folder.mkdir()
                module = folder / target_file.name
                module.write_text(render(op, case, function, tags, "A case parity shrink tries."))
                try:
                    found = failed_checks(pipeline.run(str(module))[0])
                except ShrinkError as error:
                    aborted.append(error)
                    return False
                results[key] = any((c, p) == (target.check, target.path) for c, p, _ in found)
                shutil.rmtree(folder, ignore_errors=True)
            return results[key]

        class Reproduced(Exception):
            def __init__(self, case):
                super().__init__(case.describe())
                self.case = case

        class StartFrom(ExampleDatabase):
            """Hands Hypothesis the original case as a failure seen before, to shrink. Under the secondary key: a
            primary entry that still fails is taken as shrunk already and not shrunk again."""

            def __init__(self, choices):
                super().__init__()
                self.value = choices_to_bytes(choices)

            def fetch(self, key):
                return [self.value] if key.endswith(b".secondary") else []

            def save(self, key, value):
                pass

            def delete(self, key, value):
                pass

        @settings(database=StartFrom(space.original_choices()), phases=[Phase.reuse, Phase.shrink],
                  max_examples=max_examples, deadline=None, report_multiple_bugs=False, print_blob=False,
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
        @given(space.strategy())
        def search(case):
            if reproduces(case):
                raise Reproduced(case)

        # The same shrink every time: Hypothesis's own random choices come from a fixed seed (its @seed and
        # derandomize would switch the database, and with it the starting case, off).
        if not hasattr(hypothesis.core, "threadlocal"):
            raise ShrinkError(f"Hypothesis {hypothesis.__version__} is not the one parity shrink was written for: "
                              "install requirements/lock.txt's")
        hypothesis.core.threadlocal._hypothesis_global_random = random.Random(0)
        best = None
        try:
            search()
        except Reproduced as found:
            best = found.case
        finally:
            hypothesis.core.threadlocal._hypothesis_global_random = None
        if aborted:
            raise aborted[0]
        if best is None:
            raise ShrinkError(f"{scenario_id}: the failure did not reproduce in a scenario module of its own, from the "
                              "registry entry's inputs")
        runs = budget["runs"]
        def header(repro, message):
            return _header(scenario_id, backend, target, space.original, best, runs, repro, message)

        target_file.write_text(render(op, best, function, tags, header("(being verified)", "")))
        final, _ = pipeline.run(str(target_file))  # the written file itself reproduces it, and gives the repro command
        messages = [m for c, p, m in failed_checks(final) if (c, p) == (target.check, target.path)]
        if not messages:
            raise ShrinkError(f"{target_file}: the written scenario did not reproduce `{target.check}` at "
                              f"{target.path}")
        target_file.write_text(render(op, best, function, tags, header(final["repro"], messages[0])))
        log(f"parity shrink: {best.describe()} still fails `{target.check}` at {target.path} ({runs} runs)")
        log(f"  wrote  {target_file}")
        log(f"  repro  {final['repro']}")
        return target_file
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _scenario_seed(scenario_id: str) -> int:
    from parity._scenario import seed_for

    return seed_for(scenario_id)


def main(program: str, scenario_id: str, backend: str, out: str, scenarios: list, max_examples: int, timeout: float,
         check: str, trust: list) -> bool:
    """What `parity shrink` (src/parity/run/shrink.cc) calls: whether it wrote a scenario; ShrinkError's message is
    its exit 2."""
    import os
    import sys

    # Hypothesis keeps caches in ./.hypothesis unless told otherwise: the command leaves nothing but its module.
    storage = tempfile.mkdtemp(prefix="parity-shrink-hypothesis-")
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", storage)
    try:
        written = shrink(program, scenario_id, backend, out=out or None, scenarios=scenarios,
                         max_examples=max_examples, timeout=timeout, check=check or None, trust=trust,
                         log=lambda line: print(line, file=sys.stderr))
    finally:
        shutil.rmtree(storage, ignore_errors=True)
    return written is not None
