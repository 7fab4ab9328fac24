// `parity run` and `parity list`: discover scenarios, run them under one backend, write the results directory.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "outcome.h"
#include "process.h"
#include "progress.h"
#include "shard.h"

namespace parity {

struct Selection {
  std::vector<std::string> paths;  ///< scenario files or directories
  std::vector<std::string> only;   ///< exact ids; empty means all
  std::string keyword;             ///< pytest's -k expression over each scenario's keyword_names()
};

struct RunOptions {
  std::string backend;  ///< built-in name, dotted module or .py path; empty falls back to PARITY_BACKEND
  std::string role;     ///< gold or candidate; empty derives it from the backend name
  std::filesystem::path out;
  Selection selection;
  Verbosity verbosity = Verbosity::kNormal;  ///< what the terminal shows (progress.h)
  bool pickle_probe = true;                  ///< also store the outputs pickled (protocol 5) for compare's pickle check
  int jobs = 1;                              ///< worker processes running scenarios at once
  double timeout = 300;                      ///< seconds a scenario may run (its own timeout= wins); 0: no limit
  std::size_t max_memory_mb = 0;             ///< a worker's resident memory limit; 0: none
  std::string program;                       ///< this executable, which the workers run as `parity _worker`
  bool resume = false;                       ///< keep what an interrupted run into `out` finished, run only the rest
  ShardArgs sharding;  ///< --shard and --shard-times: run only one shard of the selection (shard.h)
  /// Set by `parity check`, whose process started the interpreter before forking its runs: a worker is then a fork
  /// of the run's process running this with the worker's command line, not `program` executed (process.h).
  InProcessEntry in_process_worker;
  /// Workers a fork server's run adds on SIGUSR1 (catch_more_workers_signal), 0: none. `parity check` sends it to the
  /// run still going once the other ended and left its cores idle.
  int workers_on_signal = 0;
};

/// Installs the handler of the SIGUSR1 that asks a run for RunOptions::workers_on_signal more workers; the process
/// forking the runs installs it first, so that no run is ever without it (SIGUSR1's default ends a process).
void catch_more_workers_signal();

/// The backend a run of `options` loads: its --backend, else $PARITY_BACKEND; empty when neither names one.
std::string backend_name(const RunOptions& options);

/// Removes the temporary directories of `prefix` (TempDirectory's, Lock::kHeld) that processes of `command` killed
/// outright left (remove_orphaned_temp_directories) and tells how many, unless quiet: each command that holds one
/// calls it before it makes its own.
void remove_orphaned_temp_directories(const char* command, const std::string& prefix, Verbosity verbosity);

/// Runs the selected scenarios in worker processes and writes OUT/manifest.json and OUT/results/*. Returns
/// kExitOk when every scenario ended ok/xfail/skip, kExitFailed when one ended error/xpass/crash/timeout,
/// kExitUsage for a bad backend, path, selection or shard (nothing written), kExitNoTests for a selection of nothing
/// (nothing written), kExitInterrupted on SIGINT/SIGTERM (the
/// manifest lists what finished). A sharded run runs only its shard's scenarios and records the partition in the
/// manifest's run.shard.
int run_scenarios(const RunOptions& options);

}  // namespace parity
