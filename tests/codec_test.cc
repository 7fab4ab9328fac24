// Tests of the result codec: every layout written here and read back in a fresh process, bit for bit.
#include "codec.h"
#include "compare.h"

#include <gtest/gtest.h>
#include <pybind11/embed.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "numpy_api.h"
#include "test_support.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace parity {
namespace {

using parity::testing::TempDir;

// The layouts the codec must preserve. Each case is rebuilt in the reading process, so it must be
// deterministic; `same` lists every difference between what was written and what was read.
constexpr const char* kCases = R"PY(
import os
import struct
import tempfile
import numpy as np
import parity.reducers

def _readonly(a):
    a.flags.writeable = False
    return a

def _misaligned():
    buf = np.zeros(8 * 10 + 1, np.uint8)
    a = buf[1:].view('<f8')
    a[:] = np.arange(10)
    return a

def _structured():
    dt = np.dtype({'names': ['a', 'b', 'c'], 'formats': ['<i4', '>f8', ('u1', (2,))],
                   'offsets': [0, 8, 20], 'itemsize': 24})
    a = np.zeros(3, dt)
    a['a'] = [1, -2, 3]; a['b'] = [0.5, np.nan, -1e300]; a['c'] = [[1, 2], [3, 4], [5, 255]]
    return a

def _nan_payloads():
    return np.array([0x7ff8000000000123, 0xfff8000000000000, 0x7ff0000000000001], dtype='<u8').view('<f8')

CASES = {
    'c_order': lambda: np.arange(24.0).reshape(4, 6),
    'f_order': lambda: np.asfortranarray(np.arange(24.0).reshape(4, 6)),
    'strided': lambda: np.arange(120.0).reshape(10, 12)[::3, 1::2],
    'transposed': lambda: np.arange(60, dtype=np.int32).reshape(3, 4, 5).transpose(2, 0, 1),
    'negative_strides': lambda: np.arange(30.0).reshape(5, 6)[::-1, ::-2],
    'broadcast': lambda: np.broadcast_to(np.arange(3.0), (4, 3)),
    'zero_stride_writeable': lambda: np.lib.stride_tricks.as_strided(np.arange(3.0), (4, 3), (0, 8)),
    'empty': lambda: np.zeros((0, 3)),
    'empty_strided': lambda: np.zeros((4, 0, 6))[:, :, ::2],
    'zero_d': lambda: np.array(3.5),
    'big_endian': lambda: np.arange(12, dtype='>f8').reshape(3, 4),
    'big_endian_int_f': lambda: np.asfortranarray(np.arange(12, dtype='>i4').reshape(3, 4)),
    'readonly': lambda: _readonly(np.arange(6.0)),
    'readonly_view': lambda: _readonly(np.arange(20.0)[3:15:4]),
    'misaligned': _misaligned,
    'bool': lambda: np.arange(10) % 3 == 0,
    'complex_big_endian': lambda: (np.arange(6) + 1j * np.arange(6)[::-1]).astype('>c16'),
    'complex64': lambda: np.array([1 + 2j, np.nan + 0j, complex(0, np.inf)], np.complex64),
    'ints': lambda: [np.arange(-2, 3, dtype=t) for t in ('i1', 'i2', '<i4', '>i8')] +
                    [np.arange(5, dtype=t) for t in ('u1', 'u2', '>u4', '<u8')],
    'float16': lambda: np.linspace(-2, 2, 7, dtype=np.float16),
    'longdouble': lambda: np.arange(4, dtype=np.longdouble) / 3,
    'nan_payloads': _nan_payloads,
    'signed_zero_inf': lambda: np.array([-0.0, 0.0, np.inf, -np.inf]),
    'datetime': lambda: np.array(['2020-01-01', 'NaT', '1970-01-01T00:00:01'], dtype='M8[ms]'),
    'timedelta_big_endian': lambda: np.array([1, -2, np.timedelta64('NaT')], dtype='>m8[us]'),
    'unicode_big_endian': lambda: np.array(['a', 'h\u00e9llo', '\u2713\u2713'], dtype='>U5'),
    'bytes': lambda: np.array([b'ab', b'\x00\xff', b''], dtype='S3'),
    'structured_mixed_order_padding': _structured,
    'aligned_struct': lambda: np.ones(3, dtype=np.dtype([('x', 'u1'), ('y', '<f8')], align=True)),
    'subarray_field_view': lambda: _structured()['c'],
    'void': lambda: np.frombuffer(b'abcdefgh', dtype='V4').copy(),
    'python_scalars': lambda: {'f': 1.5, 'neg_zero': -0.0, 'nan': float('nan'), 'inf': float('-inf'),
                               'big': 2 ** 200, 'neg': -7, 'c': complex(1, -0.0), 'str': '\u00fcn\u00efcode \u2713',
                               'surrogate': 'a\ud800b', 'bytes': b'\x00\x01', 'none': None, 'true': True, 'false': False},
    'numpy_scalars': lambda: [np.float32(1.25), np.int8(-3), np.uint64(2 ** 64 - 1), np.complex64(1 + 2j),
                              np.bool_(True), np.datetime64('2020-01-01', 'D'), np.timedelta64('NaT', 's'),
                              np.str_('x'), np.bytes_(b'y'), np.float16(-0.0), np.longdouble(1) / 3],
    'nested': lambda: {'a': [1, (2.0, {'b': np.arange(3)})], 'empty': [[], (), {}], 'order': {'z': 1, 'a': 2}},
}

def _value_bytes(a):
    """The bytes that hold values: x87 long double's padding is uninitialized memory, not value."""
    if a.dtype.kind in 'fc' and a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1) in (12, 16):
        part = a.dtype.itemsize // (2 if a.dtype.kind == 'c' else 1)
        rows = np.frombuffer(a.tobytes(), np.uint8).reshape(-1, part)
        return rows[:, :10].tobytes()
    return a.tobytes()

