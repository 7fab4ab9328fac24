// `parity coverage`: the gold run under parity.coverage and its report (coverage.h).
#include "coverage.h"

#include <pybind11/embed.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "interpreter.h"
#include "outcome.h"
#include "temp_directory.h"
#include "text.h"

namespace py = pybind11;

namespace parity {
namespace {

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
  const TempDirectory work("parity-coverage-");  // the run's results and the workers' call records
  const std::filesystem::path calls = work.path() / "calls";
  std::filesystem::create_directories(calls);
  ::setenv(kCoverageDirEnv, calls.c_str(), 1);  // the workers inherit it
  RunOptions run = options.run;
  run.backend = "parity.coverage";
  run.role = "gold";
  run.out = work.path() / "results";
  run.pickle_probe = false;  // only the calls matter
  int code = run_scenarios(run);
  if (code == kExitOk || code == kExitFailed) {
    const int reported = report(calls, options.json);
    code = reported != kExitOk ? reported : code;
  }
  return code;
}

}  // namespace parity
