"""The pytest-and-pickle pipeline users build today, as pipeline_bench.py's reference: gold, candidate, compare passes.

Modelled on the pattern of cuDF's third-party integration tests (a pytest plugin, three pytest processes): the gold
and the candidate pass run every test function under their backend and append `(node id, return value)` to one
pickle stream; the compare pass loads both streams at start-up and, in place of each test's body, checks the two
results with `np.testing.assert_allclose`. It is written to be a fair opponent: one file per pass, no per-test
process, no per-test file, the candidate loaded the same way parity loads it (parity.backend), nothing parity does
not also do (its reports aside).

  python -m pytest -p reference_plugin --pass gold|candidate|compare --results DIR [--backend NAME] TESTS...
"""
import hashlib
import os
import pickle

import numpy as np
import pytest

_STREAM = "results-{}.pickle"


def pytest_addoption(parser):
    group = parser.getgroup("reference pipeline")
    group.addoption("--pass", dest="ref_pass", choices=["gold", "candidate", "compare"], required=True)
    group.addoption("--results", dest="ref_results", required=True, help="directory of the pickle streams")
    group.addoption("--backend", dest="ref_backend", default="fsproxy", help="candidate backend (a parity backend)")
    group.addoption("--rtol", dest="ref_rtol", type=float, default=1e-7)


def _read_stream(path):
    results = {}
    with open(path, "rb") as f:
        while True:
            try:
                key, value = pickle.load(f)
            except EOFError:
                return results
            results[key] = value


def _load_backend(name, install=True):
    from parity import backend

    backend.register_fixtures(os.environ["PARITY_FIXTURES"])
    loaded = backend.load(name)
    if install:
        loaded.install()
    return loaded


def pytest_configure(config):
    which, results = config.getoption("ref_pass"), config.getoption("ref_results")
    if which == "compare":
        # Unpickling the candidate's results needs its module (its array types), not its install().
        _load_backend(config.getoption("ref_backend"), install=False)
        config._ref_results = tuple(_read_stream(os.path.join(results, _STREAM.format(side)))
                                    for side in ("gold", "candidate"))
        return
    os.makedirs(results, exist_ok=True)
    config._ref_stream = open(os.path.join(results, _STREAM.format(which)), "wb")
    config._ref_backend = _load_backend(config.getoption("ref_backend")) if which == "candidate" else None


def pytest_unconfigure(config):
    stream = getattr(config, "_ref_stream", None)
    if stream is not None:
        stream.close()


@pytest.fixture
def xp(request):
    loaded = request.config._ref_backend if hasattr(request.config, "_ref_backend") else None
    return np if loaded is None else loaded.namespace()


@pytest.fixture
def rng(request):
    # Seeded from the node id, so that both passes draw the same numbers (what parity does with scenario ids).
    return np.random.default_rng(int.from_bytes(hashlib.sha256(request.node.nodeid.encode()).digest()[:8], "little"))


def assert_results_close(gold, candidate, rtol, path="result"):
    """Walks nested dicts, lists and tuples; arrays and numbers through np.testing.assert_allclose."""
    if isinstance(gold, dict):
        assert isinstance(candidate, dict) and gold.keys() == candidate.keys(), f"{path}: keys differ"
        for key in gold:
            assert_results_close(gold[key], candidate[key], rtol, f"{path}[{key!r}]")
    elif isinstance(gold, (list, tuple)):
        assert type(candidate) is type(gold) and len(candidate) == len(gold), f"{path}: sequences differ"
        for i, (g, c) in enumerate(zip(gold, candidate)):
            assert_results_close(g, c, rtol, f"{path}[{i}]")
    elif isinstance(gold, (np.ndarray, np.generic, float, int, complex)) and not isinstance(gold, bool):
        np.testing.assert_allclose(candidate, gold, rtol=rtol, atol=0, err_msg=path)
    else:
        assert candidate == gold, f"{path}: {candidate!r} != {gold!r}"


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    config = pyfuncitem.config
    key = pyfuncitem.nodeid
    if config.getoption("ref_pass") == "compare":
        gold, candidate = (side.get(key, KeyError) for side in config._ref_results)
        assert gold is not KeyError, f"{key}: no gold result"
        assert candidate is not KeyError, f"{key}: no candidate result"
        assert_results_close(gold, candidate, config.getoption("ref_rtol"))
        return True
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    loaded = config._ref_backend
    if loaded is None:
        result = pyfuncitem.obj(**args)
    else:  # as parity's worker calls a scenario under a candidate
        result = loaded.materialize(loaded.execute(pyfuncitem.obj, **args))
    pickle.dump((key, result), config._ref_stream, protocol=5)
    return True