class Tagged(np.ndarray):
    """The cuDF bug class: state that __array_finalize__ sets, plus attributes set later."""
    def __array_finalize__(self, obj):
        self.tag = getattr(obj, 'tag', 'from-finalize')

class Point:
    """A non-array type written through a user-registered reducer."""
    def __init__(self, x, y):
        self.x, self.y = x, y

parity.reducers.register(Point, lambda p: {'x': p.x, 'y': p.y}, lambda s: Point(s['x'], s['y']))
parity.reducers.allow_module(__name__)

def _tagged():
    t = np.arange(4.0).view(Tagged)
    t.tag, t.extra = 'custom', {'k': np.arange(2, dtype='>i2'), 'nested': [1.5, None]}
    return t

def _memmap():
    path = os.path.join(tempfile.gettempdir(), 'parity-codec-test-memmap.dat')
    m = np.memmap(path, dtype='>f4', mode='w+', shape=(3, 4), offset=0)
    m[:] = np.arange(12).reshape(3, 4)
    return m

def _shared():
    x = np.arange(3.0)
    inner = [x, 'text']
    return {'a': x, 'b': x, 'lists': [inner, inner], 'view': x[::2]}

SUBCLASS_CASES = {
    'tagged_attributes': _tagged,
    'tagged_from_finalize_only': lambda: np.arange(3.0).view(Tagged),
    'masked': lambda: np.ma.MaskedArray(np.arange(6.0).reshape(2, 3), mask=[[0, 1, 0], [1, 0, 0]],
                                        fill_value=-1.5, hard_mask=True),
    'masked_nomask_int': lambda: np.ma.masked_array(np.arange(3)),
    'memmap': _memmap,
    'matrix': lambda: np.matrix([[1, 2], [3, 4]]),
    'recarray': lambda: np.rec.fromarrays([np.arange(3), np.array([1.5, 2.5, 3.5])], names='a,b'),
    'user_reducer': lambda: {'p': Point(1, np.arange(2.0)), 'points': [Point('a', None)]},
    'shared_references': _shared,
    'object_array': lambda: np.array([1, 'a', None, np.arange(2.0), {'k': 1.5}, 2 ** 70], dtype=object),
    'object_f_reversed': lambda: np.asfortranarray(np.array([[1, 'x', b'y'], [None, 2.5, -0.0]], dtype=object))[::-1],
    'object_readonly_broadcast': lambda: np.broadcast_to(np.array(['s'], dtype=object), (3, 2)),
    'object_0d_reduced': lambda: np.array(Point(1, 2), dtype=object),
    'object_empty': lambda: np.empty((0, 2), dtype=object),
    'strided_larger_than_staging': lambda: np.arange(3 << 20, dtype='>f4').reshape(-1, 3)[::-1, ::2],
    'overlapping_windows': lambda: np.lib.stride_tricks.sliding_window_view(np.arange(10.0), 3),
}
CASES.update(SUBCLASS_CASES)

