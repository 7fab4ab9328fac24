"""Unit tests of the scenario module's shortcuts: parameter names from code objects, lines without inspect."""
import functools
import inspect
import json
from pathlib import Path

import pytest

from parity import _scenario, discovery


def plain(xp, rng, n=3, *args, k, **kw):
    return xp, rng, n, args, k, kw


def positional_only(xp, /, rng, *rest):
    return xp


def keywords_only(**kw):
    local = 1
    return local, kw


@functools.wraps(plain)
def wrapper(*args, **kwargs):
    return plain(*args, **kwargs)


class Callable:
    def __call__(self, xp):
        return xp


@pytest.mark.parametrize("fn", [plain, positional_only, keywords_only, wrapper, Callable(), Callable().__call__,
                                functools.partial(plain, 1), lambda rng: rng])
def test_parameters_agree_with_inspect_signature(fn):
    names, takes_any = _scenario._parameters(fn)
    parameters = inspect.signature(fn).parameters
    assert names == frozenset(parameters)
    assert takes_any == any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def test_discovery_records_the_line_inspect_would(tmp_path):
    module = tmp_path / "lines.py"
    module.write_text('"""Lines."""\nimport parity\n\n\n@parity.scenario(params={"n": [1]})\n'
                      '# a comment between\ndef first(n):\n    return {"n": n}\n\n\n'
                      '@parity.scenario()\ndef second():\n    return {}\n')
    found = discovery.discover([str(module)])
    assert not found.errors, found.errors
    lines = {s.function: s.line for s in found.scenarios}
    assert lines == {"first": 5, "second": 11}
    for s in found.scenarios:
        assert s.line == inspect.getsourcelines(s.fn)[1]



PART_MODULES = {
    "a_first.py": "import parity\n@parity.scenario\ndef same(xp):\n    return 1\n@parity.scenario\ndef a(xp):\n    return 1\n",
    "b_broken.py": "raise RuntimeError('broken on purpose')\n",
    "c_plain.py": "import parity\n@parity.scenario(tags=['t'])\ndef c(xp):\n    return 1\n",
    "sub/e_more.py": "import parity\n@parity.scenario(params={'n': [1, 2]})\ndef e(xp, n):\n    return n\n",
}


def test_the_parts_of_a_discovery_merge_into_what_one_process_discovers(tmp_path):
    """`parity run -j N` has each worker import every N-th module (discover_part) and the first merge what the others
    found: the same scenarios, errors (ids that two paths both define among them), metadata and order as discover()."""
    for root in ("one", "two"):
        for name, text in PART_MODULES.items():
            (tmp_path / root / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / root / name).write_text(text)
    (tmp_path / "two" / "a_first.py").write_text(PART_MODULES["a_first.py"].replace("def a(", "def a2("))

    def plan(found):
        return ([(e["id"], e["meta"]) for e in discovery.plan_entries(found)],
                [(e.id, e.source, e.error["type"], e.error["message"]) for e in found.errors])

    paths = [str(tmp_path / "one"), str(tmp_path / "two")]
    whole = discovery.select(discovery.discover(paths), paths=paths)
    assert any(e[2] == "DuplicateScenario" for e in plan(whole)[1]) and len(plan(whole)[0]) >= 5
    for parts in (2, 3):
        found = [discovery.discover_part(paths, k, parts) for k in range(parts)]
        merged = discovery.merge(found[0], [discovery.part_payload(p) for p in found[1:]])
        assert plan(discovery.select(merged, paths=paths)) == plan(whole)
        # Each scenario is routed to the part that imported it, and that part can run it.
        for entry in discovery.plan_entries(merged):
            assert (entry["file"], entry["id"]) in discovery.runnable(found[entry["part"]])
    selected = discovery.select(merged, keyword="t or a2", paths=paths)
    assert [s.id for s in selected.scenarios] == [s.id for s in discovery.select(whole, keyword="t or a2").scenarios]
    assert 0 < len(selected.scenarios) < len(whole.scenarios)


def test_a_fork_servers_discovery_freezes_each_module_it_imports(tmp_path):
    """discover_part(freeze=True), a fork server's (worker.cc), leaves each imported module's objects out of the
    collector's generations (gc.freeze, which its forks would do anyway), so that later imports' collections do not
    traverse them; it finds what discover_part without it finds, which freezes nothing."""
    import gc

    for name, text in PART_MODULES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    paths = [str(tmp_path)]

    def found(part):
        return [(m.name, m.error, [(s.id, s.metadata(), where) for s, where in m.scenarios]) for m in part.modules]

    def tracked(part):
        functions = [s.fn for m in part.modules for s, _ in m.scenarios]
        ids = {id(o) for o in gc.get_objects()}
        return [id(fn) in ids for fn in functions]

    plain = discovery.discover_part(paths, 0, 1)
    assert gc.get_freeze_count() == 0 and all(tracked(plain))
    try:
        frozen = discovery.discover_part(paths, 0, 1, freeze=True)
        assert gc.get_freeze_count() > 0 and tracked(frozen) and not any(tracked(frozen))
    finally:
        gc.unfreeze()
    assert found(frozen) == found(plain)


