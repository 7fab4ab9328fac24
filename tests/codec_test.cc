// Tests of the result codec: every layout written here and read back in a fresh process, bit for bit.
#include "codec.h"

#include <gtest/gtest.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>

#include "compare.h"
#include "numpy_api.h"
#include "raw_result.h"
#include "safe_file.h"
#include "test_support.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace parity {
namespace {

using parity::testing::TempDir;

// tests/codec_cases.py, a real module, so that its ndarray subclass can be found again by name when read.
py::dict cases_module() {
  static py::dict globals = [] {
    py::module_::import("sys").attr("path").attr("insert")(0, PARITY_TESTS_DIR);
    return py::dict(py::module_::import("codec_cases").attr("__dict__"));
  }();
  return globals;
}

// codec_cases._memmap_path's file, made in the temp directory by the process that first builds the memmap case and
// inherited through the environment by its --read-results process: removed when this process's tests end, so that
// test runs leave no file behind (codec_cases.remove_memmap_file; the fuzz target's --write-seeds does the same).
class MemmapCaseFile : public ::testing::Environment {
 public:
  void TearDown() override {
    if (std::getenv("PARITY_CODEC_TEST_MEMMAP") != nullptr) cases_module()["remove_memmap_file"]();
  }
};
[[maybe_unused]] ::testing::Environment* const memmap_case_file =
    ::testing::AddGlobalTestEnvironment(new MemmapCaseFile);

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
  ASSERT_EQ(root.keys(), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(root.items()[0].type, "numpy.ndarray");
  EXPECT_EQ(root.items()[1].type, "numpy.float32");
  EXPECT_EQ(root.items()[1].kind(), Node::Kind::Scalar);
  EXPECT_EQ(root.items()[2].kind(), Node::Kind::Float);
  EXPECT_EQ(root.items()[3].kind(), Node::Kind::Tuple);
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
  for (const Node& leaf : root.items()) {
    const auto address =
        reinterpret_cast<std::uintptr_t>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(leaf.array().ptr())));
    EXPECT_EQ(mapped_file(address), fs::canonical(file).string()) << leaf.path << " was copied, not mapped";
  }
  py::exec("a[:] = 0.0", py::globals(), py::dict(py::arg("a") = root.items()[0].array()));
  EXPECT_EQ(file_bytes(file), before) << "writing to a reloaded array changed the result file";
  EXPECT_FALSE(root.items()[1].array().attr("flags").attr("writeable").cast<bool>());
}

TEST(Codec, ASmallFileIsReadIntoABufferThatKeepsTheMappingsAlignment) {
  TempDir dir;
  const fs::path file = dir.path() / "small.parity";
  write_result(file, py::eval("{'a': np.arange(16.0), 'ro': _readonly(np.arange(4.0))}", cases_module()));
  ASSERT_LE(fs::file_size(file), 64u * 1024) << "no longer a small file: read_file is not what this tests";
  const std::string before = file_bytes(file);
  const Node root = read_result(file);
  for (const Node& leaf : root.items()) {
    const auto address =
        reinterpret_cast<std::uintptr_t>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(leaf.array().ptr())));
    EXPECT_EQ(mapped_file(address), "") << leaf.path << " was mapped, not read";
    EXPECT_EQ(address % 64, 0u) << leaf.path << ": its blob is not where a mapping would put it modulo 64";
  }
  py::exec("a[:] = 0.0", py::globals(), py::dict(py::arg("a") = root.items()[0].array()));
  EXPECT_EQ(file_bytes(file), before) << "writing to a reloaded array changed the result file";
  EXPECT_FALSE(root.items()[1].array().attr("flags").attr("writeable").cast<bool>());
  EXPECT_TRUE(
      py::eval("lambda a: bool((a == np.arange(4.0)).all())", cases_module())(root.items()[1].array()).cast<bool>());
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

TEST(Codec, TheMemmapCaseLeavesNoFileBehind) {
  TempDir tmp;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string command = "env -u PARITY_CODEC_TEST_MEMMAP TMPDIR='" + tmp.path().string() + "' '" + self +
                              "' --gtest_filter=Codec.MemmapsComeBackInMemoryUnlessTheMappingIsAskedFor >/dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (const auto& left : fs::directory_iterator(tmp.path())) ADD_FAILURE() << "left behind: " << left.path();
}