def _state(a):
    """What a subclass adds, described without parity's reducers."""
    if isinstance(a, np.ma.MaskedArray):
        return {'mask': np.ma.getmaskarray(a).tobytes(), 'fill_value': a.fill_value, 'hardmask': a.hardmask}
    if isinstance(a, np.memmap):
        return {'filename': a.filename, 'offset': a.offset, 'mode': a.mode}
    if isinstance(a, np.recarray):
        return {'record': a.dtype.type}
    return {}

def _describe(a):
    plain = a.view(np.ndarray)
    return {'type': type(a), 'state': _state(a), 'dtype': a.dtype, 'descr': a.dtype.descr, 'str': a.dtype.str,
            'shape': a.shape,'type': type(a), 'dtype': a.dtype, 'descr': a.dtype.descr, 'str': a.dtype.str, 'shape': a.shape,
            'strides': a.strides, 'C': a.flags.c_contiguous, 'F': a.flags.f_contiguous,
            'writeable': a.flags.writeable, 'aligned': a.flags.aligned, 'misalign': a.ctypes.data % 16,
            'bytes': _value_bytes(plain)}

def same(expected, actual, path='outputs'):
    """Every difference between two output trees, as messages naming the path."""
    if type(expected) is not type(actual):
        return [f'{path}: type {type(expected).__name__} != {type(actual).__name__}']
    if isinstance(expected, np.ndarray) and expected.dtype == object:
        e, a = _describe(expected), _describe(actual)
        diffs = [f'{path}: {k} {e[k]!r} != {a[k]!r}' for k in e if k != 'bytes' and e[k] != a[k]]
        return diffs + [d for i in np.ndindex(expected.shape) for d in same(expected[i], actual[i], f'{path}{list(i)}')]
    if isinstance(expected, np.ndarray):
        e, a = _describe(expected), _describe(actual)
        diffs = [f'{path}: {k} {e[k]!r} != {a[k]!r}' for k in e if e[k] != a[k]]
        return diffs + same(vars(expected), vars(actual), path + '.__dict__') if type(expected) is Tagged else diffs
    if isinstance(expected, Point):
        return same(vars(expected), vars(actual), path + '.__dict__')
    if isinstance(expected, np.generic):
        e, a = np.asarray(expected), np.asarray(actual)
        return [] if (e.dtype.str, _value_bytes(e)) == (a.dtype.str, _value_bytes(a)) else [f'{path}: {expected!r} != {actual!r}']
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            return [f'{path}: keys {list(expected)} != {list(actual)}']
        return [d for k in expected for d in same(expected[k], actual[k], f'{path}[{k!r}]')]
    if isinstance(expected, (list, tuple)):
        if len(expected) != len(actual):
            return [f'{path}: length {len(expected)} != {len(actual)}']
        return [d for i, (x, y) in enumerate(zip(expected, actual)) for d in same(x, y, f'{path}[{i}]')]
    if isinstance(expected, float):
        return [] if struct.pack('<d', expected) == struct.pack('<d', actual) else [f'{path}: {expected!r} != {actual!r}']
    if isinstance(expected, complex):
        return same(expected.real, actual.real, path + '.real') + same(expected.imag, actual.imag, path + '.imag')
    return [] if expected == actual else [f'{path}: {expected!r} != {actual!r}']
)PY";

// A real module (parity_codec_cases), so that its ndarray subclass can be found again by name when read.
py::dict cases_module() {
  static py::dict globals = [] {
    py::module_ module = py::module_::import("types").attr("ModuleType")("parity_codec_cases");
    py::module_::import("sys").attr("modules")["parity_codec_cases"] = module;
    py::dict g = module.attr("__dict__");
    py::exec(kCases, g);
    return g;
  }();
  return globals;
}

std::string file_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Codec, EveryLayoutSurvivesAFreshProcessBitForBit) {
  TempDir dir;
  py::dict cases = cases_module()["CASES"];
  for (auto [name, make] : cases) write_result(dir.path() / (name.cast<std::string>() + ".parity"), make());
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string command = "'" + self + "' --read-results '" + dir.path().string() + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the reading process found differences (printed above)";
}

