// `parity coverage`: the gold run under parity.coverage and its report (coverage.h).
#include "coverage.h"

#include <pybind11/embed.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "interpreter.h"
#include "outcome.h"
#include "text.h"

namespace py = pybind11;

namespace parity {
namespace {

// A fresh private directory for the run's results and the workers' call records, removed at the end.
std::filesystem::path make_work_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "parity-coverage-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory");
  return pattern;
}

int report(const std::filesystem::path& calls, const std::string& json) {
  start_interpreter();
  try {
    return py::module_::import("parity.coverage").attr("main")(calls.string(), json).cast<int>();
  } catch (py::error_already_set& e) {
    std::fprintf(stderr, "parity coverage: %s\n", printable(e.what(), Newlines::kKeep).c_str());
    return kExitUsage;
  }
}

}  // namespace

int coverage_command(const CoverageOptions& options) {
  const std::filesystem::path work = make_work_dir();
  const std::filesystem::path calls = work / "calls";
  std::filesystem::create_directories(calls);
  ::setenv(kCoverageDirEnv, calls.c_str(), 1);  // the workers inherit it
  RunOptions run = options.run;
  run.backend = "parity.coverage";
  run.role = "gold";
  run.out = work / "results";
  run.pickle_probe = false;  // only the calls matter
  int code = run_scenarios(run);
  if (code == kExitOk || code == kExitFailed) {
    const int reported = report(calls, options.json);
    code = reported != kExitOk ? reported : code;
  }
  std::error_code ignored;
  std::filesystem::remove_all(work, ignored);
  return code;
}

}  // namespace parity
