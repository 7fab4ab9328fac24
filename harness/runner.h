// `parity run` and `parity list`: discover scenarios, run them under one backend, write the results directory.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "progress.h"

namespace parity {

/// Exit codes every subcommand uses; scripts rely on them.
enum ExitCode : int { kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitInterrupted = 130 };

struct Selection {
  std::vector<std::string> paths;  ///< scenario files or directories
  std::vector<std::string> only;   ///< exact ids; empty means all
  std::string keyword;             ///< substring an id must contain
};

struct RunOptions {
  std::string backend;  ///< built-in name, dotted module or .py path; empty falls back to PARITY_BACKEND
  std::string role;     ///< gold or candidate; empty derives it from the backend name
  std::filesystem::path out;
  Selection selection;
  Verbosity verbosity = Verbosity::kNormal;  ///< what the terminal shows (progress.h)
  bool pickle_probe = true;                  ///< also store the outputs pickled (protocol 5) for compare's pickle check
};

/// Runs the selected scenarios and writes OUT/manifest.json and OUT/results/*. Returns kExitOk when every
/// scenario ended ok/xfail/skip, kExitFailed when one ended error/xpass, kExitUsage for a bad backend,
/// path or selection (nothing written).
int run_scenarios(const RunOptions& options);

/// Prints the selected scenario ids (and modules that fail to import) without loading any backend.
int list_scenarios(const Selection& selection, bool as_json);

}  // namespace parity
