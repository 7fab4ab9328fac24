// `parity coverage`: the gold run under parity.coverage and its report (coverage.h).
#include "coverage.h"

#include <pybind11/embed.h>
#include <stdlib.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>

#include "atomic_file.h"
#include "deadline.h"
#include "interpreter.h"
#include "outcome.h"
#include "temp_directory.h"
#include "text.h"

namespace py = pybind11;

namespace parity {
namespace {

constexpr const char* kWorkPrefix = "parity-coverage-";

// The summary printed and the JSON written (write_named_file, as every report: main.cc checked where before the run).
// A Ctrl-C meanwhile is parity's (deadline.h), not a KeyboardInterrupt told as the summary's error (exit 2): the
// summary is finished, then Interrupted ends the command (exit 130).
int report(const std::filesystem::path& calls, const std::string& json) {
  const StopSignalHandler stops(note_stop_signal);
  start_interpreter();
  try {
    const py::tuple texts = py::module_::import("parity.coverage").attr("texts")(calls.string());
    if (!json.empty()) write_named_file(json, texts[0].cast<std::string>());
    std::fputs(texts[1].cast<std::string>().c_str(), stdout);
    std::fflush(stdout);
    check_interrupted();
    return kExitOk;
  } catch (const std::exception& e) {  // Python's error (error_already_set), or the file's
    std::fprintf(stderr, "parity coverage: %s\n", printable(e.what(), Newlines::kKeep).c_str());
    return kExitUsage;
  }
}

}  // namespace

int coverage_command(const CoverageOptions& options) {
  // The run's results and the workers' call records: held, so that the next coverage removes what one killed
  // outright (SIGKILL) left, as a run does its scenarios' temporary directory (runner.cc). Told on stderr whatever the
  // run's verbosity (quiet: the coverage summary is its output).
  remove_orphaned_temp_directories("coverage", kWorkPrefix, Verbosity::kNormal);
  const TempDirectory work(kWorkPrefix, TempDirectory::Lock::kHeld);
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