TEST(Codec, StateSetByArrayFinalizeSurvives) {
  TempDir dir;
  write_result(dir.path() / "t.parity", cases_module()["_tagged"]());
  py::dict g = cases_module();
  g["t"] = to_python(read_result(dir.path() / "t.parity"));
  EXPECT_TRUE(py::eval("type(t) is Tagged and t.tag == 'custom' and t.extra['k'].dtype.str == '>i2'", g).cast<bool>());
}

// A reducer names the parts of its state as Python indexes the object: keys starting with '[' or '.' are path
// suffixes (a DataFrame column at outputs['df']['a']), other keys attributes (outputs['m'].mask).
TEST(Codec, StateKeysThatArePathSuffixesNameTheirParts) {
  EXPECT_EQ(state_path("outputs['df']", "['a']"), "outputs['df']['a']");
  EXPECT_EQ(state_path("outputs['s']", ".iloc[3]"), "outputs['s'].iloc[3]");
  EXPECT_EQ(state_path("outputs['m']", "mask"), "outputs['m'].mask");
  EXPECT_EQ(py::module_::import("parity.paths").attr("state_path")("outputs['df']", "['a']").cast<std::string>(),
            "outputs['df']['a']");
  EXPECT_EQ(py::module_::import("parity.paths").attr("state_path")("outputs['m']", "mask").cast<std::string>(),
            "outputs['m'].mask");
}

// The output-path grammar is written once (paths.cc); Python's parity.paths calls it through a compiled module. Where
// a route spelled a path apart (an argument converted wrongly on the way in or out), a digest would be looked up at
// a path the codec never wrote, and the fidelity check would silently stop comparing it. Returns each case that
// `python` spells apart from the C++ functions.
std::vector<std::string> path_grammar_differences(py::handle python) {
  std::vector<std::string> found;
  const auto same = [&](const std::string& what, const std::string& cpp, py::handle spelled) {
    const std::string py_text = py::str(spelled).cast<std::string>();
    if (py_text != cpp) found.push_back(what + ": C++ " + cpp + ", Python " + py_text);
  };
  const char* keys[] = {
      "a",   "it's",     "back\\slash", "\\'",   "'",         "\\", "",       "caf\xc3\xa9 \xe2\x82\xac", "a.b",
      "[0]", ".iloc[3]", "a']['b",      "\"q\"", "line\nend", "1",  "(1, 2)", "\xf0\x9f\x98\x80'\\",      "state"};
  for (const std::string key : keys) {
    same("key_path(" + key + ")", key_path("outputs", key), python.attr("key_path")("outputs", py::str(key)));
    same("state_path(" + key + ")", state_path("outputs['m']", key),
         python.attr("state_path")("outputs['m']", py::str(key)));
  }
  const std::vector<std::vector<std::int64_t>> indexes = {{}, {0}, {2, 0}, {1, 2, 3}, {12345678901, 0}};
  for (const auto& index : indexes)
    same("index_path", index_path(index), python.attr("index_path")(py::tuple(py::cast(index))));
  for (const std::size_t i : {std::size_t{0}, std::size_t{7}, std::size_t{123456}})
    same("item_path", item_path("outputs", i), python.attr("item_path")("outputs", i));
  return found;
}

// Inside a program that embeds parity (as the workers and compare do), parity.paths is the builtin module's, and the
// extension module parity._core is never loaded for it.
TEST(PathGrammar, PythonSpellsEveryPathAsTheCodecDoes) {
  py::dict g;
  py::exec(R"(
import sys
from parity import paths
import _parity_paths
routes = {name: getattr(paths, name) is getattr(_parity_paths, name)
          for name in ("key_path", "item_path", "state_path", "index_path")}
same = all(routes.values())
core_loaded = "parity._core" in sys.modules
)",
           g);
  EXPECT_TRUE(g["same"].cast<bool>()) << py::str(g["routes"]).cast<std::string>();
  EXPECT_FALSE(g["core_loaded"].cast<bool>());
  const std::vector<std::string> differences = path_grammar_differences(py::module_::import("parity.paths"));
  EXPECT_TRUE(differences.empty()) << ::testing::PrintToString(differences);
}

