"""Holds pyproject.toml's dependencies, requirements/*.in and requirements/lock.txt to one another (issue #19): run it
after editing any of them (`python scripts/check_requirements.py`); tests/requirements runs it on every test run.
Exits 1 and prints each disagreement, naming the file and the package."""
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

IN_FILES = ("runtime.in", "corpus.in", "test.in")
# A lock entry: "name==version \" at the start of a line, then its "--hash=sha256:..." continuation lines.
LOCK_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)\s*\\?\s*$")
LOCK_HASH = re.compile(r"^\s+--hash=sha256:[0-9a-f]{64}\s*\\?\s*$")


def read_lock(path: Path) -> tuple[dict[str, tuple[Version, int]], list[str]]:
    """{canonical name: (pinned version, number of hashes)}, and the lines that are neither an entry, a hash nor a
    comment (a lock pip-compile wrote has none)."""
    entries, strays, current = {}, [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if (entry := LOCK_ENTRY.match(line)):
            current = canonicalize_name(entry["name"])
            entries[current] = (Version(entry["version"]), 0)
        elif LOCK_HASH.match(line) and current is not None:
            version, hashes = entries[current]
            entries[current] = (version, hashes + 1)
        else:
            strays.append(f"{path.name}:{number}: not an exact pin or a sha256 hash: {line.strip()}")
    return entries, strays


def read_in(path: Path) -> list[Requirement]:
    """The requirements of a .in file; its -c/-r lines and comments aside."""
    requirements = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        try:
            requirements.append(Requirement(line))
        except InvalidRequirement as error:
            raise ValueError(f"{path}:{number}: {error}") from None
    return requirements


def pinned(requirement: Requirement, lock: dict, where: str) -> list[str]:
    """What is wrong with the lock's pin of one requirement: missing, or a version its specifier refuses."""
    name = canonicalize_name(requirement.name)
    if name not in lock:
        return [f"{where}: {requirement.name} is not in requirements/lock.txt"]
    version = lock[name][0]
    if not requirement.specifier.contains(version, prereleases=True):
        return [f"{where}: {requirement} but requirements/lock.txt pins {requirement.name}=={version}"]
    return []


def problems(repo: Path) -> list[str]:
    """Every disagreement between pyproject.toml, requirements/*.in and requirements/lock.txt of the tree at repo."""
    project = tomllib.loads((repo / "pyproject.toml").read_text())
    lock, found = read_lock(repo / "requirements" / "lock.txt")
    found += [f"lock.txt: {name}=={version} has no hash" for name, (version, hashes) in lock.items() if not hashes]
    for name in IN_FILES:
        found += [p for r in read_in(repo / "requirements" / name) for p in pinned(r, lock, f"requirements/{name}")]
    dependencies = [Requirement(r) for r in project["project"]["dependencies"]]
    found += [p for r in dependencies for p in pinned(r, lock, "pyproject.toml [project] dependencies")]
    # tests/install builds without isolation, from the lock: the build backend pyproject names must be the locked one.
    found += [p for r in map(Requirement, project["build-system"]["requires"])
              for p in pinned(r, lock, "pyproject.toml [build-system] requires")]
    runtime = {canonicalize_name(r.name) for r in read_in(repo / "requirements" / "runtime.in")}
    declared = {canonicalize_name(r.name) for r in dependencies}
    found += [f"pyproject.toml [project] dependencies name {n}, requirements/runtime.in does not"
              for n in sorted(declared - runtime)]
    found += [f"requirements/runtime.in names {n}, pyproject.toml [project] dependencies do not"
              for n in sorted(runtime - declared)]
    return found


def main() -> int:
    repo = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    found = problems(repo)
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
