// libFuzzer target: parity::read_result (and to_python on what it decodes) must turn any bytes into a FormatError.
#include <pybind11/embed.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "codec.h"
#include "interpreter.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace {

// Types the seeds use. They live in a real module (parity_fuzz_seeds) on the reducers' allow-list, in every
// fuzzing process too, so that inputs derived from the seeds reach the rebuild paths of to_python.
constexpr const char* kSeedModule = R"PY(
import numpy as np
import parity.reducers

class Tagged(np.ndarray):
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, 'tag', 'from-finalize')

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

parity.reducers.register(Point, lambda p: {'x': p.x, 'y': p.y}, lambda s: Point(s['x'], s['y']))
parity.reducers.allow_module(__name__)

def _readonly(a):
    a.flags.writeable = False
    return a

def seeds():
    """One small file per node kind or layout, plus one holding all of them."""
    structured = np.dtype({'names': ['a', 'b', 'c'], 'formats': ['<i4', '>f8', ('u1', (2,))],
                           'offsets': [0, 8, 20], 'itemsize': 24})
    tagged = np.arange(4.0).view(Tagged)
    tagged.tag, tagged.extra = 'custom', {'k': np.arange(2, dtype='>i2'), 'n': [1.5, None]}
    shared = np.arange(3.0)
    inner = [shared, 'text']
    out = {
        'python_scalars': {'none': None, 'true': True, 'false': False, 'int': -2 ** 70, 'float': -0.0,
                           'nan': float('nan'), 'complex': complex(1, -2), 'str': 'h\u00e9\ud800', 'bytes': b'\0\xff'},
        'containers': [(1, [2.5, {}]), (), [], {'k': ()}],
        'c_order': np.arange(12.0).reshape(3, 4),
        'f_order': np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)),
        'strided': np.arange(60, dtype=np.int16).reshape(6, 10)[::2, 1::3],
        'negative_strides': np.arange(30.0).reshape(5, 6)[::-1, ::-2],
        'zero_strides': np.broadcast_to(np.arange(3.0), (4, 3)),
        'empty': np.zeros((0, 3)),
        'zero_d': np.array(2.5),
        'big_endian': np.arange(6, dtype='>i4').reshape(2, 3),
        'structured': np.zeros(2, structured),
        'aligned_struct': np.ones(2, np.dtype([('x', 'u1'), ('y', '<f8')], align=True)),
        'subarray_view': np.zeros(2, structured)['c'],
        'dtypes': [np.array(['a', 'bc'], '>U2'), np.array([b'ab'], 'S3'), np.array(['2020-01-01'], 'M8[D]'),
                   np.array([1, -2], '>m8[us]'), np.arange(3, dtype=np.longdouble), np.array([1 + 2j], '>c8'),
                   np.array([True, False]), np.zeros(2, 'V3'), np.arange(3, dtype=np.float16)],
        'misaligned': np.zeros(81, np.uint8)[1:].view('<f8'),
        'readonly': _readonly(np.arange(20.0)[3:15:4]),
        'numpy_scalars': [np.float32(1.5), np.int8(-3), np.uint64(2 ** 64 - 1), np.bool_(True),
                          np.datetime64('2020-01-01'), np.str_('x'), np.bytes_(b'y'), np.longdouble(1) / 3,
                          np.complex64(1j)],
        'subclass_state': tagged,
        'masked': np.ma.MaskedArray(np.arange(4.0), mask=[0, 1, 0, 0], fill_value=-1.0),
        'matrix': np.matrix([[1, 2], [3, 4]]),
        'recarray': np.rec.fromarrays([np.arange(2), np.array([1.5, 2.5])], names='a,b'),
        'object_reducer': Point(1, [np.arange(2)]),
        'refs': {'a': shared, 'b': shared, 'l': [inner, inner], 'v': shared[::2]},
    }
    out['all'] = dict(out)
    return out
)PY";

py::dict seed_module() {
  py::module_ module = py::module_::import("types").attr("ModuleType")("parity_fuzz_seeds");
  py::module_::import("sys").attr("modules")["parity_fuzz_seeds"] = module;
  py::dict globals = module.attr("__dict__");
  py::exec(kSeedModule, globals);
  return globals;
}

fs::path input_file;  // read_result takes a path: each input is written here first
bool verbose = false;  // PARITY_FUZZ_VERBOSE=1: print each FormatError, to check how a reproducer is answered

void rejected(const parity::FormatError& e) {
  if (verbose) std::fprintf(stderr, "FormatError: %s\n", e.what());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  parity::start_interpreter();
  py::dict seeds = seed_module();
  // `--write-seeds DIR` (libFuzzer ignores flags starting with "--", and never sees this one: we exit first).
  for (int i = 1; i + 1 < *argc; ++i) {
    if (std::string_view((*argv)[i]) != "--write-seeds") continue;
    const fs::path dir = (*argv)[i + 1];
    fs::create_directories(dir);
    py::dict cases = seeds["seeds"]();
    for (auto [name, value] : cases) parity::write_result(dir / (name.cast<std::string>() + ".parity"), value);
    std::printf("wrote %zu seeds to %s\n", cases.size(), dir.c_str());
    std::exit(0);
  }
  verbose = std::getenv("PARITY_FUZZ_VERBOSE") != nullptr;
  // Per process: libFuzzer's -fork/-jobs modes run several of these at once.
  input_file = fs::temp_directory_path() / ("parity-decoder-fuzz-" + std::to_string(::getpid()) + ".parity");
  std::atexit([] {
    std::error_code ignored;
    fs::remove(input_file, ignored);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::FILE* out = std::fopen(input_file.c_str(), "wb");
  if (!out || std::fwrite(data, 1, size, out) != size || std::fclose(out) != 0) {
    std::perror(input_file.c_str());
    std::abort();  // an environment problem, but never let it pass as "decoded fine"
  }
  // Only FormatError is an answer. Anything else (py::error_already_set, std::out_of_range, ...) escapes on
  // purpose: std::terminate aborts and libFuzzer records the input as a crash.
  try {
    const parity::Node root = parity::read_result(input_file);
    try {
      const py::object rebuilt = parity::to_python(root);  // rebuilding a decoded tree must be as safe
    } catch (const parity::FormatError& e) {
      rejected(e);
    }
  } catch (const parity::FormatError& e) {
    rejected(e);
  }
  // A Python error left pending would leak into whatever Python call comes next: a decoder bug too.
  if (PyErr_Occurred()) {
    PyErr_Print();
    std::abort();
  }
  return 0;  // root and rebuilt are released above, so nothing accumulates across inputs
}
