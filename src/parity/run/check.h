// `parity check`: the gold run and the candidate run side by side, then their compare, in one command.
#pragma once

#include <filesystem>

#include "compare_results.h"
#include "runner.h"

namespace parity {

/// What `parity check` is given: the runs' options (the candidate's backend, the directory both runs go under, the
/// selection, jobs, timeout) and the compare's (its reports, policies, trust). check_scenarios fills in what the
/// compare takes from the runs.
struct CheckOptions {
  RunOptions run;          ///< backend: the candidate's; out: the directory holding both results directories
  CompareCommand compare;  ///< gold, candidate, trust, jobs and the pickle probe are set from `run`
};

/// Where a check's gold and candidate results directories go under its --out.
std::filesystem::path check_gold_dir(const std::filesystem::path& out);
std::filesystem::path check_candidate_dir(const std::filesystem::path& out);

/// Starts the interpreter, then runs the selection under gold and under the candidate at once, in two forked copies
/// of this process that each do what `parity run` does (run_scenarios; their workers forks of them when
/// options.run.in_process_worker is set) with their output forwarded line by line under "[gold] " and
/// "[candidate] "; then compares the two (compare_results with `reporter`), trusting the selection's scenario paths and
/// the candidate backend the runs were given. Returns compare's exit code, or kExitFailed where a run failed (a
/// scenario error) and compare found nothing; a run's kExitUsage, kExitNoTests or kExitInterrupted ends the check
/// before the compare, with that code.
int check_scenarios(CheckOptions& options, CompareReporter& reporter);

}  // namespace parity
