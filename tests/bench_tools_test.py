"""The benchmarks' own helpers (bench/*.py): what they leave behind outside their temporary directories."""
import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(REPO / "bench"))
import pipeline_bench  # noqa: E402


class Report:
    """What file_system_state records into: pipeline_bench.Report's figures."""

    def __init__(self):
        self.figures = {}


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm: the tmpfs probe is not taken")
def test_the_file_system_probe_leaves_nothing_in_the_tmpfs(tmp_path, monkeypatch, capsys):
    """file_system_state times a file's creation in the benchmark's directory and in /dev/shm: the first directory's
    files stay until the benchmark removes its own (pipeline_bench.fresh's reason), the tmpfs's go at once (they had
    stayed, 300 files in memory a run)."""
    made, real = [], tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        made.append(Path(real(*args, **kwargs)))
        return str(made[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    pipeline_bench.file_system_state(tmp_path, Report())
    assert "in a tmpfs" in capsys.readouterr().out
    mine = [d for d in made if d.parent == tmp_path]
    tmpfs = [d for d in made if d.parent == Path("/dev/shm")]
    assert len(mine) == 1 and len(tmpfs) == 1, made
    assert len(list(mine[0].iterdir())) == 300
    assert not tmpfs[0].exists(), tmpfs