// The check above is no silent pass: a Python grammar that drifts (here: backslashes left unescaped) is caught.
TEST(PathGrammar, ADriftedPythonGrammarIsCaught) {
  py::dict g;
  py::exec(R"(
import types
from parity import paths
drifted = types.SimpleNamespace(**{name: getattr(paths, name) for name in ("state_path", "index_path", "item_path")})
drifted.key_path = lambda path, key: path + "['" + str(key).replace("'", "\\'") + "']"
)",
           g);
  const std::vector<std::string> differences = path_grammar_differences(g["drifted"]);
  ASSERT_FALSE(differences.empty());
  EXPECT_NE(differences.front().find("key_path(back\\slash)"), std::string::npos) << differences.front();
}

// End to end: the paths the decoder gives an output's nodes are the paths parity.probe digests it at, for keys that
// need escaping, sequences, object arrays and a reducer's attribute state.
std::set<std::string> decoded_paths(const Node& node) {
  std::set<std::string> paths;
  if (!node.path.empty()) paths.insert(node.path);
  for (const Node& item : node.items()) paths.merge(decoded_paths(item));
  for (const Node& state : node.state) paths.merge(decoded_paths(state));
  return paths;
}

TEST(PathGrammar, DecodedPathsAreTheFidelityDigestsPaths) {
  TempDir dir;
  py::dict g = cases_module();
  py::exec(R"(
tricky = {"it's": [1, (2.5, "x")], "back\\slash": {"caf\u00e9 \u20ac": np.arange(3)}, "a.b": None,
          "[0]": np.array([[1, "a"], [None, 2.0]], dtype=object), "m": np.ma.masked_array([1.0, 2.0], mask=[0, 1])}
)",
           g);
  write_result(dir.path() / "p.parity", g["tricky"]);
  py::dict digests = py::module_::import("parity.probe").attr("digests")(g["tricky"]);
  std::set<std::string> digested;
  for (auto [path, _] : digests) digested.insert(path.cast<std::string>());
  EXPECT_EQ(decoded_paths(read_result(dir.path() / "p.parity")), digested);
}

// pint makes a Quantity class per unit registry: an object of another registry's class, of the same qualified name,
// is written through the reducer registered for the first (it was refused as a type without a reducer).
TEST(Codec, AClassOfARegisteredQualifiedNameUsesItsReducer) {
  TempDir dir;
  py::dict g = cases_module();
  py::exec(R"(
import parity.reducers
def quantity_class():
    class Quantity:
        def __init__(self, magnitude):
            self.magnitude = magnitude
    Quantity.__module__ = "parity_codec_test"
    return Quantity
First, Second = quantity_class(), quantity_class()
parity.reducers.register(First, lambda q: {"magnitude": q.magnitude}, lambda s: First(s["magnitude"]))
)",
           g);
  write_result(dir.path() / "q.parity", py::eval("Second(np.arange(3.0))", g));
  const Node node = read_result(dir.path() / "q.parity");
  EXPECT_EQ(node.reducer, "parity_codec_test.quantity_class.<locals>.Quantity");
  g["q"] = to_python(node);
  EXPECT_TRUE(py::eval("type(q) is First and list(q.magnitude) == [0.0, 1.0, 2.0]", g).cast<bool>());
}

// Writing an unsupported output names where it is inside the outputs.
void expect_unsupported(const char* expr, const std::string& path_fragment) {
  TempDir dir;
  py::dict g = cases_module();
  py::exec(R"(
import collections
class Opaque: pass
cyclic = []
cyclic.append(cyclic)
class LongerList(list):
    def __len__(self): return 5
class KeyedList(list):
    def __getitem__(self, i): raise KeyError(i)
class BadLengthTuple(tuple):
    def __len__(self): raise RuntimeError("no length")
)",
           g);
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
  // A function is named by its qualified name, so that the message says which one was returned.
  expect_unsupported("{'f': lambda x: x}", "outputs['f']: cannot write an object of type builtins.function (<lambda>)");
  expect_unsupported("{1: 2}", "outputs: dict key 1");
  expect_unsupported("[np.array([1, Opaque()], dtype=object)]", "outputs[0][1]: cannot write an object of type");
  expect_unsupported("np.zeros(2, dtype=[('a', 'O')])", "outputs: arrays of dtype");
  expect_unsupported("cyclic", "nested deeper than");
  // A sequence subclass whose protocol lies or raises had its Python exception escape, naming no path.
  expect_unsupported("{'l': LongerList([1])}", "outputs['l']: reading the items of a");
  expect_unsupported("{'l': [KeyedList([1])]}", "outputs['l'][0]: reading the items of a");
  expect_unsupported("{'t': BadLengthTuple((1,))}", "no length");
}

