"""cmake/parity_scenario_check.py, the per-scenario CTest tests' checker: its index of a shared run's entries by id
judges and words every scenario as the whole document does (the end-to-end CTest runs: tests/pytest_suites)."""
import json
import marshal
import os
import sys
from pathlib import Path

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(REPO / "cmake"))
import parity_scenario_check as check  # noqa: E402 - beside ParityScenarioTests.cmake


def colliding_ids():
    """Two ids whose CRC-32 is the same (a well-known pair), so that they share one file of the index."""
    pair = ("plumless", "buckeroo")
    assert check.bucket_name(pair[0]) == check.bucket_name(pair[1])
    return pair


def entries(ids):
    statuses = ["ok", "error", "fail", "xfail", "crash"]
    made = []
    for n, scenario_id in enumerate(ids):
        status = statuses[n % len(statuses)]
        made.append({"id": scenario_id, "status": status, "message": f"message {n}",
                     "error": {"type": "ValueError", "message": f"boom {n}", "traceback": "tb"} if n % 2 else None,
                     "checks": [{"check": "values", "ok": False, "path": "outputs['x']", "message": "differs"}],
                     "repro": f"parity compare --only '{scenario_id}'"})
    return made


def judged(capsys, judge, out, ids):
    """{id: (exit code, what it printed)} for every id and one missing."""
    result = {}
    for scenario_id in [*ids, "missing.one"]:
        code = judge(str(out), scenario_id)
        result[scenario_id] = (code, capsys.readouterr().out)
    return result


def single_scenario_run(tmp_path):
    """A results directory holding one scenario, m.s, and write(status), which writes its manifest again with a
    stamp (mtime) that differs from the last even where the file system's clock is coarse."""
    results = tmp_path / "gold"
    results.mkdir()
    manifest = results / "manifest.json"

    def write(status):
        manifest.write_text(json.dumps({"backend": {"role": "gold"}, "scenarios": [{"id": "m.s", "status": status}]}))
        os.utime(manifest, ns=(0, 0) if manifest.stat().st_mtime_ns else (1, 1))

    return results, write


def test_the_index_judges_and_words_each_scenario_as_the_whole_document(tmp_path, capsys):
    ids = [*colliding_ids(), "plain.matrix", "test_x.py::test_y[a/b]", "ünïcode[ß]"]
    results = tmp_path / "gold"
    results.mkdir()
    (results / "manifest.json").write_text(json.dumps({"backend": {"role": "gold"}, "scenarios": entries(ids)}))
    report = tmp_path / "compare.json"
    report.write_text(json.dumps({"scenarios": entries(ids)}))
    for judge, out in ((check.check_run, results), (check.check_compare, report)):
        whole = judged(capsys, judge, out, ids)
        check.write_index(str(out))
        assert Path(check.index_dir(str(out))).is_dir()
        assert judged(capsys, judge, out, ids) == whole
        assert whole["missing.one"][0] == 1 and "missing.one: missing from" in whole["missing.one"][1]
        assert {code for code, _ in whole.values()} == {0, 1}


def test_a_shared_command_that_fails_leaves_no_index_of_an_earlier_run(tmp_path):
    report = tmp_path / "compare.json"
    writes = f"open({str(report)!r}, 'w').write('{{\"scenarios\": []}}')"
    assert check.shared(str(report), [sys.executable, "-c", writes]) == 0
    assert Path(check.index_dir(str(report))).is_dir()
    assert check.shared(str(report), [sys.executable, "-c", "raise SystemExit(2)"]) == 1
    assert not report.exists() and not Path(check.index_dir(str(report))).exists()


def test_an_index_older_than_its_document_is_not_trusted(tmp_path, capsys):
    """A run made by hand into the results directory after the setup test indexed it: each test judges the document
    as it is now, not the index of the run before."""
    results, write = single_scenario_run(tmp_path)
    write("ok")
    check.write_index(str(results))
    assert check.check_run(str(results), "m.s") == 0
    write("crash")
    assert check.check_run(str(results), "m.s") == 1
    assert "gold m.s: crash" in capsys.readouterr().out


def indexed_run(tmp_path, capsys):
    """(its ids, a results directory, what the document alone judges of each id) of a run then indexed."""
    ids = [*colliding_ids(), "plain.matrix"]
    results = tmp_path / "gold"
    results.mkdir()
    (results / "manifest.json").write_text(json.dumps({"backend": {"role": "gold"}, "scenarios": entries(ids)}))
    whole = judged(capsys, check.check_run, results, ids)
    check.write_index(str(results))
    return ids, results, whole


