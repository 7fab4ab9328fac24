#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and run parity: apt packages and a pinned virtualenv.
# Idempotent: a second run installs nothing and takes about a second.
#   PARITY_PYTHON  interpreter the virtualenv is made from (default: /usr/bin/python3, Debian's, which
#                  ships the libpython that the embedded interpreter links against)
#   PARITY_VENV    where the virtualenv lives (default: <repo>/.venv)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${PARITY_VENV:-$repo/.venv}
base_python=${PARITY_PYTHON:-/usr/bin/python3}

apt_packages=(build-essential cmake ninja-build pkg-config python3 python3-dev python3-venv
  pybind11-dev libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev libpugixml-dev libxxhash-dev libsimdjson-dev
  clang libclang-rt-14-dev llvm  # scripts/fuzz.sh: clang 14, its libFuzzer/ASan/UBSan runtimes, llvm-symbolizer
  clang-format-14                # tests/format: the C++ sources as .clang-format lays them out
  chromium fonts-dejavu-core     # tests/browser: the HTML report in a real browser (playwright drives it)
  procps)                        # tests/soak: pgrep counts the parity processes a round leaves behind

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating virtualenv $venv from $base_python"
  "$base_python" -m venv "$venv"
fi
# The lock (requirements/README.md) pins every package, transitive ones too, with hashes; pip refuses anything else.
# Reinstall only when the lock changes: the stamp holds its checksum.
lock="$repo/requirements/lock.txt"
stamp="$venv/.parity-requirements.sha256"
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing the locked Python packages into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes -r "$lock"
  echo "$want" >"$stamp"
fi
echo "setup: ready (python: $venv/bin/python)"
