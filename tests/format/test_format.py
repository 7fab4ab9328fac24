"""The C++ sources are laid out as the committed .clang-format says (the guide's style, rule 6), checked with
clang-format 14, the Debian package scripts/setup.sh installs beside clang 14: another major version lays some
constructs out differently, so the check names its version rather than whatever clang-format is on PATH."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(os.environ["PARITY_REPO"])
CLANG_FORMAT = "clang-format-14"


def sources():
    """The .cc and .h files git knows in the working tree (tracked and untracked, not ignored)."""
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout: the sources to check are the ones git lists")
    listed = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                             "*.cc", "*.h"], capture_output=True, check=True).stdout.decode().split("\0")
    return [name for name in listed if name and (REPO / name).is_file()]


def test_every_cc_and_h_file_is_clang_formatted():
    if shutil.which(CLANG_FORMAT) is None:
        pytest.skip(f"{CLANG_FORMAT} is not on PATH: scripts/setup.sh installs it (Debian package {CLANG_FORMAT})")
    files = sources()
    assert len(files) > 50, files
    proc = subprocess.run([CLANG_FORMAT, "--dry-run", "--Werror", *files], cwd=REPO, capture_output=True, text=True)
    unformatted = sorted({line.split(":", 1)[0] for line in proc.stderr.splitlines() if ": error: " in line})
    assert proc.returncode == 0 and not unformatted, (
        f"not formatted as .clang-format says: {', '.join(unformatted) or proc.stderr[-2000:]}\n"
        f"fix: {CLANG_FORMAT} -i {' '.join(unformatted) or '<the files>'}\n{proc.stderr[-3000:]}")
