// Sharding: which scenarios one of N processes runs or compares (`--shard I/N`, GoogleTest's GTEST_* variables).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "manifest.h"

namespace parity {

/// A bad --shard, --shard-times or GTEST_* value, or inputs whose shards do not line up; what() names the flag,
/// the variable or the files. Exit 2.
struct ShardError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The most shards a partition may have: far beyond any CI matrix, and small enough that a count read from a file
/// (run.shard.total) stays an ordinary number in every message and loop.
inline constexpr std::size_t kMaxShards = 100000;

/// One shard of a partition into `total` shards. `index` is 0-based, as GoogleTest's GTEST_SHARD_INDEX is; the
/// command line, messages and JSON spell it 1-based ("2/3"), as people count.
struct Shard {
  std::size_t index = 0, total = 1;
  std::string text() const { return std::to_string(index + 1) + "/" + std::to_string(total); }
};

/// What `--shard` and `--shard-times` were given, for run and compare alike; empty strings when not given.
struct ShardArgs {
  std::string shard;  ///< "I/N", 1-based
  std::string times;  ///< a results directory, its manifest.json, or a compare JSON
  /// Without `shard`: whether GoogleTest's GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX pick one (the command line), or
  /// nothing does (the Python API, which compares what it is given whatever runs it).
  bool from_environment = true;
};

/// Seconds per scenario id, the weights a partition balances.
using ShardTimes = std::map<std::string, double>;

/// Parses --shard's "I/N" (1 <= I <= N); throws ShardError naming --shard.
Shard parse_shard_flag(const std::string& text);

/// The shard GoogleTest's variables ask for (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX, 0-based), nullopt when neither is
/// set; `getenv` is the lookup (tests pass their own). Throws ShardError naming the variable that is bad or missing.
std::optional<Shard> shard_from_environment(const std::function<const char*(const char*)>& getenv);

/// The scenario times in `path`: a results directory or its manifest.json (each scenario's `seconds`), or a compare
/// JSON (a scenario's gold + candidate + compare seconds). Throws ShardError naming --shard-times and the file.
ShardTimes load_shard_times(const std::filesystem::path& path);

/// What the command line asked for: --shard (or else the GTEST_* variables) with --shard-times' times.
struct ShardRequest {
  Shard shard;
  ShardTimes times;        ///< empty without --shard-times
  std::string times_from;  ///< --shard-times, made absolute
};

/// Resolves `args` with the process environment: nullopt when neither --shard nor the GTEST_* variables ask for a
/// shard. Touches GTEST_SHARD_STATUS_FILE when the variables ask, as GoogleTest's protocol wants of a test program
/// that shards. Throws ShardError (--shard-times without a shard included).
std::optional<ShardRequest> resolve_shard_request(const ShardArgs& args);

/// The shard each id goes to, parallel to `ids` (duplicates get their first occurrence's shard): a deterministic
/// greedy, longest time first onto the least-loaded shard (ties: the shard with fewer scenarios, then the lower
/// index), equal times in id order. An id without a time weighs the mean of the known times of `ids`, or 1 when
/// none is known, so that without times shards are balanced by count. Depends on nothing but its arguments, so
/// every shard process computes the same partition.
std::vector<std::size_t> assign_shards(const std::vector<std::string>& ids, std::size_t total, const ShardTimes& times);

/// A partition and one shard of it: what a sharded run or compare records (run.shard, the compare JSON's shard).
struct ShardPlan {
  Shard shard;
  std::vector<std::string> scenarios;  ///< every selected id across all shards, in the unsharded run's order
  ShardTimes times;                    ///< the known times of those ids (none: balanced by count)
  std::string times_from;              ///< where the times were read, "" for none

  /// Plans shard `request.shard` of `ids`, keeping only the times of `ids`.
  static ShardPlan make(const ShardRequest& request, const std::vector<std::string>& ids);
  /// The shard (0-based) of each of `scenarios`, parallel to it: assign_shards(scenarios, shard.total, times).
  std::vector<std::size_t> assignment() const { return assign_shards(scenarios, shard.total, times); }
  /// This shard's ids, in `scenarios` order.
  std::vector<std::string> ids() const;
  /// Whether two plans partition the same way (same scenarios, times and total), whatever their index.
  bool same_partition(const ShardPlan& other) const;
  /// {"index" (1-based), "total", "scenarios", "times", "times_from"}.
  nlohmann::json to_json() const;
  /// Reads to_json()'s object back; throws ShardError naming `source` when it is malformed.
  static ShardPlan from_json(const nlohmann::json& doc, const std::string& source);
};

/// The plan a results directory was run under (its manifest's run.shard), nullopt for an unsharded run. Throws
/// ShardError naming the manifest when run.shard is malformed.
std::optional<ShardPlan> recorded_plan(const Manifest& manifest);

/// The shard `parity compare` compares: the one the command line requested (its partition over `ids`, the ids an
/// unsharded compare would compare, unless the runs are sharded), or, without a request, the one sharded runs
/// recorded; nullopt for an unsharded compare. Sharded runs must line up with each other and the request (same
/// partition and index), and a full run's ids must all be in a sharded one's: otherwise ShardError naming the
/// directories and what to run instead.
std::optional<ShardPlan> compare_shard_plan(const Manifest& gold, const Manifest& candidate,
                                            const std::optional<ShardRequest>& request,
                                            const std::vector<std::string>& ids);

}  // namespace parity