TEST(Codec, AMemoryErrorWhileWritingIsNoOutputsError) {
  // After a MemoryError the worker retires (a crash): read as the output's error, it had gone on to the next scenario.
  TempDir dir;
  py::dict g = cases_module();
  py::exec(R"(
import parity.reducers
class Exhausting(list):
    def __getitem__(self, i): raise MemoryError("no room")
class Heavy:
    pass
def heavy_state(h):
    raise MemoryError("no room for its state")
parity.reducers.register(Heavy, heavy_state, lambda s: Heavy())
)",
           g);
  for (const char* expr : {"{'l': Exhausting([1])}", "{'h': Heavy()}"}) {
    try {
      write_result(dir.path() / "m.parity", py::eval(expr, g));
      ADD_FAILURE() << expr << " was written";
    } catch (py::error_already_set& e) {
      EXPECT_TRUE(e.matches(PyExc_MemoryError)) << expr << ": " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << expr << ": " << e.what();
    }
  }
}

// Files of format 1 as its last writer wrote them (tests/format_v1/write_v1.py): today's writer writes format 2.
const fs::path kFormat1Dir = fs::path(PARITY_TESTS_DIR) / "format_v1";

// `bytes` (a result file whose header is `old_size` bytes) with header `h` and the same data section: both formats
// put the header's size at byte 16 and the data at the next 64-byte boundary (DamagedFile, DamagedFile2).
std::string replace_header(const std::string& bytes, std::size_t old_size, const std::string& h) {
  std::string out = bytes.substr(0, 16);
  for (int i = 0; i < 8; ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  out += h;
  out.append((out.size() + 63) / 64 * 64 - out.size(), '\0');
  return out + bytes.substr((24 + old_size + 63) / 64 * 64);
}

// Every prefix of a result file's `bytes`, written into `dir`, is a FormatError (DamagedFile and DamagedFile2).
void expect_every_truncation_is_a_clear_error(const fs::path& dir, const std::string& bytes) {
  const fs::path bad = dir / "bad.parity";
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes.substr(0, n);
    EXPECT_THROW(read_result(bad), FormatError) << "truncated to " << n << " of " << bytes.size() << " bytes";
  }
}

// A damaged file gets a FormatError that names the file, never a crash or an exception of another kind. These cases
// damage format 1's JSON header (codec_cases.DAMAGED_BASE as format 1 wrote it); DamagedFile2 damages format 2's.
class DamagedFile : public ::testing::Test {
 protected:
  void SetUp() override { bytes = file_bytes(kFormat1Dir / "damaged_base.parity"); }
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
  std::string with_header(const std::string& h) const { return replace_header(bytes, header().size(), h); }
  static std::string replace(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  }
  TempDir dir;
  std::string bytes;
};

TEST_F(DamagedFile, TruncationAtEveryByteOffsetIsAClearError) {
  expect_every_truncation_is_a_clear_error(dir.path(), bytes);
}