def test_the_plan_text_is_the_json_text_of_the_plan_entries(tmp_path):
    """The worker's ready reply carries discovery.plan_text as it is (worker.cc): the JSON of plan_entries, lone
    surrogates replaced as json_text replaces them, in nlohmann's compact form (keys sorted, no spaces), which the
    supervisor reads without a document (protocol.h, read_plain_ready); None where JSON has no text (a NaN) or the keys
    do not sort, so that the worker converts the entries as before and refuses them the same way."""
    module = tmp_path / "texts.py"
    module.write_text('import parity\n@parity.scenario(params={"s": ["caf\\u00e9", "\\ud800"]}, tags=["\\u00fc"])\n'
                      'def one(xp, s):\n    return 1\n')
    found = discovery.select(discovery.discover([str(module)]))
    text = discovery.plan_text(discovery.plan_entries(found))
    assert json.loads(text) == json.loads(_scenario.json_text(discovery.plan_entries(found)))
    assert text == json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert "caf\u00e9" in text and "\ud800" not in text
    assert discovery.plan_text([{"meta": {1: "a", "b": 2}}]) is None
    found.scenarios[0].options["atol"] = float("nan")
    assert discovery.plan_text(discovery.plan_entries(found)) is None


PLAN_DECLARATIONS = '''import numpy as np
import parity
@parity.scenario()
def plain(xp):
    return 1
@parity.scenario(params={"s": ['q"uote', "back\\\\slash", "tab\\t", "caf\\u00e9", "\\ud800", "\\x01"], "n": [1, 2.5],
                         "d": [np.float32, None, (1, "a")]})
def params(xp, s, n, d):
    return 1
'''
PLAN_OPTIONS = ["rtol=1e-7", "atol=0.0", "rtol=-0.0", "tolerances={'outputs': {'rtol': 1.0}}", "signed_zeros=True",
                "policy={'dtype': 'kind'}", "tags=['t']", "xfail={'gold': 'why'}", "timeout=2"]


def test_the_plan_text_made_from_the_discovery_is_plan_texts_of_its_entries(tmp_path):
    """discovery.plan_text_of (the worker's ready reply, worker.cc) fills in the text of a scenario declared with no
    options from its fields: it is plan_text(plan_entries(found)) for such scenarios, for scenarios with each option
    set, for ids that need escapes, pytest's tests, the bundled corpus, and declarations changed after discovery to
    what compares equal to a default but is written otherwise (0 for False); None where plan_text is None."""
    text = PLAN_DECLARATIONS + "".join(f"@parity.scenario({option})\ndef option{k}(xp):\n    return 1\n"
                                       for k, option in enumerate(PLAN_OPTIONS))
    (tmp_path / "declared.py").write_text(text)
    (tmp_path / "test_suite.py").write_text("import pytest\n@pytest.mark.parametrize('n', [1, 2])\n"
                                            "def test_one(xp, n):\n    assert n\n")
    corpus = Path(__file__).resolve().parents[1] / "scenarios"
    for paths in ([str(tmp_path)], [str(corpus)]):
        found = discovery.select(discovery.discover(paths), paths=paths)
        assert len(found.scenarios) >= 20
        assert discovery.plan_text_of(found) == discovery.plan_text(discovery.plan_entries(found))
    found = discovery.select(discovery.discover([str(tmp_path)]), paths=[str(tmp_path)])
    first = found.scenarios[0]
    assert first.function == "plain"
    for name, equal_to_default in (("signed_zeros", 0), ("tags", ()), ("tolerances", {}), ("rtol", None)):
        saved, first.options = first.options, dict(first.options, **{name: equal_to_default})
        assert discovery.plan_text_of(found) == discovery.plan_text(discovery.plan_entries(found)), name
        first.options = saved
    first.line = True
    assert discovery.plan_text_of(found) == discovery.plan_text(discovery.plan_entries(found))
    first.options = dict(first.options, atol=float("nan"))
    assert discovery.plan_text_of(found) is None


def test_a_scenario_declared_with_no_options_gets_the_options_checked_defaults_give(tmp_path):
    """@parity.scenario() skips the options' checks (most scenarios declare none): its options are what checking
    every default gives, value and type, a dict of its own, and declaring a default explicitly changes nothing."""
    module = tmp_path / "defaults.py"
    module.write_text("import parity\n@parity.scenario()\ndef a(xp):\n    return 1\n@parity.scenario\ndef b(xp):\n"
                      "    return 1\n@parity.scenario(rtol=None, tags=[], params={}, signed_zeros=False)\n"
                      "def c(xp):\n    return 1\n")
    checked = _scenario._check_options(None, None, None, False, None, None, None, None)
    found = discovery.discover([str(module)])
    assert [s.function for s in found.scenarios] == ["a", "b", "c"]
    for s in found.scenarios:
        assert s.options == checked and s.params == {}
        assert [type(v) for v in s.options.values()] == [type(v) for v in checked.values()]
        assert list(s.options) == list(checked)
    assert len({id(s.options) for s in found.scenarios}) == 3
    assert len({id(s.options["tags"]) for s in found.scenarios}) == 3
    with pytest.raises(ValueError, match="signed_zeros must be True or False"):
        _scenario.scenario(signed_zeros=0)


def test_a_tolerance_too_large_for_a_float_is_the_decorators_value_error_naming_it():
    """math.isfinite(10**400) raised a bare OverflowError that named no argument."""
    with pytest.raises(ValueError, match=r"rtol must be a finite number >= 0, got 1000"):
        _scenario.scenario(rtol=10**400)
