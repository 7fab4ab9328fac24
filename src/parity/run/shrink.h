// `parity shrink`: the smallest input of a generated scenario on which a candidate still fails the same check at the
// same place, found with Hypothesis by python/parity/shrink.py (README, "Shrinking a failure").
#pragma once

#include <string>
#include <vector>

namespace parity {

/// What `parity shrink` is given.
struct ShrinkOptions {
  std::string id;                      ///< the scenario to shrink (a generated `ops.<name>[layout=...,dtype=...]`)
  std::string backend;                 ///< the candidate backend
  std::string out;                     ///< the scenario module to write (empty: shrunk_<function>.py here)
  std::vector<std::string> scenarios;  ///< where the id is looked up (empty: the bundled corpus)
  int max_examples = 50;               ///< at most this many cases are run
  double timeout = 60;                 ///< seconds each side's run of a case may take
  std::string check;                   ///< the failed check to keep (empty: the scenario's first)
  std::vector<std::string> trusted_backends;  ///< passed to compare as --trust-backend
  std::string program;                        ///< this executable, which runs the cases (`run`, `compare`)
};

/// Shrinks the failure and writes the minimal scenario module. Returns kExitFailed when it wrote one (the candidate
/// fails it), kExitOk when the scenario does not fail under the backend (nothing to shrink), kExitUsage with a message
/// naming the reason otherwise (an unknown id, a hand-written scenario, which has no search space, Hypothesis
/// missing, a run that could not be made).
int shrink_command(const ShrinkOptions& options);

}  // namespace parity