TEST_F(DamagedFile, TypesOffTheAllowListAreNeverRebuilt) {
  cases_module();  // codec_cases.Tagged is importable by name
  bytes = file_bytes(kFormat1Dir / "allow_list_base.parity");
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
  const std::string os_system = rebuild_error(with_header(replace(header(), "codec_cases.Tagged", "os.system")));
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
TEST(FuzzRegressions, ObjectArraySlotsOffAPointersSizeAreRefused) {
  // Strides that are no multiple of a pointer's size put object slots at misaligned addresses (UBSan, fuzzer).
  EXPECT_THROW(read_result(fs::path(PARITY_FUZZ_REGRESSIONS) / "to_python-object-array-misaligned-slots.parity"),
               FormatError);
}

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
  // Integers where integers go: a float (one past int64 made nlohmann convert out of range, found by the fuzzer),
  // a negative offset, a string.
  expect_format_error(with_header(replace(header(), "\"shape\":[2,2]", "\"shape\":[418446744073709551615,2]")),
                      "'shape' is not an integer in range: 4.18446744073709");
  expect_format_error(with_header(replace(header(), "\"shape\":[2,2]", "\"shape\":[2.5,2]")),
                      "'shape' is not an integer");
  expect_format_error(with_header(replace(header(), "\"blob\":0", "\"blob\":-1")), "'blob' is not an integer in range");
  expect_format_error(with_header(replace(header(), "\"blob\":0", "\"blob\":\"0\"")), "'blob' is not an integer");
}

TEST_F(DamagedFile, DtypesThatCouldRunCodeOrHoldObjectsAreRefused) {
  expect_format_error(with_header(replace(header(), "{\"str\":\"<f8\"}", "{\"str\":\"|O\"}")), "holds Python objects");
  expect_format_error(with_header(replace(header(), "{\"str\":\"<f8\"}", "{\"str\":\"os.system\"}")), "invalid dtype");
}

// ---------------------------------------------------------------------------------------------------------
// Format 2 (issue #20): a binary header written in one pass; format 1 files still read as they did

TEST(Format1, FilesTheLastFormat1WriterWroteReadAsTheValuesTheyHold) {
  py::dict cases = cases_module()["CASES"];
  std::size_t read = 0;
  for (auto [name, make] : cases) {
    const fs::path file = kFormat1Dir / (name.cast<std::string>() + ".parity");
    if (!fs::exists(file)) continue;  // the two cases write_v1.py leaves out
    ++read;
    const std::string major = file_bytes(file).substr(8, 4);
    EXPECT_EQ(major, std::string("\1\0\0\0", 4)) << file;
    py::list diffs = cases_module()["same"](make(), to_python(read_result(file)));
    EXPECT_EQ(diffs.size(), 0u) << name.cast<std::string>() << ": " << py::str(diffs).cast<std::string>();
  }
  EXPECT_EQ(read, cases.size() - 2);
}

