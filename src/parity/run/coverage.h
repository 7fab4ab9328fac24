// `parity coverage`: a gold run of the selected scenarios under the recording backend parity.coverage, then the
// report of which NumPy public callables they called (python/parity/coverage.py; README, "Coverage").
#pragma once

#include <string>

#include "runner.h"

namespace parity {

/// The environment variable that tells parity.coverage's workers where to write what each scenario called.
inline constexpr const char* kCoverageDirEnv = "PARITY_COVERAGE_DIR";

/// What `parity coverage` is given: the run's selection, jobs and timeout; where the JSON goes (empty: none).
struct CoverageOptions {
  RunOptions run;
  std::string json;
};

/// Runs the selection under parity.coverage into a temporary results directory, prints the summary (per namespace
/// and in total, the uncovered callables) and writes the JSON. Returns the run's exit code when it is not kExitOk
/// (kExitFailed: some scenario errored, the report is still written), else kExitOk; kExitUsage when the report
/// cannot be made.
int coverage_command(const CoverageOptions& options);

}  // namespace parity
