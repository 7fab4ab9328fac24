"""Hostile JSON from a results directory or a report (issue #16: D3, D4, D7's grid and shard count, D13, number
overflow): each is refused or made one scenario's error naming the file, never a crash or a hang."""
import json
import os
import struct
import subprocess
import threading

import pytest

from conftest import BIN, parity, read_json, statuses

DEEP = 200_000
DEEP_ARRAY = "[" * DEEP + "]" * DEEP


def manifest(run_dir):
    return run_dir / "manifest.json"


def edit_manifest(run_dir, change):
    doc = read_json(manifest(run_dir))
    change(doc)
    manifest(run_dir).write_text(json.dumps(doc))


def compare(gold, cand, tmp_path, *extra, timeout=120):
    return parity("compare", gold, cand, "--json", tmp_path / "r.json", "--no-pickle-probe", "-q", *extra,
                  timeout=timeout)


def assert_refused_naming(proc, name):
    """Exit 2 (a usage error), not a signal, with the file named."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert str(name) in proc.stderr, proc.stderr


def first_id(run_dir):
    return read_json(manifest(run_dir))["scenarios"][0]["id"]


# --- D3: no std::regex on a declared difference's id ---------------------------------------------------------------

def test_a_forty_kilobyte_difference_id_is_refused_naming_the_manifest(pair_copy, tmp_path):
    gold, cand = pair_copy
    long_id = "ab-" * 13_000 + "x_"  # 39 KB; the last word is not lowercase letters and digits
    edit_manifest(cand, lambda m: m["backend"].__setitem__(
        "differences", [{"id": long_id, "check": "values", "reason": "r"}]))
    proc = compare(gold, cand, tmp_path)
    assert_refused_naming(proc, manifest(cand))
    assert "is not lowercase words" in proc.stderr


def test_a_long_well_formed_difference_id_and_a_hostile_glob_are_accepted(pair_copy, tmp_path):
    gold, cand = pair_copy
    difference = {"id": "ab-" * 13_000 + "c", "check": "values", "reason": "r",
                  "scenarios": ["*a" * 2_000 + "b"], "match": {"message": "*x" * 2_000 + "y"}}
    edit_manifest(cand, lambda m: m["backend"].__setitem__("differences", [difference]))
    proc = compare(gold, cand, tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert all(s["status"] == "pass" for s in statuses(tmp_path / "r.json").values())


# --- D4: depth limited while parsing, for every JSON parity reads -----------------------------------------------

def deep_header_file(path, major):
    """Replaces a result file by one whose header nests DEEP levels: format 1's JSON `blobs` (copying that value
    overflowed the stack), or format 2's binary header, lists in lists."""
    if major == 1:
        body = ('{"outputs": {"kind": "none"}, "blobs": ' + DEEP_ARRAY + '}').encode()
    else:
        list_tag, fresh, same_name, one_item = b"\x01", b"\x00", b"\x01", b"\x01"
        name = b"\x0dbuiltins.list"
        body = list_tag + fresh + name + one_item + (list_tag + same_name + one_item) * DEEP + b"\x03"
    path.write_bytes(b"PARITYR\n" + struct.pack("<IIQ", major, 0, len(body)) + body)


