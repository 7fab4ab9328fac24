// `parity compare`: reads two results directories, checks them as a pair and compares them with progress shown.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "compare.h"
#include "manifest.h"
#include "progress.h"
#include "shard.h"

namespace parity {

/// What `parity compare` is given, but for its reports (CompareReporter's business).
struct CompareCommand {
  std::string gold, candidate;    ///< the two results directories
  std::optional<double> timeout;  ///< seconds per scenario; unset: the runs' own, as their manifests record it
  CompareOptions options;         ///< `program` set by the caller: how repro commands invoke parity
  Verbosity verbosity = Verbosity::kNormal;
  ShardArgs sharding;
  std::FILE* terminal = stderr;  ///< where the banner, the scenarios and the summary go (the Python API: nowhere)
  /// The command line's, whose process ends right after: the manifests and the report are left to that end
  /// (keep_until_exit, base/exit_keep.h) instead of freed one allocation at a time.
  bool process_ends_after = false;
  /// Installs note_stop_signal for the compare and clears its flag after (deadline.h). false: the caller does, or
  /// leaves the handlers as they are (the Python API: only its main thread's outermost call installs, core_module.cc).
  bool own_stop_handler = true;
};

/// The reports of a compare. This layer cannot see them (src/parity/report writes them), so the caller of
/// compare_results passes them in; they are called in this order.
class CompareReporter {
 public:
  virtual ~CompareReporter() = default;
  /// With the pair read and checked, before anything is compared: reads what the reports need (the baselines),
  /// checked against the `candidate` run. Returns what makes them unusable (a usage error), empty when nothing does.
  virtual std::string prepare(const Manifest& candidate) = 0;
  /// Each scenario's outcome once decided, in the report's order, while the later ones are compared: what a report
  /// can render of it before the last (nothing by default).
  virtual void outcome(const ScenarioOutcome&) {}
  /// Writes the reports of the finished compare, adding each to `written` once it is on disk (a failure later still
  /// lists the ones before it). Throws std::runtime_error.
  virtual void write(const CompareReport& report, std::vector<WrittenReport>& written) = 0;
  /// After the summary table: what else the terminal is told about the outcome (trends, stale declarations, notices).
  virtual void tell(const CompareReport& report, Verbosity verbosity) = 0;
  /// Why the compare stopped short (a usage error: a refused pair, bad declared differences, a report not written),
  /// in parity's words; compare_results then returns kExitUsage. Printed on stderr unless overridden.
  virtual void refuse(const std::string& message);
};

/// `parity compare`: reads both runs' manifests, refuses a pair that cannot be meant (swapped, disjoint, nothing to
/// compare, a bad shard) and compares them, the banner and each scenario shown on the command's terminal; then
/// `reporter` writes and tells. Returns kExitOk, kExitFailed when a scenario failed, kExitUsage for a refused pair, an
/// unusable reporter, bad declared differences or a report it cannot write (the message given to reporter.refuse).
int compare_results(const CompareCommand& command, CompareReporter& reporter);

}  // namespace parity
