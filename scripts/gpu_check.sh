#!/usr/bin/env bash
# Builds parity on a GPU machine with no network, runs the bundled corpus gold vs the cupy candidate, reports in $OUT.
#
# No network there: the C++ libraries come as Debian .deb files fetched beforehand on a machine that has one (`apt-get
# download nlohmann-json3-dev libcli11-dev libpugixml-dev libpugixml1v5 libxxhash-dev libxxhash0 libsimdjson-dev
# libsimdjson14` into PARITY_DEBS, and pybind11-dev 2.11 or later, the first to support Python 3.12, from the GPU
# machine's distribution) and are unpacked with `dpkg -x` into a private prefix, which wins over the python's own
# pybind11; NumPy, CuPy, jinja2 and the corpus's libraries are the machine's own python3's. Python's headers and
# libpython, when that python3 lacks them, come likewise from PARITY_PYDEBS (its distribution's python3.X-dev,
# libpython3.X-dev and libpython3.X .debs).
# Tests, bench and the CTest scenarios are off.
# The lent machines run Ubuntu 24.04: with a sources list naming `noble main universe` (any
# folder, `apt-get -oDir::Etc::SourceList=... -oDir::State::Lists=... update`), `apt-get download pybind11-dev
# python3.12-dev libpython3.12-dev libpython3.12t64` fetches the rest; the Debian 12 libraries above run there.
#   OUT              where the reports and the log go (default: <repo>/gpu-out)
#   PARITY_DEBS      folder of the C++ libraries' .debs (default: <repo>/.gpu_carry/debs)
#   PARITY_PYDEBS    folder of Python's development .debs, used only when needed (default: <repo>/.gpu_carry/pydebs)
#   PARITY_PYTHON    the interpreter to build against and embed (default: python3 on PATH)
#   PARITY_JOBS      workers per run (default: the number of CPUs, at most 8: each holds a CUDA context)
#   PARITY_BUILD_DIR build directory (default: <repo>/build-gpu)
#   PARITY_BUILD_ONLY  1: stop after the build (to try the build part on a machine without a GPU)
#   PARITY_PREBUILT  a parity executable built by an earlier call (it is copied to $OUT): configure only, no build
#   PARITY_GOLD      a gold results directory of an earlier call (results.tar.gz in $OUT): no gold run
#   PARITY_RUN_LIMIT seconds each run may take before it is stopped cleanly (its finished scenarios kept; default none)
#   PARITY_COMPARE_ARGS  extra compare arguments (e.g. --strict-differences)
#   PARITY_OPS       the operation registry's sample, as for any run (full: the nightly's 20,000 scenarios)
# In $OUT: log, parity, cupy-manifest.json, report.json, junit.xml, report.html, results.tar.gz, and
# unexplained.json with unexplained.tar.gz (scripts/gpu_unexplained.py), the small ones to bring back from a full run.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$repo/gpu-out}
debs=${PARITY_DEBS:-$repo/.gpu_carry/debs}
pydebs=${PARITY_PYDEBS:-$repo/.gpu_carry/pydebs}
python=${PARITY_PYTHON:-$(command -v python3)}
build=${PARITY_BUILD_DIR:-$repo/build-gpu}
jobs=${PARITY_JOBS:-$(($(nproc) < 8 ? $(nproc) : 8))}
# A fixed prefix: the executable's RPATH names it, so a build from an earlier call runs as long as it is unpacked.
prefix=/tmp/parity-gpu-deps
mkdir -p "$out" "$prefix"
exec > >(tee -a "$out/log") 2>&1

step() { echo "=== $(date -u +%H:%M:%S) $*"; }
die() { echo "gpu_check: $*"; exit 2; }

step "machine"
{ uname -a; grep PRETTY_NAME /etc/os-release
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  "$python" -c 'import sys, numpy; print(sys.version.split()[0], sys.executable, "numpy", numpy.__version__)'
  "$python" -c 'import cupy; print("cupy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())'
  cmake --version | head -1; ninja --version; c++ --version | head -1; } 2>&1