TEST(Codec, ReadingInTheSameProcessAlsoMatches) {
  TempDir dir;
  py::dict cases = cases_module()["CASES"];
  for (auto [name, make] : cases) {
    const fs::path file = dir.path() / (name.cast<std::string>() + ".parity");
    write_result(file, make());
    py::list diffs = cases_module()["same"](make(), to_python(read_result(file)));
    EXPECT_EQ(diffs.size(), 0u) << name.cast<std::string>() << ": " << py::str(diffs).cast<std::string>();
  }
}

TEST(Codec, FilesAreDeterministicAndIgnoreMemoryBetweenStridedElements) {
  TempDir dir;
  py::dict g = cases_module();
  py::exec("x = np.arange(40.0); y = x.copy(); y[1::2] = -99.0", g);
  write_result(dir.path() / "x.parity", py::eval("x[::2]", g));
  write_result(dir.path() / "y.parity", py::eval("y[::2]", g));
  write_result(dir.path() / "x2.parity", py::eval("x[::2]", g));
  EXPECT_EQ(file_bytes(dir.path() / "x.parity"), file_bytes(dir.path() / "y.parity"));
  EXPECT_EQ(file_bytes(dir.path() / "x.parity"), file_bytes(dir.path() / "x2.parity"));
}

TEST(Codec, RecordsTypeNamesOfContainersArraysAndScalars) {
  TempDir dir;
  py::dict g = cases_module();
  write_result(dir.path() / "t.parity", py::eval("{'a': np.arange(2), 'b': np.float32(1), 'c': 1.0, 'd': (1,)}", g));
  const Node root = read_result(dir.path() / "t.parity");
  EXPECT_EQ(root.type, "builtins.dict");
  ASSERT_EQ(root.keys, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(root.items[0].type, "numpy.ndarray");
  EXPECT_EQ(root.items[1].type, "numpy.float32");
  EXPECT_EQ(root.items[1].kind, Node::Kind::Scalar);
  EXPECT_EQ(root.items[2].kind, Node::Kind::Float);
  EXPECT_EQ(root.items[3].kind, Node::Kind::Tuple);
}

// The file that the mapping holding `address` was made from, per /proc/self/maps ("" if none).
std::string mapped_file(std::uintptr_t address) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%zx-%zx", &begin, &end) != 2 || address < begin || address >= end) continue;
    const auto slash = line.find('/');
    return slash == std::string::npos ? "" : line.substr(slash);
  }
  return "";
}

TEST(Codec, ArraysAreReadInPlaceFromAPrivateMappingOfTheFile) {
  TempDir dir;
  const fs::path file = dir.path() / "big.parity";
  write_result(
      file, py::eval("{'a': np.arange(1 << 20, dtype='>f8')[::-1], 'ro': _readonly(np.arange(4.0))}", cases_module()));
  const std::string before = file_bytes(file);
  const Node root = read_result(file);
  for (const Node& leaf : root.items) {
    const auto address =
        reinterpret_cast<std::uintptr_t>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(leaf.array.ptr())));
    EXPECT_EQ(mapped_file(address), fs::canonical(file).string()) << leaf.path << " was copied, not mapped";
  }
  py::exec("a[:] = 0.0", py::globals(), py::dict(py::arg("a") = root.items[0].array));
  EXPECT_EQ(file_bytes(file), before) << "writing to a reloaded array changed the result file";
  EXPECT_FALSE(root.items[1].array.attr("flags").attr("writeable").cast<bool>());
}

TEST(Codec, AnObjectSeenTwiceComesBackAsOneObject) {
  TempDir dir;
  write_result(dir.path() / "s.parity", cases_module()["_shared"]());
  py::dict g = cases_module();
  g["r"] = to_python(read_result(dir.path() / "s.parity"));
  EXPECT_TRUE(py::eval("r['a'] is r['b'] and r['lists'][0] is r['lists'][1]", g).cast<bool>());
  EXPECT_FALSE(py::eval("r['view'] is r['a']", g).cast<bool>()) << "a view is its own object";
}

