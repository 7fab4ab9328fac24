// libFuzzer target: parity::read_result (and to_python on what it decodes) must turn any bytes into a FormatError.
#include <pybind11/embed.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "../raw_result.h"
#include "codec.h"
#include "interpreter.h"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace {

// The seeds are tests/codec_cases.py's cases (every layout and type the codec carries), small enough for
// -max_len, plus one file holding all of those. Its types live in a real module on the reducers'
// allow-list, imported in every fuzzing process too, so that inputs derived from the seeds reach the
// rebuild paths of to_python.
constexpr std::uintmax_t kMaxSeedBytes = 65536;

py::dict seed_cases() {
  py::module_::import("sys").attr("path").attr("insert")(0, PARITY_TESTS_DIR);
  py::dict cases;
  for (auto [name, make] : py::dict(py::module_::import("codec_cases").attr("CASES"))) cases[name] = make();
  return cases;
}

// Files whose nodes share one blob (shared_blob_*): str and bytes copies, misaligned arrays and zero-stride
// broadcasts over it, which mutations turn into reuse the budget (ReadLimits) must bound.
void write_shared_blob_seeds(const fs::path& dir) {
  using parity::testing::shared_blob_header;
  const std::string data(4096, '\x01');
  const std::string array = R"({"kind":"ndarray","type":"numpy.ndarray","dtype":{"str":"<f8"},"writeable":false,)";
  const struct {
    const char* name;
    std::string header;
  } seeds[] = {
      {"shared_blob_str", shared_blob_header(R"({"kind":"str","blob":0})", 64, data.size())},
      {"shared_blob_bytes", shared_blob_header(R"({"kind":"bytes","blob":0})", 64, data.size())},
      {"shared_blob_misaligned",
       shared_blob_header(array + R"("shape":[512],"strides":[8],"blob":0,"offset":0,"misalign":8})", 64, data.size())},
      {"shared_blob_broadcast",
       shared_blob_header(array + R"("shape":[1000000,1000000],"strides":[0,0],"blob":0,"offset":0,"misalign":0})", 4,
                          8)},
  };
  for (const auto& seed : seeds)
    parity::testing::write_raw_result(dir / (std::string(seed.name) + ".parity"), seed.header, data);
  // The same reuse in format 2's binary header: misaligned copies and a zero-stride broadcast of one blob.
  using parity::testing::shared_blob_header2;
  parity::testing::write_raw_result(dir / "shared_blob_misaligned2.parity", shared_blob_header2(64, 512, 4096, 8), data,
                                    2);
  parity::testing::write_raw_result(dir / "shared_blob_broadcast2.parity", shared_blob_header2(4, 1000000, 8, 0, 0),
                                    data, 2);
}

// Format 1 files as its last writer wrote them (tests/format_v1): today's writer writes format 2 only, and the
// format-1 reader must stay as safe.
void copy_format1_seeds(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(fs::path(PARITY_TESTS_DIR) / "format_v1"))
    if (entry.path().extension() == ".parity")
      fs::copy_file(entry.path(), dir / ("format1_" + entry.path().filename().string()),
                    fs::copy_options::overwrite_existing);
}

void write_seeds(const fs::path& dir) {
  fs::create_directories(dir);
  py::dict all;
  std::size_t written = 0;
  for (auto [name, value] : seed_cases()) {
    const fs::path file = dir / (name.cast<std::string>() + ".parity");
    parity::write_result(file, value);
    if (fs::file_size(file) > kMaxSeedBytes) {
      fs::remove(file);
      continue;
    }
    all[name] = value;
    ++written;
  }
  parity::write_result(dir / "all.parity", all);
  // The memmap case's file, which the process exits without removing: every run of scripts/fuzz.sh left one in /tmp.
  py::module_::import("codec_cases").attr("remove_memmap_file")();
  write_shared_blob_seeds(dir);
  copy_format1_seeds(dir);
  std::printf("wrote %zu seeds and all.parity to %s\n", written, dir.c_str());
}

fs::path input_file;   // read_result takes a path: each input is written here first
bool verbose = false;  // PARITY_FUZZ_VERBOSE=1: print each FormatError, to check how a reproducer is answered

void rejected(const parity::FormatError& e) {
  if (verbose) std::fprintf(stderr, "FormatError: %s\n", e.what());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  parity::start_interpreter();
  py::module_::import("sys").attr("path").attr("insert")(0, PARITY_TESTS_DIR);
  py::module_::import("codec_cases");  // registers the seeds' reducers and allow-list entry
  // `--write-seeds DIR` (libFuzzer ignores flags starting with "--", and never sees this one: we exit first).
  for (int i = 1; i + 1 < *argc; ++i) {
    if (std::string_view((*argv)[i]) != "--write-seeds") continue;
    write_seeds((*argv)[i + 1]);
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
    // A budget well under libFuzzer's -rss_limit_mb: running past it is a FormatError, not an out-of-memory.
    const parity::Node root = parity::read_result(input_file, parity::ReadLimits{64 << 20});
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