step "unpacking the C++ libraries from $debs into $prefix"
ls "$debs"/*.deb >/dev/null 2>&1 || die "no .deb files in $debs (fetch them with apt-get download, see above)"
for deb in "$debs"/*.deb; do dpkg -x "$deb" "$prefix" || die "dpkg -x $deb failed"; done

# Release at -O2, the optimization the project is kept warning-free at (GCC 12's -O3 warns in libstdc++'s memcpy); no
# debug info, so that the executable is small enough to bring back ($OUT/parity) for a later call.
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DPython_EXECUTABLE="$python"
            -DPARITY_BUILD_TESTS=OFF -DPARITY_REGISTER_SCENARIOS=OFF -DPARITY_BUILD_BENCH=OFF)
prefix_path="$prefix/usr"
pybind11_dir=$("$python" -m pybind11 --cmakedir 2>/dev/null) && prefix_path="$prefix_path;$pybind11_dir"
cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix_path")

# Embedding needs Python.h and libpython; a distribution's python without its -dev packages has neither.
read -r include libdir ldlibrary < <("$python" -c 'import sysconfig as s; print(s.get_path("include"),
    s.get_config_var("LIBDIR"), s.get_config_var("LDLIBRARY"))')
if [[ ! -f $include/Python.h || ! -e $libdir/$ldlibrary ]]; then
  step "no Python.h or $ldlibrary beside $python: unpacking $pydebs"
  ls "$pydebs"/*.deb >/dev/null 2>&1 || die "$python has no development files and $pydebs holds no .debs"
  for deb in "$pydebs"/*.deb; do dpkg -x "$deb" "$prefix" || die "dpkg -x $deb failed"; done
  version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  multiarch=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu")')
  cmake_args+=(-DPython_INCLUDE_DIR="$prefix/usr/include/python$version"
               -DPython_LIBRARY="$prefix/usr/lib/$multiarch/libpython$version.so"
               -DCMAKE_CXX_FLAGS="-isystem $prefix/usr/include")
fi

step "configure and build $build"
# CMake 4 refuses package files asking for policies older than 3.5 (Debian's export files allow up to 3.25; kept safe).
export CMAKE_POLICY_VERSION_MINIMUM=3.5
cmake -S "$repo" -B "$build" "${cmake_args[@]}" || die "configure failed"
if [[ -n ${PARITY_PREBUILT:-} ]]; then
  install -m 755 "$PARITY_PREBUILT" "$build/parity" || die "cannot copy $PARITY_PREBUILT"
else
  cmake --build "$build" --target parity || die "build failed"
  strip -o "$out/parity" "$build/parity" || cp "$build/parity" "$out/parity"
fi
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$build/parity" --version || die "the built parity does not start"
[[ ${PARITY_BUILD_ONLY:-0} == 1 ]] && { step "build only: done"; exit 0; }

# run BACKEND: the bundled corpus under BACKEND into $results/BACKEND; exit 1 (a scenario raised) is compare's to judge.
run() {
  step "$1 over the bundled corpus (-j $jobs)"
  timeout -s TERM "${PARITY_RUN_LIMIT:-0}" "$build/parity" run --backend "$1" --out "$results/$1" -j "$jobs" \
    --timeout 120 -q
  echo "$1 run: exit $?"
}
step "the cupy backend's host copies keep CuPy's shapes, strides and values"
# A failure here fails the script at its end; the corpus still runs, to show what else differs.
host_copy=0
PYTHONPATH="$repo/python" "$python" - "$repo/fixtures/cupy.py" <<'EOF' || { host_copy=1; echo "gpu_check: FAILED"; }
import importlib.util, sys
import cupy, numpy
spec = importlib.util.spec_from_file_location("parity_cupy_backend", sys.argv[1])
backend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(backend)
backend.install()
a = cupy.arange(60.0).reshape(3, 4, 5)
views = [a, cupy.asfortranarray(a), a.transpose(2, 0, 1), a[::-1, ::2, 1:], a[1, 2, 3], a[:0],
         a[:, 1].astype(cupy.int16), cupy.broadcast_to(cupy.arange(3), (4, 3))]
for view in views:
    host = backend.materialize({"x": [view]})["x"][0]
    assert type(host) is numpy.ndarray and host.strides == view.strides and host.dtype == view.dtype, view.strides
    assert numpy.array_equal(host, cupy.asnumpy(view)), view.strides
print(f"{len(views)} layouts copied with their strides")
EOF
results=$(mktemp -d)
if [[ -n ${PARITY_GOLD:-} ]]; then
  cp -r "$PARITY_GOLD" "$results/gold" || die "cannot copy $PARITY_GOLD"
else
  run gold
fi
run cupy
cp "$results/cupy/manifest.json" "$out/cupy-manifest.json"
step "compare"
"$build/parity" compare "$results/gold" "$results/cupy" --json "$out/report.json" --junit "$out/junit.xml" \
  --html "$out/report.html" ${PARITY_COMPARE_ARGS:-}
code=$?
echo "compare: exit $code"
# What no declaration explains, with those scenarios' results: a few hundred KB where the whole corpus's report is too
# large to bring back (PARITY_OPS=full: 57 MB); `parity compare` reads the cut results again where DIFFERENCES are edited.
"$python" "$repo/scripts/gpu_unexplained.py" "$out/report.json" "$results" "$out" || echo "gpu_check: gpu_unexplained failed"
# Both results directories, for comparing again elsewhere (new DIFFERENCES take effect without running again).
tar -czf "$out/results.tar.gz" -C "$results" gold cupy && ls -la "$out"
step "done"
[[ $host_copy == 0 ]] || { echo "gpu_check: the cupy backend's host copies are wrong (above)"; exit 1; }
exit "$code"