def test_a_damaged_index_file_leaves_the_judgement_to_the_document(tmp_path, capsys):
    """The index only mirrors the document: a file of it that does not read back (cut short, other bytes, the JSON it
    was once written in), or reads back as something of another shape, is passed over."""
    ids, results, whole = indexed_run(tmp_path, capsys)
    index = Path(check.index_dir(str(results)))
    written = {bucket: bucket.read_bytes() for bucket in index.iterdir()}
    for damage in (lambda b: b[: len(b) // 2], lambda b: b[:1], lambda b: b"", lambda b: b"\xff\xfe not marshal",
                   lambda b: b"{\"stamp\": [1, 2", lambda b: marshal.dumps([]),
                   lambda b: marshal.dumps({"stamp": None, "entries": []})):
        for bucket, data in written.items():
            bucket.write_bytes(damage(data))
        assert judged(capsys, check.check_run, results, ids) == whole
    stamped = {"stamp": check.stamp(str(results / "manifest.json")), "role": "gold", "entries": {ids[2]: "no entry"}}
    (index / check.bucket_name(ids[2])).write_bytes(marshal.dumps(stamped))
    assert judged(capsys, check.check_run, results, ids)[ids[2]] == whole[ids[2]]


def test_a_damaged_document_fails_each_test_with_its_name_not_a_traceback(tmp_path, capsys):
    report = tmp_path / "compare.json"
    for damage, why in ((b"{\"scenarios\": [", "Expecting"), (b"\xff\xfe", "codec can't decode"),
                        (b"{\"scenarios\": {}}", "not a parity manifest or report"),
                        (b"[1, 2]", "not a parity manifest or report")):
        report.write_bytes(damage)
        assert check.check_compare(str(report), "m.s") == 1
        assert f"m.s: cannot read {report}: " in (said := capsys.readouterr().out) and why in said
    report.unlink()
    assert check.check_compare(str(report), "m.s") == 1
    assert f"m.s: cannot read {report}: " in capsys.readouterr().out


def test_a_shared_command_that_writes_a_damaged_document_fails_with_its_name(tmp_path, capsys):
    report = tmp_path / "compare.json"
    writes = f"open({str(report)!r}, 'w').write('{{\"scenarios\": [')"
    assert check.shared(str(report), [sys.executable, "-c", writes]) == 1
    assert f"cannot read {report}: " in capsys.readouterr().err
    assert not Path(check.index_dir(str(report))).exists()


def test_the_index_is_what_judges_once_written(tmp_path, capsys, monkeypatch):
    """The index is read, not only kept: with the document unreadable to the checker, each id is still judged."""
    ids, results, whole = indexed_run(tmp_path, capsys)

    def no_document(where):
        raise AssertionError(f"read {where} though the index has the entry")

    monkeypatch.setattr(check, "read_document", no_document)
    for scenario_id in ids:
        assert (check.check_run(str(results), scenario_id), capsys.readouterr().out) == whole[scenario_id]


def test_an_index_whose_document_is_gone_says_so(tmp_path, capsys):
    results, write = single_scenario_run(tmp_path)
    write("ok")
    manifest = results / "manifest.json"
    check.write_index(str(results))
    manifest.unlink()
    assert check.check_run(str(results), "m.s") == 1
    assert f"m.s: cannot read {manifest}: " in capsys.readouterr().out


def test_entries_without_a_string_id_are_a_damaged_document(tmp_path, capsys):
    report = tmp_path / "compare.json"
    report.write_text(json.dumps({"scenarios": [{"id": 5, "status": "pass"}]}))
    assert check.check_compare(str(report), "m.s") == 1
    assert "not a parity manifest or report" in capsys.readouterr().out
    writes = f"open({str(report)!r}, 'w').write('{{\"scenarios\": [{{\"status\": \"pass\"}}]}}')"
    assert check.shared(str(report), [sys.executable, "-c", writes]) == 1
    assert "not a parity manifest or report" in capsys.readouterr().err


def test_an_id_listed_twice_is_judged_by_its_first_entry_either_way(tmp_path, capsys):
    results = tmp_path / "gold"
    results.mkdir()
    twice = [{"id": "m.s", "status": "ok"}, {"id": "m.s", "status": "crash"}]
    (results / "manifest.json").write_text(json.dumps({"backend": {"role": "gold"}, "scenarios": twice}))
    whole = judged(capsys, check.check_run, results, ["m.s"])
    check.write_index(str(results))
    assert judged(capsys, check.check_run, results, ["m.s"]) == whole
    assert whole["m.s"][0] == 0


def test_a_document_replaced_while_it_is_indexed_leaves_an_index_no_test_trusts(tmp_path, capsys, monkeypatch):
    results, write = single_scenario_run(tmp_path)
    write("ok")
    read_document = check.read_document

    def replaced_meanwhile(where):
        found = read_document(where)
        write("crash")
        return found

    monkeypatch.setattr(check, "read_document", replaced_meanwhile)
    check.write_index(str(results))
    monkeypatch.setattr(check, "read_document", read_document)
    assert check.check_run(str(results), "m.s") == 1
    assert "gold m.s: crash" in capsys.readouterr().out


def test_a_scenarios_check_imports_only_what_it_reads_with(tmp_path):
    # One process a scenario and side (~3,000 in CI): shutil and subprocess, which only the shared setup uses, took
    # ~18 of its ~55 ms (issue #20, target 6).
    import subprocess

    results, write = single_scenario_run(tmp_path)
    write("ok")

    def imported_by_a_check():
        proc = subprocess.run([sys.executable, "-S", "-I", "-X", "importtime",
                               str(REPO / "cmake/parity_scenario_check.py"), "run", str(results), "m.s"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and "gold m.s: ok" in proc.stdout, proc.stdout + proc.stderr
        return {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}

    imported = imported_by_a_check()  # no index: the document is read, with json
    assert "json" in imported, sorted(imported)  # the measurement itself works
    assert not imported & {"shutil", "subprocess"}, sorted(imported)
    # With the index the shared setup writes (CTest's case), json and the re it brings (~8-15 ms) are not needed.
    check.write_index(str(results))
    imported = imported_by_a_check()
    assert "zlib" in imported, sorted(imported)
    assert not imported & {"json", "re", "shutil", "subprocess"}, sorted(imported)
