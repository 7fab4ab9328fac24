"""Self-tests: each broken backend of fixtures/broken/ (one per real bug of the issue) fails exactly its expected
check at its expected path over tests/selftest/scenarios, with a message a maintainer can act on, and nothing else."""

import pytest

from e2e_test import REPO, compare, failing, run  # the shared e2e helpers (tests/conftest.py), not a copy of them

SCENARIOS = REPO / "tests" / "selftest" / "scenarios"
VECTORIZE = "callables.vectorize_output"


def vectorize_unwritable(candidate_check="serialize"):
    """The np.vectorize output never travels: parity's writer refuses it on the gold side, and on the candidate
    side too unless the backend's own transport raised first (an `error`)."""
    return {(VECTORIZE, "serialize", "gold"), (VECTORIZE, candidate_check, "candidate")}


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    out = tmp_path_factory.mktemp("selftest") / "gold"
    run("gold", out, "--scenarios", SCENARIOS, check=1)  # the vectorize output is a serialize error
    return out


def check_messages(report):
    """{(id, check, path): message} of every failed check."""
    return {(s["id"], c["check"], c["path"]): c["message"]
            for s in report["scenarios"] for c in s["checks"] if not c["ok"]}


def compare_with(gold, tmp_path, backend):
    cand = tmp_path / backend
    run(backend, cand, "--scenarios", SCENARIOS, check=1)
    return compare(gold, cand, tmp_path, check=1)[1]


def test_gold_against_gold_fails_only_the_unwritable_vectorize_output(gold, tmp_path):
    report = compare_with(gold, tmp_path, "gold")
    assert failing(report) == vectorize_unwritable()
    message = check_messages(report)[(VECTORIZE, "serialize", "gold")]
    assert "outputs['f']" in message and "numpy.vectorize" in message


BE, VIEW, MM = "byteorder.big_endian_large", "strided.stacked_view", "memmaps.reshaped_from_1d"
FRAME, CSR = "objects.frame", "objects.csr"

# Every plain-ndarray output of the set (memmaps are not proxied), where bug 1's proxy stands in.
PROXIED = {BE: "outputs['be']", "byteorder.big_endian_small": "outputs['be']",
           "byteorder.native_large": "outputs['le']",
           VIEW: "outputs['view']", "strided.stacked_whole": "outputs['whole']",
           "strided.strided_1d": "outputs['every_other']", "callables.plain": "outputs['x']"}
LOST_BYTE_ORDER = ["'>f8' before, '<f8' after"]  # a subclass pickles in-band, which drops a big-endian order

CASES = [
    # Bug 1: cudf.pandas' proxy ndarray, no __reduce__: pickling drops _fsproxy_wrapped at every proxied output.
    ("broken.lossy_pickle", {**{(i, "pickle", f"{p}._fsproxy_wrapped"): ["loses its attribute"]
                                for i, p in PROXIED.items()},
                             (BE, "pickle", "outputs['be']"): LOST_BYTE_ORDER,
                             ("byteorder.big_endian_small", "pickle", "outputs['be']"): LOST_BYTE_ORDER}),
    # Bug 2: joblib's big-endian memmap path dies in the worker; the cause and the culprit must be in the message.
    ("broken.joblib_bigendian", {(BE, "error", "candidate"): [
        "BrokenProcessPool", "expected str, bytes or os.PathLike object, not NoneType", "outputs['be']", ">f8",
        "max_nbytes"]}),
    # Bug 2: pickle 2/4 and joblib.load make big-endian native, at any size.
    ("broken.native_byteorder", {(BE, "dtype", "outputs['be']"): [">f8", "<f8"],
                                 ("byteorder.big_endian_small", "dtype", "outputs['be']"): [">f8", "<f8"]}),
    # Bug 3: a non-contiguous stacked view arrives with its tail zeroed; its strides are kept, so only values.
    ("broken.strided_ipc", {(VIEW, "values", "outputs['view']"): ["Mismatched elements", "| 0.0"]}),
    # Bug 4: joblib rebuilds the reshaped memmap in its 1-D base's order: F, strides (8, 40), wrong values.
    ("broken.memmap_reshape", {(MM, "layout", "outputs['m']"): ["F-contiguous", "(8, 40)", "(24, 8)"],
                               (MM, "values", "outputs['m']"): ["Mismatched elements"]}),
    # Issue #17: a TYPE_MAP wrapper (no ndarray subclass) with doubled values, compared through its __array__.
    ("broken.wrapper_values", {(i, "values", p): ["Mismatched elements"] for i, p in PROXIED.items()}),
    # Issue #17: a DataFrame transport that reverses rows: the index and every column differ, each at its path.
    ("broken.reorder_rows", {(FRAME, "values", f"outputs['df']{part}"): ["Mismatched elements: 4 / 5"]
                             for part in (".index.values", "['x']", "['n']")}),
    # Issue #17: a CSR conversion that unsorts each row: the same matrix, other indices, data and flags.
    ("broken.sparse_unsorted", {(CSR, "values", "outputs['m'].indices"): ["Mismatched elements"],
                                (CSR, "values", "outputs['m'].data"): ["Mismatched elements"],
                                (CSR, "values", "outputs['m'].has_sorted_indices"): ["True", "False"],
                                (CSR, "values", "outputs['m'].has_canonical_format"): ["True", "False"]}),
]


@pytest.mark.parametrize("backend, expected", CASES, ids=[c[0] for c in CASES])
def test_broken_backend_fails_exactly_its_check_with_a_useful_message(gold, tmp_path, backend, expected):
    report = compare_with(gold, tmp_path, backend)
    assert failing(report) == set(expected) | vectorize_unwritable()
    messages = check_messages(report)
    for place, texts in expected.items():
        for text in texts:
            assert text in messages[place], f"{place}: {text!r} not in {messages[place]!r}"
    failed_ids = {i for i, _, _ in expected} | {VECTORIZE}
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert {i for i, st in status.items() if st != "pass"} == failed_ids


def test_pickling_scenario_callables_surfaces_the_vectorize_output_instead_of_dropping_it(gold, tmp_path):
    # Bug 5: every other scenario callable pickles by reference and passes; the vectorize output is an error
    # on the candidate side with pickle's own words, and the gold side names its path.
    report = compare_with(gold, tmp_path, "broken.pickled_callables")
    assert failing(report) == vectorize_unwritable(candidate_check="error")
    messages = check_messages(report)
    for text in ("PicklingError", "outputs['f']", "Can't pickle <ufunc '_clip (vectorized)'>"):
        assert text in messages[(VECTORIZE, "error", "candidate")], text
    assert "outputs['f']" in messages[(VECTORIZE, "serialize", "gold")]
    status = {s["id"]: s["status"] for s in report["scenarios"]}
    assert {i for i, st in status.items() if st != "pass"} == {VECTORIZE}
