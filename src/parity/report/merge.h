// `parity merge`: shards of one compare, or of one run, back into the report or results directory of the whole.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest.h"
#include "shard.h"

namespace parity {

/// Inputs that are not shards of one compare or run (other backends, versions, policies, scenario sets; one shard
/// given twice; a scenario in two shards): what() names the two files that disagree. Exit 2.
struct MergeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Merges the compare JSONs of the shards of one compare (`files` name them, for messages) into the report an
/// unsharded compare writes: scenarios in its order, summary recounted, each declared difference's explained counts
/// summed, `seconds` summed (the compute spent, not the wall time), `started` the earliest; each side's `run` the
/// first shard's without `shard`, its `seconds` summed over distinct runs. A scenario of the recorded full set that
/// no shard has becomes a `fail` with a `missing` check naming the shard that should have had it and the commands
/// that rerun that shard (`program` is how they invoke parity). Adds `merged` ({total, shards: [{index, file}],
/// missing: [{index, total, scenarios, reason, rerun}], by shard). Throws MergeError.
nlohmann::json merge_reports(const std::vector<nlohmann::json>& reports, const std::vector<std::string>& files,
                             const std::string& program);

/// Whether a merged report fails, as compare's exit code would: a fail (missing scenarios included), error or xpass,
/// or under strict_differences a declaration that explained nothing in any shard.
bool merged_report_failed(const nlohmann::json& report);

/// What merge_results made.
struct MergedRun {
  Manifest manifest;  ///< written to OUT/manifest.json
  /// The ids of the recorded full set that no shard has, by the shard that should have had them:
  /// [{index (1-based), total, scenarios, reason, rerun}], as run.merged.missing records them.
  nlohmann::json missing = nlohmann::json::array();
};

/// Merges the results directories of the shards of one run into `out` (created; it must not hold a manifest yet):
/// result and pickle files hard-linked (copied where linking fails), one manifest listing every scenario in the
/// unsharded run's order, `complete` only when every shard was and none is missing, run.shard replaced by
/// run.merged ({total, shards: [{index, dir}], missing: as MergedRun::missing}). Throws MergeError for refused input
/// and std::filesystem::filesystem_error when `out` cannot be written.
MergedRun merge_results(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                        const std::string& program);

/// `parity merge --out OUT DIR...`: merge_results, what it found printed to stderr. Exit 0, 1 when a scenario is
/// missing or ended error/xpass/crash/timeout (as `parity run` would), 2 for refused input.
int merge_results_command(const std::vector<std::string>& dirs, const std::string& out, const std::string& program);

/// `parity merge --json/--junit/--html FILE.json...`: reads the reports, merges them and hands the merged report to
/// `write` (which writes the files asked for and may throw std::exception). Exit 0, 1 when merged_report_failed, 2 for
/// unreadable or refused input or a failed write.
int merge_reports_command(const std::vector<std::string>& files, const std::string& program,
                          const std::function<void(const nlohmann::json&)>& write);

}  // namespace parity