TEST(Codec, MemmapsComeBackInMemoryUnlessTheMappingIsAskedFor) {
  TempDir dir;
  write_result(dir.path() / "m.parity", cases_module()["_memmap"]());
  const Node node = read_result(dir.path() / "m.parity");
  py::dict g = cases_module();
  g["in_memory"] = to_python(node);
  py::exec("os.environ['PARITY_MAP_MEMMAPS'] = '1'", g);
  g["mapped"] = to_python(read_result(dir.path() / "m.parity"));
  py::exec("del os.environ['PARITY_MAP_MEMMAPS']", g);
  EXPECT_TRUE(py::eval("type(in_memory) is np.memmap and in_memory._mmap is None", g).cast<bool>());
  EXPECT_TRUE(
      py::eval("type(mapped) is np.memmap and mapped._mmap is not None and mapped.mode == 'r'", g).cast<bool>());
  EXPECT_TRUE(py::eval("mapped.filename == in_memory.filename and (mapped == in_memory).all()", g).cast<bool>());
}

TEST(Codec, StateSetByArrayFinalizeSurvives) {
  TempDir dir;
  write_result(dir.path() / "t.parity", cases_module()["_tagged"]());
  py::dict g = cases_module();
  g["t"] = to_python(read_result(dir.path() / "t.parity"));
  EXPECT_TRUE(py::eval("type(t) is Tagged and t.tag == 'custom' and t.extra['k'].dtype.str == '>i2'", g).cast<bool>());
}

// Writing an unsupported output names where it is inside the outputs.
void expect_unsupported(const char* expr, const std::string& path_fragment) {
  TempDir dir;
  py::dict g = cases_module();
  py::exec("import collections\nclass Opaque: pass\ncyclic = []\ncyclic.append(cyclic)", g);
  try {
    write_result(dir.path() / "u.parity", py::eval(expr, g));
    ADD_FAILURE() << expr << " was written";
  } catch (const UnsupportedOutput& e) {
    EXPECT_NE(std::string(e.what()).find(path_fragment), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "u.parity")) << "a failed write left a file behind";
}

TEST(Codec, UnsupportedOutputsNameTheirPath) {
  expect_unsupported("{'a': [1, Opaque()]}", "outputs['a'][1]: cannot write an object of type");
  expect_unsupported("{'f': np.vectorize(abs)}", "outputs['f']: cannot write an object of type numpy.vectorize");
  expect_unsupported("{1: 2}", "outputs: dict key 1");
  expect_unsupported("[np.array([1, Opaque()], dtype=object)]", "outputs[0][1]: cannot write an object of type");
  expect_unsupported("np.zeros(2, dtype=[('a', 'O')])", "outputs: arrays of dtype");
  expect_unsupported("cyclic", "nested deeper than");
}