@pytest.mark.parametrize("major, why", [(1, "nested deeper"), (2, "nested too deeply")])
def test_a_result_header_nested_deep_is_that_scenarios_error(pair_copy, tmp_path, major, why):
    gold, cand = pair_copy
    entry = read_json(manifest(cand))["scenarios"][0]
    deep_header_file(cand / entry["file"], major)
    proc = compare(gold, cand, tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = statuses(tmp_path / "r.json")
    bad = report[entry["id"]]
    assert bad["status"] == "error"
    message = " ".join(c["message"] for c in bad["checks"] if not c["ok"])
    assert entry["file"].split("/")[-1] in message and why in message, message
    assert [s["status"] for i, s in report.items() if i != entry["id"]] == ["pass"] * (len(report) - 1)


def test_a_manifest_field_nested_deep_is_refused_naming_the_manifest(pair_copy, tmp_path):
    gold, cand = pair_copy
    text = manifest(cand).read_text()
    manifest(cand).write_text(text.replace('"environment":', '"deep": ' + "[" * 100_000 + "]" * 100_000
                                           + ', "environment":', 1))
    assert_refused_naming(compare(gold, cand, tmp_path), manifest(cand))


@pytest.fixture
def report_json(pair, tmp_path):
    gold, cand = pair
    parity("compare", gold, cand, "--json", tmp_path / "r.json", "--no-pickle-probe", "-q", check=0)
    return tmp_path / "r.json"


def nest_into_report(report, tmp_path, value_text):
    """A copy of the compare JSON with `value_text` (raw JSON) as an extra top-level field."""
    text = report.read_text()
    assert text.startswith("{")
    out = tmp_path / "hostile.json"
    out.write_text('{"deep": ' + value_text + ", " + text[1:])
    return out


def test_report_html_of_a_compare_json_nested_deep_is_refused_naming_it(report_json, tmp_path):
    hostile = nest_into_report(report_json, tmp_path, DEEP_ARRAY)
    proc = parity("report", hostile, "--html", tmp_path / "r.html")
    assert_refused_naming(proc, hostile)
    assert "nested deeper" in proc.stderr


def test_a_baseline_nested_deep_is_refused_naming_it(pair, report_json, tmp_path):
    gold, cand = pair
    hostile = nest_into_report(report_json, tmp_path, DEEP_ARRAY)
    proc = compare(gold, cand, tmp_path, "--baseline", hostile)
    assert_refused_naming(proc, hostile)


def test_shard_times_nested_deep_are_refused_naming_the_file(pair, tmp_path):
    times = tmp_path / "times.json"
    times.write_text('{"format": "parity-manifest", "scenarios": ' + DEEP_ARRAY + "}")
    proc = parity("run", "--backend", "gold", "--shard", "1/2", "--shard-times", times, "--out", tmp_path / "o")
    assert_refused_naming(proc, times)


# --- numbers out of range name the file ---------------------------------------------------------------------------

def test_a_number_overflow_in_a_baseline_names_the_file(pair, report_json, tmp_path):
    gold, cand = pair
    hostile = tmp_path / "overflow.json"
    hostile.write_text(report_json.read_text().replace('"version":', '"huge": 1e999, "version":', 1))
    proc = compare(gold, cand, tmp_path, "--baseline", hostile)
    assert_refused_naming(proc, hostile)
    assert "number overflow" in proc.stderr


def test_a_number_overflow_in_shard_times_names_the_file(tmp_path):
    times = tmp_path / "times.json"
    times.write_text('{"format": "parity-manifest", "scenarios": [{"id": "a", "seconds": 1e999}]}')
    proc = parity("run", "--backend", "gold", "--shard", "1/2", "--shard-times", times, "--out", tmp_path / "o")
    assert_refused_naming(proc, times)
    assert "number overflow" in proc.stderr


# --- parse_json's two readers: a signed zero where an offset belongs -----------------------------------------------

def test_an_integer_minus_zero_pickle_offset_is_refused_as_a_signed_integer(pair_copy, tmp_path):
    """`-0` is a signed integer to nlohmann (is_number_unsigned: false), an integer 0 like any other to simdjson's DOM:
    parse_json leaves such a text to nlohmann (json_input.cc), so a manifest's `"pickle_offset": -0` stays what it was,
    no byte offset, and the manifest is refused naming the field, not read as an offset of 0."""
    gold, cand = pair_copy
    text = manifest(cand).read_text()
    offset = read_json(manifest(cand))["scenarios"][0]["pickle_offset"]
    tampered = text.replace(f'"pickle_offset": {offset}', '"pickle_offset": -0', 1)
    assert tampered != text
    manifest(cand).write_text(tampered)
    proc = parity("compare", gold, cand, "--json", tmp_path / "r.json", "-q", timeout=120)
    assert_refused_naming(proc, manifest(cand))
    assert "pickle_offset 0 is not a byte offset" in proc.stderr, proc.stderr


# --- D13: a mistyped record field is one scenario's error, named -------------------------------------------------

MISTYPED = [
    ("meta", lambda s: s.__setitem__("meta", None), "meta"),
    ("meta-list", lambda s: s.__setitem__("meta", [1]), "meta"),
    ("rtol", lambda s: s["meta"].__setitem__("rtol", "x"), "meta.rtol"),
    ("atol", lambda s: s["meta"].__setitem__("atol", [1]), "meta.atol"),
    ("tolerances", lambda s: s["meta"].__setitem__("tolerances", "loose"), "meta.tolerances"),
    ("tolerances-entry", lambda s: s["meta"].__setitem__("tolerances", {"outputs['m']": 1}),
     "meta.tolerances.outputs['m']"),
    ("tolerances-rtol", lambda s: s["meta"].__setitem__("tolerances", {"outputs['m']": {"rtol": "x"}}),
     "meta.tolerances.outputs['m'].rtol"),
    ("signed_zeros", lambda s: s["meta"].__setitem__("signed_zeros", "yes"), "meta.signed_zeros"),
    ("policy", lambda s: s["meta"].__setitem__("policy", "strict"), "meta.policy"),
    ("policy-layout", lambda s: s["meta"].__setitem__("policy", {"layout": 5}), "meta.policy.layout"),
    ("xfail", lambda s: s["meta"].__setitem__("xfail", "all"), "meta.xfail"),
    ("xfail-compare", lambda s: s["meta"].__setitem__("xfail", {"compare": 5}), "meta.xfail.compare"),
    ("xfail-compare-check", lambda s: s["meta"].__setitem__("xfail", {"compare": {"values": 5}}),
     "meta.xfail.compare.values"),
    ("source", lambda s: s["meta"].__setitem__("source", 5), "meta.source"),
    ("module", lambda s: s["meta"].__setitem__("module", 5), "meta.module"),
    ("function", lambda s: s["meta"].__setitem__("function", {}), "meta.function"),
    ("params", lambda s: s["meta"].__setitem__("params", 5), "meta.params"),
    ("tags", lambda s: s["meta"].__setitem__("tags", 5), "meta.tags"),
    # Unhashable tags and nested parameter values had failed the whole HTML report (exit 2, no report).
    ("tags-entry", lambda s: s["meta"].__setitem__("tags", ["ok", ["x"], {"a": 1}]), "meta.tags.1"),
    ("params-entry", lambda s: s["meta"].__setitem__("params", {"n": [[[1]]]}), "meta.params.n"),
    ("fidelity", lambda s: s.__setitem__("fidelity", [1]), "fidelity"),
    ("fidelity-digest", lambda s: s.__setitem__("fidelity", {"outputs['m']": 5}), "fidelity.outputs['m']"),
    ("error", lambda s: (s.__setitem__("status", "error"), s.__setitem__("error", "boom")), "error"),
    ("error-message", lambda s: (s.__setitem__("status", "error"), s.__setitem__("error", {"message": 5})),
     "error.message"),
    ("pickle_error", lambda s: s.__setitem__("pickle_error", 5), "pickle_error"),
]


@pytest.mark.parametrize("side", ["gold", "cand"])
@pytest.mark.parametrize("name,change,field", MISTYPED, ids=[m[0] for m in MISTYPED])
def test_a_mistyped_record_field_is_that_scenarios_error_naming_file_scenario_and_field(
        pair_copy, tmp_path, side, name, change, field):
    gold, cand = pair_copy
    tampered = gold if side == "gold" else cand
    target = first_id(tampered)
    edit_manifest(tampered, lambda m: change(m["scenarios"][0]))
    proc = compare(gold, cand, tmp_path, "--html", tmp_path / "r.html", "--junit", tmp_path / "r.xml")
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert (tmp_path / "r.html").is_file() and (tmp_path / "r.xml").is_file()
    report = statuses(tmp_path / "r.json")
    bad = report[target]
    assert bad["status"] == "error", bad
    message = bad["checks"][0]["message"]
    assert str(manifest(tampered)) in message and f"'{target}'" in message and f"{field} is " in message, message
    assert [s["status"] for i, s in report.items() if i != target] == ["pass"] * (len(report) - 1)


# --- D7: a values map's grid and a shard count from a file -----------------------------------------------------------

def test_report_html_of_a_values_map_with_a_huge_grid_ends(report_json, tmp_path):
    doc = read_json(report_json)
    scenario = doc["scenarios"][0]
    scenario["status"] = "fail"
    for grid, counts in (([10**18, 0], []), ([2, 2], [1]), ([10**18], [0]), (["x"], [0]), ([True, 1], [1])):
        scenario["checks"] = [{"check": "values", "ok": False, "path": "outputs['m']", "message": "values differ",
                               "details": {"map": {"grid": grid, "shape": [4, 3], "counts": counts,
                                                   "sizes": counts}}}]
        hostile = tmp_path / "grid.json"
        hostile.write_text(json.dumps(doc))
        proc = parity("report", hostile, "--html", tmp_path / "r.html", timeout=60)
        assert proc.returncode == 0, (grid, proc.stderr)
        assert "values differ" in (tmp_path / "r.html").read_text()


def test_junit_of_a_long_message_and_traceback_ends(report_json, tmp_path):
    """The JUnit writer searched each failed check's message for its traceback: quadratic in a report from
    elsewhere built for it (a 1.2 MB pair took 5 s; this one, minutes)."""
    doc = read_json(report_json)
    scenario = doc["scenarios"][0]
    scenario["status"] = "fail"
    scenario["checks"] = [{"check": "values", "ok": False, "path": "outputs['m']", "message": "a" * 6_400_000,
                           "details": {"traceback": "a" * 3_200_000 + "b"}}]
    hostile = tmp_path / "long.json"
    hostile.write_text(json.dumps(doc))
    proc = parity("report", hostile, "--junit", tmp_path / "r.xml", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "a" * 3_200_000 + "b" in (tmp_path / "r.xml").read_text()


def test_merge_of_shards_with_many_notices_and_declarations_ends(pair, tmp_path):
    """merge searched the merged list for each shard's notice, and every shard's differences for each declaration:
    quadratic in shard reports from elsewhere (two shards of 5,000 each took 40 s; these, minutes)."""
    gold, cand = pair
    shards = []
    for index in (1, 2):
        shard = tmp_path / f"s{index}.json"
        parity("compare", gold, cand, "--shard", f"{index}/2", "--json", shard, "-q", check=0)
        doc = read_json(shard)
        doc["notices"] = [{"kind": "recorded-differences", "message": f"notice {n} of shard {index}"}
                          for n in range(10_000)]
        doc["differences"] = [{"id": f"d{n}", "check": "values", "reason": "r", "match": "x", "scenarios": [],
                               "checks_explained": index, "scenarios_explained": 1} for n in range(10_000)]
        shard.write_text(json.dumps(doc))
        shards.append(shard)
    parity("merge", *shards, "--json", tmp_path / "m.json", check=0)
    merged = read_json(tmp_path / "m.json")
    assert len(merged["notices"]) == 20_000
    assert merged["differences"][7]["checks_explained"] == 3 and merged["differences"][7]["scenarios_explained"] == 2


@pytest.mark.parametrize("declared", [["x"], [{"id": 5}], [{"id": "d", "checks_explained": "1"}], {"id": "d"}])
def test_merge_names_the_shard_whose_declared_differences_are_malformed(pair, tmp_path, declared):
    """merge sums every shard's declared differences: a malformed entry in any shard failed with nlohmann's bare
    'cannot use value() with string', naming no file."""
    gold, cand = pair
    shards = [tmp_path / "s1.json", tmp_path / "s2.json"]
    for index, shard in enumerate(shards, 1):
        parity("compare", gold, cand, "--shard", f"{index}/2", "--json", shard, "-q", check=0)
    doc = read_json(shards[1])
    doc["differences"] = declared
    shards[1].write_text(json.dumps(doc))
    proc = parity("merge", *shards, "--json", tmp_path / "m.json", check=2)
    assert f"{shards[1]}: not a complete compare JSON" in proc.stderr and "differences" in proc.stderr, proc.stderr


@pytest.mark.parametrize("total", [10**8, 2**64 - 1])
def test_a_huge_recorded_shard_count_is_refused_quickly_naming_the_manifest(pair_copy, tmp_path, total):
    gold, cand = pair_copy
    ids = [s["id"] for s in read_json(manifest(gold))["scenarios"]]
    for run_dir in (gold, cand):
        edit_manifest(run_dir, lambda m: m["run"].__setitem__(
            "shard", {"index": 1, "total": total, "scenarios": ids, "times": {}, "times_from": None}))
    proc = compare(gold, cand, tmp_path, timeout=60)
    assert_refused_naming(proc, manifest(gold))
    assert "total" in proc.stderr


def test_a_sparse_manifest_is_refused_at_its_first_nul_naming_the_manifest(pair_copy, tmp_path):
    """A manifest of a few KB on disk that reads as hundreds of MB of zeros (a sparse file) is refused at its first
    NUL byte, which no JSON text holds, with the file and the byte named: before, compare read it whole into memory
    (a 3 GiB one took 4 GB and 6 s here, one larger than memory ran it out) and then called it malformed."""
    gold, cand = pair_copy
    with open(manifest(cand), "r+b") as out:
        out.truncate(0)
        out.write(b'{"format": "parity-manifest"')
        out.truncate(256 * 2**20)
    assert manifest(cand).stat().st_blocks * 512 < 2**20  # sparse: nothing large on disk
    proc = compare(gold, cand, tmp_path, timeout=60)
    assert_refused_naming(proc, manifest(cand))
    assert "byte 28 is NUL" in proc.stderr, proc.stderr


# --- files the user names: a FIFO, a directory, a sparse file --------------------------------------------------------

# Each reader given the named file; `tmp` holds the compare JSON report_json wrote (r.json).
NAMED_FILE_READERS = {
    "report": lambda named, tmp: ("report", named, "--html", tmp / "r.html"),
    "report --baseline": lambda named, tmp: ("report", tmp / "r.json", "--baseline", named, "--html", tmp / "r.html"),
    "merge": lambda named, tmp: ("merge", "--json", tmp / "m.json", named),
    "--shard-times": lambda named, tmp: ("run", "--backend", "gold", "--shard", "1/2", "--shard-times", named, "--out",
                                         tmp / "o"),
    "--config": lambda named, tmp: ("list", "--config", named),
}


# --shard-times reads a directory's manifest.json, and --config's own validator refuses a directory: not here.
NAMED_KINDS = [(reader, "fifo") for reader in NAMED_FILE_READERS] + [
    (reader, "directory") for reader in NAMED_FILE_READERS if reader not in ("--shard-times", "--config")]


@pytest.mark.parametrize("reader,kind", NAMED_KINDS)
def test_a_named_file_that_is_a_fifo_or_a_directory_is_refused_at_once_naming_it(report_json, tmp_path, reader, kind):
    """A compare JSON, a baseline, a shard's report, --shard-times' file and --config's file were read with an
    ifstream, whose open of a FIFO waits for a writer: the command hung for ever. Each is refused now, naming the file
    and what it is (a link to it is followed: the user named it); a directory, which the ifstream read as empty, too."""
    named = tmp_path / "named.json"
    os.mkfifo(named) if kind == "fifo" else named.mkdir()
    link = tmp_path / "link.json"
    link.symlink_to(named)
    for given in (named, link):
        proc = parity(*NAMED_FILE_READERS[reader](given, tmp_path), timeout=30)
        assert_refused_naming(proc, given)
        assert ("is a FIFO" if kind == "fifo" else "is a directory") in proc.stderr, proc.stderr


@pytest.mark.parametrize("reader", ["report", "report --baseline"])
def test_a_shells_process_substitution_is_read_not_refused_as_a_fifo(report_json, tmp_path, reader):
    """`parity report <(gunzip -c r.json.gz)`: the shell names a pipe it opened, /dev/fd/63, which was refused as a
    FIFO (that no writer might ever open). A pipe already open in the process is read to its end."""
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, (tmp_path / "r.json").read_bytes()),
                                              os.close(write_end)), daemon=True)
    writer.start()
    try:
        proc = subprocess.run([BIN, *map(str, NAMED_FILE_READERS[reader](f"/dev/fd/{read_end}", tmp_path))],
                              capture_output=True, text=True, timeout=60, pass_fds=[read_end])
    finally:
        os.close(read_end)
        writer.join(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "r.html").is_file()

@pytest.mark.parametrize("reader", NAMED_FILE_READERS)
def test_a_named_sparse_file_is_refused_at_its_first_nul_naming_it(report_json, tmp_path, reader):
    """A named file of a few KB on disk that reads as hundreds of MB of zeros is refused at its first NUL byte, which
    no JSON or TOML text holds, as a manifest is: not read whole into memory first."""
    named = tmp_path / "sparse.json"
    with open(named, "wb") as out:
        out.write(b'{"format": "parity-compare"')
        out.truncate(256 * 2**20)
    proc = parity(*NAMED_FILE_READERS[reader](named, tmp_path), timeout=60)
    assert_refused_naming(proc, named)
    assert "byte 27 is NUL" in proc.stderr, proc.stderr
