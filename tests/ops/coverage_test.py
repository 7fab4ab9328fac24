"""`parity coverage`: exactly the NumPy callables a tiny scenario directory calls are covered, each with the scenarios
that call it; what it only names is not; the JSON's fields; selection flags as for `parity run`."""
import json
import socket
import textwrap

from e2e_test import parity

SCENARIOS = '''
"""Calls a few known NumPy callables, by xp, by a direct import and through the rng."""
import numpy as np
from numpy import linalg

import parity


@parity.scenario(params={"n": [2, 3]})
def calls(xp, rng, n):
    a = xp.cumsum(xp.ones(n))          # numpy.cumsum and numpy.ones
    named = xp.histogram                # named, never called: stays uncovered
    return {"a": a, "det": linalg.det(np.eye(2)), "draw": rng.normal(size=2), "masked": xp.ma.sum(a),
            "added": np.add(a, 1), "named": named is not None}


@parity.scenario
def other(xp):
    return {"b": xp.ones(1)}
'''

CALLED = {"numpy.cumsum", "numpy.ones", "numpy.linalg.det", "numpy.eye", "numpy.random.Generator.normal",
          "numpy.ma.sum", "numpy.add"}


def coverage(tmp_path, *extra, check=0, env=None):
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    (folder / "known.py").write_text(textwrap.dedent(SCENARIOS))
    out = tmp_path / "coverage.json"
    proc = parity("coverage", "--scenarios", folder, "--json", out, *extra, check=check, env=env)
    return proc, json.loads(out.read_text())


def host_tag():
    """This host's tag in the names of held temporary directories (temp_directory.h): FNV-1a of its name, 8 hex."""
    h = 2166136261
    for byte in socket.gethostname().encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


def test_a_coverage_removes_the_work_directory_one_killed_outright_left_and_its_own(tmp_path):
    """Its work directory (the run's results, the call records) is held while it lives; one killed with SIGKILL
    could not remove its own, and the next coverage under the same TMPDIR does, and says so."""
    temp = tmp_path / "tmp"
    left = temp / f"parity-coverage-{host_tag()}-k1lled"  # as a killed coverage leaves it: no process holds it
    (left / "results" / "results").mkdir(parents=True)
    (left / "results" / "results" / "big.parity").write_text("a killed run's result")
    proc, result = coverage(tmp_path, env={"TMPDIR": str(temp)})
    assert set(result["callables"]) == CALLED
    assert ("parity coverage: removed 1 temporary directory left by 'parity coverage' processes killed outright "
            "(parity-coverage-*)") in proc.stderr, proc.stderr
    assert list(temp.iterdir()) == [], list(temp.iterdir())


def test_exactly_the_called_callables_are_covered(tmp_path):
    proc, result = coverage(tmp_path)
    assert set(result["callables"]) == CALLED
    assert result["callables"]["numpy.ones"] == ["known.calls[n=2]", "known.calls[n=3]", "known.other"]
    assert result["callables"]["numpy.cumsum"] == ["known.calls[n=2]", "known.calls[n=3]"]
    assert "numpy.histogram" in result["uncovered"] and "numpy.histogram" not in result["callables"]
    assert "total: 7/" in proc.stdout and "numpy.histogram" in proc.stdout


def test_json_fields(tmp_path):
    _, result = coverage(tmp_path)
    namespaces = result["namespaces"]
    assert set(namespaces) == {"numpy", "numpy.linalg", "numpy.fft", "numpy.random.Generator", "numpy.ma"}
    assert namespaces["numpy.linalg"]["covered"] == 1 and namespaces["numpy.fft"]["covered"] == 0
    assert "numpy.fft.fft" in namespaces["numpy.fft"]["uncovered"]
    assert result["covered"] == len(CALLED) == sum(ns["covered"] for ns in namespaces.values())
    assert result["total"] == result["covered"] + len(result["uncovered"])
    assert result["percent"] == round(100.0 * result["covered"] / result["total"], 2)
    assert namespaces["numpy.linalg"]["percent"] == round(100.0 / namespaces["numpy.linalg"]["total"], 2)
    assert "test" in result["excluded"] and "numpy.test" not in result["uncovered"]


def test_selection_flags_as_for_run(tmp_path):
    _, result = coverage(tmp_path, "-k", "other")
    assert result["callables"] == {"numpy.ones": ["known.other"]}
    _, result = coverage(tmp_path, "--only", "known.calls[n=3]")
    assert result["callables"]["numpy.cumsum"] == ["known.calls[n=3]"]


def test_a_selection_of_nothing_exits_5(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "known.py").write_text(textwrap.dedent(SCENARIOS))
    parity("coverage", "--scenarios", folder, "-k", "nothing_matches_this", check=5)


def test_a_json_destination_that_cannot_be_written_is_refused_before_the_run(tmp_path):
    """Found after the whole gold run, a missing directory was a Python traceback (FileNotFoundError), a directory an
    IsADirectoryError; a FIFO or a link was replaced by a file. Refused at once now, as every report's destination."""
    coverage(tmp_path)  # writes the scenarios
    missing = tmp_path / "nowhere" / "c.json"
    proc = parity("coverage", "--scenarios", tmp_path / "scenarios", "--json", missing, check=2)
    assert f"parity coverage: --json {missing}: its directory" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "parity run:" not in proc.stderr  # nothing ran
    (tmp_path / "archive").mkdir()
    (tmp_path / "latest.json").symlink_to(tmp_path / "archive" / "c.json")
    parity("coverage", "--scenarios", tmp_path / "scenarios", "--json", tmp_path / "latest.json", check=0)
    assert (tmp_path / "latest.json").is_symlink() and json.loads((tmp_path / "archive" / "c.json").read_text())["total"]