// A damaged file gets a FormatError that names the file, never a crash or an exception of another kind.
class DamagedFile : public ::testing::Test {
 protected:
  void SetUp() override {
    write_result(dir.path() / "good.parity",
                 py::eval("{'a': np.arange(6.0).reshape(2, 3)[:, ::2], 's': 'text'}", cases_module()));
    bytes = file_bytes(dir.path() / "good.parity");
  }
  void expect_format_error(const std::string& content, const std::string& why) {
    const fs::path bad = dir.path() / "bad.parity";
    std::ofstream(bad, std::ios::binary) << content;
    try {
      read_result(bad);
      ADD_FAILURE() << "read a damaged file: " << why;
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  std::string header() const { return bytes.substr(24, bytes.find('\0', 24) - 24); }
  std::string with_header(const std::string& h) const {
    std::string out = bytes.substr(0, 16);
    for (int i = 0; i < 8; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
    out += h;
    out.append((out.size() + 63) / 64 * 64 - out.size(), '\0');
    return out + bytes.substr((24 + header().size() + 63) / 64 * 64);
  }
  static std::string replace(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  }
  TempDir dir;
  std::string bytes;
};

TEST_F(DamagedFile, TruncationAtEveryByteOffsetIsAClearError) {
  const fs::path bad = dir.path() / "bad.parity";
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes.substr(0, n);
    EXPECT_THROW(read_result(bad), FormatError) << "truncated to " << n << " of " << bytes.size() << " bytes";
  }
}

TEST_F(DamagedFile, TypesOffTheAllowListAreNeverRebuilt) {
  write_result(dir.path() / "t.parity", py::eval("{'t': np.arange(3.0).view(Tagged)}", cases_module()));
  bytes = file_bytes(dir.path() / "t.parity");
  const fs::path bad = dir.path() / "bad.parity";
  auto rebuild_error = [&](const std::string& content) {
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << content;
    const Node node = read_result(bad);  // reading only records names; nothing is imported or called
    try {
      to_python(node);
      return std::string("rebuilt");
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
  };
  const std::string os_system = rebuild_error(with_header(replace(header(), "parity_codec_cases.Tagged", "os.system")));
  EXPECT_NE(os_system.find("type os.system is not rebuilt: module 'os' is not on the allow-list"), std::string::npos)
      << os_system;
  EXPECT_NE(os_system.find("outputs['t']"), std::string::npos) << os_system;
  const std::string reducer = rebuild_error(with_header(replace(header(), "ndarray-subclass", "pickle.loads")));
  EXPECT_NE(reducer.find("no reducer named 'pickle.loads'"), std::string::npos) << reducer;
}

TEST_F(DamagedFile, HostileSizesAreRejectedWithoutAllocating) {
  // The sample's array is arange(6.0).reshape(2, 3)[:, ::2]: shape [2,2], strides [24,16], a 48-byte span.
  expect_format_error(with_header(replace(header(), "\"strides\":[24,16]", "\"strides\":[9223372036854775807,16]")),
                      "reach beyond any possible buffer");
  // A zero-stride description whose span matches the blob but whose element count NumPy refuses.
  const std::string huge = replace(replace(header(), "\"strides\":[24,16]", "\"strides\":[0,40]"), "\"shape\":[2,2]",
                                   "\"shape\":[4611686018427387904,2]");
  expect_format_error(with_header(huge), "invalid array description");
}

// Each file once crashed the decoder, to_python or compare (found by tests/fuzz/decoder_fuzz.cc or built
// from its findings); each must now end in a FormatError or succeed, and nothing else.
TEST(FuzzRegressions, EveryFindingIsAFormatErrorOrReadsCleanly) {
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(PARITY_FUZZ_REGRESSIONS)) {
    ++files;
    SCOPED_TRACE(entry.path().filename().string());
    try {
      const Node node = read_result(entry.path());
      to_python(node);
      compare_outputs(node, node, Policy{});
    } catch (const FormatError&) {
    }
  }
  EXPECT_GE(files, 8u);
}

TEST_F(DamagedFile, TruncatedFilesAreRejected) {
  expect_format_error(bytes.substr(0, 10), "too short");
  expect_format_error(bytes.substr(0, 30), "truncated");
  expect_format_error(bytes.substr(0, bytes.size() - 1), "past the end of the file");
}

TEST_F(DamagedFile, WrongMagicAndNewerVersionsAreRejected) {
  expect_format_error("GARBAGE!" + bytes.substr(8), "bad magic");
  std::string newer = bytes;
  newer[8] = 9;
  expect_format_error(newer, "upgrade parity");
}

TEST_F(DamagedFile, MalformedHeadersAreRejected) {
  expect_format_error(with_header("{not json"), "malformed header");
  expect_format_error(with_header(replace(header(), "\"kind\":\"dict\"", "\"kind\":\"pickle\"")), "unknown kind");
  expect_format_error(with_header(replace(header(), "\"blob\":0", "\"blob\":7")), "blob 7 does not exist");
  expect_format_error(with_header(replace(header(), "\"shape\":[2,2]", "\"shape\":[2,9]")), "do not match");
}

TEST_F(DamagedFile, DtypesThatCouldRunCodeOrHoldObjectsAreRefused) {
  expect_format_error(with_header(replace(header(), "{\"str\":\"<f8\"}", "{\"str\":\"|O\"}")), "holds Python objects");
  expect_format_error(with_header(replace(header(), "{\"str\":\"<f8\"}", "{\"str\":\"os.system\"}")), "invalid dtype");
}

}  // namespace

namespace testing {

int verify_results_dir(const char* dir) {
  py::dict cases = cases_module()["CASES"];
  int failures = 0;
  for (auto [name, make] : cases) {
    const fs::path file = fs::path(dir) / (name.cast<std::string>() + ".parity");
    try {
      py::list diffs = cases_module()["same"](make(), to_python(read_result(file)));
      for (py::handle d : diffs)
        std::fprintf(stderr, "%s: %s\n", name.cast<std::string>().c_str(), py::str(d).cast<std::string>().c_str());
      failures += static_cast<int>(diffs.size());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name.cast<std::string>().c_str(), e.what());
      ++failures;
    }
  }
  std::fprintf(stderr, "fresh process: %zu cases read, %d differences\n", cases.size(), failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace testing
}  // namespace parity