TEST(Format2, WriterWritesFormat2WithABinaryHeader) {
  TempDir dir;
  write_result(dir.path() / "x.parity", py::eval("{'a': [1, 'two', np.arange(3.0)]}", cases_module()));
  const std::string bytes = file_bytes(dir.path() / "x.parity");
  EXPECT_EQ(bytes.substr(8, 8), std::string("\2\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(bytes[24], '\0') << "the header starts with a dict's tag, not JSON";
}

// A file of format 2 damaged in its header: a FormatError naming the file and, where one is being read, the path.
class DamagedFile2 : public ::testing::Test {
 protected:
  void SetUp() override {
    write_result(dir.path() / "good.parity", cases_module()["DAMAGED_BASE"]());
    bytes = file_bytes(dir.path() / "good.parity");
  }
  std::string header() const {
    std::uint64_t size = 0;
    for (int i = 7; i >= 0; --i) size = (size << 8) | static_cast<unsigned char>(bytes[16 + i]);
    return bytes.substr(24, size);
  }
  // The file with another header and the same data section.
  std::string with_header(const std::string& h) const { return replace_header(bytes, header().size(), h); }
  // A string of the header (its length byte and text) replaced by another.
  std::string with_text(const std::string& from, const std::string& to) const {
    std::string h = header();
    const std::string old = static_cast<char>(from.size()) + from;
    const auto at = h.find(old);
    EXPECT_NE(at, std::string::npos) << from;
    return with_header(at == std::string::npos ? h : h.replace(at, old.size(), static_cast<char>(to.size()) + to));
  }
  // What reading and then rebuilding `content` says: "read", or the FormatError of one of them (reading names the
  // file; rebuilding, which has no file, the path).
  std::string error(const std::string& content) {
    const fs::path bad = dir.path() / "bad.parity";
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << content;
    Node node;
    try {
      node = read_result(bad);
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
      return e.what();
    }
    try {
      to_python(node);
      return "read";
    } catch (const FormatError& e) {
      return e.what();
    }
  }
  void expect_error(const std::string& content, const std::string& why) {
    const std::string what = error(content);
    EXPECT_NE(what.find(why), std::string::npos) << what;
  }
  TempDir dir;
  std::string bytes;
};

TEST_F(DamagedFile2, TruncationAtEveryByteOffsetIsAClearError) {
  expect_every_truncation_is_a_clear_error(dir.path(), bytes);
  // A header cut short, its length saying so: the error names the path being read.
  expect_error(with_header(header().substr(0, header().size() - 3)), "outputs['s']: malformed header: ");
}

TEST_F(DamagedFile2, EveryByteOfTheHeaderChangedReadsOrIsAFormatError) {
  const std::string h = header();
  for (std::size_t i = 0; i < h.size(); ++i)
    for (unsigned char b : {0x00, 0x01, 0x02, 0x0f, 0x7f, 0x80, 0xff}) {
      std::string damaged = h;
      damaged[i] = static_cast<char>(b);
      error(with_header(damaged));  // anything but a FormatError or a clean read fails the test
    }
}

TEST_F(DamagedFile2, MalformedHeadersNameThePath) {
  const std::string h = header();
  expect_error(with_header(h + "x"), "1 bytes after the outputs");
  std::string unknown = h;
  unknown[0] = 99;
  expect_error(with_header(unknown), "outputs: unknown kind (tag 99)");
  using parity::testing::Header2;
  expect_error(with_header(Header2().byte(parity::testing::kList2).varint(7).bytes), "name 7 names no earlier one");
  expect_error(with_header(Header2().byte(parity::testing::kList2).fresh("builtins.list").varint(1000).bytes),
               "outputs: malformed header: 1000 items cannot fit");
  expect_error(with_header(Header2().byte(parity::testing::kInt2).text("0xZZ").bytes), "outputs: int value is not");
  expect_error(with_header(Header2().byte(parity::testing::kStr2).varint(~0ull).bytes), "runs past its end");
  expect_error(with_header(Header2().byte(parity::testing::kStr2).bytes + std::string(11, '\xff')),
               "a number longer than 64 bits");
  expect_error(with_header(Header2().byte(parity::testing::kObject2).fresh("x.Y").byte(0).bytes),
               "outputs: object without a reducer");
  expect_error(with_text("text", "\xff\xfe"), "outputs['s']: str is not UTF-8");
}

TEST_F(DamagedFile2, LayoutsAndBlobsAreCheckedAsInFormat1) {
  // The sample's array is arange(6.0).reshape(2, 3)[:, ::2]: shape [2, 2], strides [24, 16] (zigzag 48, 32).
  const std::string h = header();
  const std::string layout = std::string("\2\2\2\x30\x20", 5);
  const auto at = h.find(layout);
  ASSERT_NE(at, std::string::npos);
  std::string wide = h;
  wide[at + 2] = 9;
  expect_error(with_header(wide), "outputs['a']: shape, strides and dtype do not match the stored bytes");
  std::string blob = h;
  blob[at + 7] = 0x7f;  // after the offset and misalign: the blob's offset
  expect_error(with_header(blob), "outputs['a']: a blob at 127 extends past the end of the file");
  expect_error(with_text(R"({"str":"<f8"})", R"({"str":"|O"})"), "outputs['a']: dtype object holds Python objects");
  expect_error(with_text(R"({"str":"<f8"})", R"({"str":"os.system"})"), "outputs['a']: invalid dtype");
}

TEST_F(DamagedFile2, TypesOffTheAllowListAreNeverRebuilt) {
  write_result(dir.path() / "t.parity", cases_module()["ALLOW_LIST_BASE"]());
  bytes = file_bytes(dir.path() / "t.parity");
  const std::string os_system = error(with_text("codec_cases.Tagged", "os.system"));
  EXPECT_NE(os_system.find("type os.system is not rebuilt: module 'os' is not on the allow-list"), std::string::npos)
      << os_system;
  EXPECT_NE(os_system.find("outputs['t']"), std::string::npos) << os_system;
  const std::string reducer = error(with_text("ndarray-subclass", "pickle.loads"));
  EXPECT_NE(reducer.find("no reducer named 'pickle.loads'"), std::string::npos) << reducer;
}

TEST(Format2, ReferencesMayOnlyPointBack) {
  TempDir dir;
  using namespace parity::testing;
  Header2 h;
  h.byte(kList2).fresh("builtins.list").varint(2).byte(kRef2).text("outputs[1]").byte(kNone2);
  write_raw_result(dir.path() / "r.parity", h.bytes, "", 2);
  try {
    read_result(dir.path() / "r.parity");
    ADD_FAILURE() << "a reference to a later output was read";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("outputs[0]: refers to outputs[1], which is not an earlier output"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Resources a hostile file can claim (issue #16): memory through shared blobs, files that are not files

using parity::testing::shared_blob_header;
using parity::testing::write_raw_result;

std::string format_error(const std::function<void()>& read) {
  try {
    read();
  } catch (const FormatError& e) {
    return e.what();
  }
  return "(no FormatError)";
}

constexpr const char* kMisalignedArray =
    R"({"kind":"ndarray","type":"numpy.ndarray","dtype":{"str":"<f8"},"writeable":false,"shape":[8192],)"
    R"("strides":[8],"blob":0,"offset":0,"misalign":8})";

TEST(ReadLimits, StrNodesSharingABlobCountEveryCopy) {
  TempDir dir;
  const fs::path file = dir.path() / "shared.parity";
  write_raw_result(file, shared_blob_header(R"({"kind":"str","blob":0})", 100, 65536), std::string(65536, 'a'));
  constexpr std::uint64_t kHeader = 32768;  // the header and the nodes are counted too (a few KB and ~200 B a node)
  EXPECT_EQ(read_result(file, ReadLimits{100 * 65536 + kHeader}).items().size(), 100u);
  const std::string why = format_error([&] { read_result(file, ReadLimits{99 * 65536 + kHeader}); });
  EXPECT_NE(why.find("outputs[99]: decoding the outputs would take more than 6520832 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("--max-result-memory"), std::string::npos) << why;
}

TEST(ReadLimits, MisalignedArraysSharingABlobShareOneCopy) {
  TempDir dir;
  const fs::path file = dir.path() / "misaligned.parity";
  write_raw_result(file, shared_blob_header(kMisalignedArray, 50, 65536), std::string(65536, '\1'));
  const Node root = read_result(file, ReadLimits{65536 + 128 + 32768});  // one copy, header and nodes, not fifty
  ASSERT_EQ(root.items().size(), 50u);
  auto* first = reinterpret_cast<PyArrayObject*>(root.items()[0].array().ptr());
  auto* last = reinterpret_cast<PyArrayObject*>(root.items()[49].array().ptr());
  EXPECT_EQ(PyArray_BYTES(first), PyArray_BYTES(last));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(PyArray_BYTES(first)) % 16, 8u);  // still misaligned as written
  EXPECT_NE(format_error([&] { read_result(file, ReadLimits{60000}); }).find("outputs[0]: decoding"),
            std::string::npos);
}

// Every node keeps its path: a long key over many items had a 20 KB file take ~100 MB that no limit counted.
TEST(ReadLimits, EachNodesPathCounts) {
  TempDir dir;
  const fs::path file = dir.path() / "long_key.parity";
  py::dict outputs;
  outputs[py::str(std::string(10000, 'k'))] = py::eval("[None] * 10000");
  write_result(file, outputs);
  ASSERT_LT(fs::file_size(file), 100'000u);
  const std::string why = format_error([&] { read_result(file, ReadLimits{10'000'000}); });
  EXPECT_NE(why.find("decoding the outputs would take more than 10000000 bytes"), std::string::npos) << why;
  EXPECT_NO_THROW(read_result(file, ReadLimits{1'000'000'000}));
}

TEST(SafeFile, FifosAndSymbolicLinksAreRefusedByName) {
  TempDir dir;
  fs::create_directories(dir.path() / "results");
  write_result(dir.path() / "results" / "real.parity", py::dict());
  ASSERT_EQ(::mkfifo((dir.path() / "results" / "fifo.parity").c_str(), 0600), 0);
  fs::create_symlink(dir.path() / "results" / "real.parity", dir.path() / "results" / "link.parity");
  fs::create_directory_symlink(dir.path() / "results", dir.path() / "linked");
  EXPECT_EQ(read_result(dir.path(), "results/real.parity").kind(), Node::Kind::Dict);
  const auto refused = [&](const char* relative, const char* what) {
    const std::string why = format_error([&] { read_result(dir.path(), relative); });
    EXPECT_NE(why.find((dir.path() / relative).string() + ": is " + what), std::string::npos) << why;
  };
  refused("results/fifo.parity", "a FIFO");
  refused("results/link.parity", "a symbolic link");
  refused("linked/real.parity", "a symbolic link");
  EXPECT_THROW(read_regular_file(dir.path(), "results/fifo.parity"), UnsafeFileError);
  EXPECT_THROW(read_regular_file(dir.path(), "../x"), UnsafeFileError);
  EXPECT_THROW(is_safe_regular_file(dir.path(), "results/link.parity"), UnsafeFileError);
  EXPECT_FALSE(is_safe_regular_file(dir.path(), "results/absent.parity"));
  EXPECT_TRUE(is_safe_regular_file(dir.path(), "results/real.parity"));
  const OpenedFile opened = open_sized_regular_file(dir.path(), "results/real.parity");
  EXPECT_EQ(opened.size, fs::file_size(dir.path() / "results" / "real.parity"));
  EXPECT_EQ(read_to_end(opened.fd, "real.parity"), read_regular_file(dir.path(), "results/real.parity"));
  EXPECT_THROW(open_sized_regular_file(dir.path(), "linked/real.parity"), UnsafeFileError);
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

namespace parity {
namespace {

// ---------------------------------------------------------------------------------------------------------
// An object's array form (format 1.1, issue #17)

TEST(ArrayForm, AMappedObjectCarriesThePlainArrayItStandsForAtItsOwnPath) {
  py::dict scope;
  py::exec(R"(
import numpy as np, parity.reducers
class Cell:
    def __init__(self, data):
        self.data = data
    def __array__(self, dtype=None, copy=None):
        return self.data[::2]
Cell.__module__ = "parity_codec_test"
parity.reducers.register(Cell, lambda c: {"data": c.data}, lambda s: Cell(s["data"]), name="parity_codec_test.Cell")
parity.reducers.set_array_form(["parity_codec_test.Cell"])
outputs = {"c": Cell(np.arange(6.0))}
)",
           scope);
  TempDir dir;
  const fs::path file = dir.path() / "cell.parity";
  write_result(file, scope["outputs"]);
  const Node root = read_result(file);
  const Node& cell = root.items().at(0);
  ASSERT_EQ(cell.kind(), Node::Kind::Object);
  ASSERT_NE(cell.array_form(), nullptr);
  const Node& form = *cell.array_form();
  EXPECT_EQ(form.kind(), Node::Kind::Array);
  EXPECT_EQ(form.path, "outputs['c']");
  EXPECT_EQ(form.type, "parity_codec_test.Cell");
  EXPECT_EQ(py::str(form.array().attr("strides")).cast<std::string>(), "(16,)");  // the view's layout, as returned
  EXPECT_EQ(py::str(form.array().attr("tolist")()).cast<std::string>(), "[0.0, 2.0, 4.0]");
}

TEST(ArrayForm, AnArrayFieldThatIsNoPlainArrayIsRefused) {
  TempDir dir;
  const fs::path file = dir.path() / "form.parity";
  for (const std::string& form : {std::string(R"({"kind":"ref","path":"outputs"})"),
                                  std::string(R"({"kind":"object","type":"x.Y","reducer":"x.Y"})"),
                                  std::string(kMisalignedArray).insert(1, R"("reducer":"ndarray-subclass",)")}) {
    write_raw_result(file,
                     R"({"outputs":{"kind":"object","type":"x.Y","reducer":"x.Y","array":)" + form +
                         R"(},"blobs":[{"offset":0,"nbytes":65536}]})",
                     std::string(65536, '\1'));
    const std::string why = format_error([&] { read_result(file); });
    EXPECT_NE(why.find("outputs: an object's 'array' is not a plain ndarray node"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace parity
