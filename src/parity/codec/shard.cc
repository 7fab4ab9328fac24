// Sharding (see shard.h): the --shard and GTEST_* parsers, the times file, the greedy partition and its record.
#include "shard.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <tuple>

#include "json_input.h"
#include "text.h"

using json = nlohmann::json;

namespace parity {
namespace {

// A whole decimal number and nothing else ("3", not "3x", " 3" or "-3"); nullopt otherwise.
std::optional<std::size_t> parse_count(const std::string& text) {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// An unset variable and an empty one alike mean "not asked" (`export GTEST_TOTAL_SHARDS=` switches it off).
const char* non_empty(const char* value) { return value && *value ? value : nullptr; }

// --shard-times' file, every failure naming the flag and the file (a number out of range included).
json read_times_file(const std::filesystem::path& file, const std::string& what) {
  try {
    return read_json_file(file, what);
  } catch (const JsonInputError& e) {
    throw ShardError(e.what());
  }
}

// A scenario's cost in a compare JSON: the whole pipeline's, both runs and the compare.
double report_seconds(const json& scenario) {
  double total = 0;
  const json seconds = scenario.value("seconds", json::object());
  for (const auto& [side, value] : seconds.items())
    if (value.is_number()) total += value.get<double>();
  return total;
}

ShardTimes times_of(const json& doc, bool is_report) {
  ShardTimes times;
  for (const json& s : doc.at("scenarios")) {
    const json& seconds = s.value("seconds", json());
    const double value = is_report ? report_seconds(s) : seconds.is_number() ? seconds.get<double>() : -1;
    if (value >= 0) times[s.at("id").get<std::string>()] = value;
  }
  return times;
}

// The first id of `a` that `b` lacks, "" when none.
std::string first_only_in(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const std::set<std::string> in_b(b.begin(), b.end());
  for (const std::string& id : a)
    if (!in_b.count(id)) return id;
  return "";
}

// Why two recorded partitions differ, for a message that says what to do about it.
std::string partition_difference(const ShardPlan& a, const std::string& a_name, const ShardPlan& b,
                                 const std::string& b_name) {
  if (a.shard.total != b.shard.total)
    return "into " + std::to_string(a.shard.total) + " and " + std::to_string(b.shard.total) + " shards";
  if (a.scenarios != b.scenarios) {
    std::string only = first_only_in(a.scenarios, b.scenarios), in = a_name;
    if (only.empty()) only = first_only_in(b.scenarios, a.scenarios), in = b_name;
    return "over different scenario lists (" + std::to_string(a.scenarios.size()) + " and " +
           std::to_string(b.scenarios.size()) + " scenarios" +
           (only.empty() ? ", in another order" : "; '" + only + "' is only in " + in + "'s") + ")";
  }
  return "with different --shard-times (" + (a.times_from.empty() ? "none" : a.times_from) + " and " +
         (b.times_from.empty() ? "none" : b.times_from) + ")";
}

std::string dir_of(const Manifest& m) { return m.dir.string(); }

// Both runs are sharded: they must be the same shard of the same partition.
void check_lined_up(const ShardPlan& g, const Manifest& gold, const ShardPlan& c, const Manifest& candidate) {
  if (!g.same_partition(c))
    throw ShardError(dir_of(gold) + " and " + dir_of(candidate) + " were sharded " +
                     partition_difference(g, dir_of(gold), c, dir_of(candidate)) +
                     ", so their shards do not line up: merge each side's shards (parity merge --out DIR SHARD_DIR...) "
                     "and compare the merged runs");
  if (g.shard.index != c.shard.index)
    throw ShardError(dir_of(gold) + " is shard " + g.shard.text() + " and " + dir_of(candidate) + " shard " +
                     c.shard.text() + ": compare the same shard of both runs");
}

// What --shard (or GTEST_*) asks of sharded runs: the shard they hold, with the times they were partitioned by.
void check_request_fits(const ShardRequest& request, const ShardPlan& recorded, const Manifest& sharded) {
  if (request.shard.index != recorded.shard.index || request.shard.total != recorded.shard.total)
    throw ShardError("shard " + request.shard.text() + " was asked for, but " + dir_of(sharded) + " holds shard " +
                     recorded.shard.text() + " of its run: compare it with --shard " + recorded.shard.text() +
                     " or without --shard (merge the shards first to compare another partition)");
  const ShardPlan asked = ShardPlan::make(request, recorded.scenarios);
  if (!request.times_from.empty() && asked.times != recorded.times)
    throw ShardError("--shard-times " + request.times_from + " holds other times than " + dir_of(sharded) +
                     " was sharded with (" + (recorded.times_from.empty() ? "none" : recorded.times_from) +
                     "): leave --shard-times out to compare the shard it holds");
}

// A full run beside a sharded one: every scenario it ran must be in the sharded run's list, or it would be
// compared in no shard at all.
void check_full_side(const Manifest& full, const ShardPlan& recorded, const Manifest& sharded) {
  std::vector<std::string> ids;
  for (const ScenarioRecord& r : full.scenarios) ids.push_back(r.id);
  const std::string extra = first_only_in(ids, recorded.scenarios);
  if (!extra.empty())
    throw ShardError(dir_of(full) + " has scenario '" + extra + "', which the scenario list of " + dir_of(sharded) +
                     " (shard " + recorded.shard.text() +
                     ") lacks: the runs selected different scenarios; compare them unsharded, or run both sharded");
}

}  // namespace

Shard parse_shard_flag(const std::string& text) {
  const std::size_t slash = text.find('/');
  const auto index = parse_count(text.substr(0, slash));
  const auto total = slash == std::string::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!index || !total)
    throw ShardError("--shard '" + text + "': expected I/N, shard I of N counted from 1, e.g. --shard 2/3");
  if (*total < 1 || *index < 1 || *index > *total)
    throw ShardError("--shard '" + text + "': the shard must be 1 to N and N at least 1, e.g. --shard 1/" +
                     std::to_string(std::clamp<std::size_t>(*total, 1, kMaxShards)));
  if (*total > kMaxShards)
    throw ShardError("--shard '" + text + "': at most " + std::to_string(kMaxShards) + " shards");
  return {*index - 1, *total};
}

std::optional<Shard> shard_from_environment(const std::function<const char*(const char*)>& getenv) {
  const char* total_text = non_empty(getenv("GTEST_TOTAL_SHARDS"));
  const char* index_text = non_empty(getenv("GTEST_SHARD_INDEX"));
  if (!total_text && !index_text) return std::nullopt;
  if (!total_text || !index_text)
    throw ShardError(std::string(total_text ? "GTEST_TOTAL_SHARDS" : "GTEST_SHARD_INDEX") + " is set but " +
                     (total_text ? "GTEST_SHARD_INDEX" : "GTEST_TOTAL_SHARDS") +
                     " is not: GoogleTest sharding needs both (or use --shard I/N)");
  const auto total = parse_count(total_text);
  if (!total || *total < 1 || *total > kMaxShards)
    throw ShardError(std::string("GTEST_TOTAL_SHARDS='") + total_text + "' is not a shard count (1 to " +
                     std::to_string(kMaxShards) + ")");
  const auto index = parse_count(index_text);
  if (!index || *index >= *total)
    throw ShardError(std::string("GTEST_SHARD_INDEX='") + index_text + "' is not a shard index: it counts from 0 " +
                     "and must be below GTEST_TOTAL_SHARDS=" + total_text);
  return Shard{*index, *total};
}

ShardTimes load_shard_times(const std::filesystem::path& path) {
  const std::string what = "--shard-times " + path.string();
  const auto file = std::filesystem::is_directory(path) ? path / kManifestName : path;
  // A directory's manifest named after the flag's value; a file named once.
  const json doc = read_times_file(file, file == path ? what : what + ": " + file.string());
  const std::string format = doc.is_object() ? doc.value("format", "") : "";
  if (format != "parity-manifest" && format != "parity-compare")
    throw ShardError(what + ": neither a results directory, its manifest.json, nor a compare JSON");
  try {
    return times_of(doc, format == "parity-compare");
  } catch (const json::exception& e) {
    throw ShardError(what + ": malformed scenario list (" + e.what() + ")");
  }
}

std::optional<ShardRequest> resolve_shard_request(const ShardArgs& args) {
  const bool from_environment = args.shard.empty();
  const std::optional<Shard> shard = !from_environment ? std::optional(parse_shard_flag(args.shard))
                                     : args.from_environment
                                         ? shard_from_environment([](const char* name) { return std::getenv(name); })
                                         : std::nullopt;
  if (!shard) {
    if (!args.times.empty())
      throw ShardError(
          "--shard-times needs a shard: give --shard I/N (or set GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX)");
    return std::nullopt;
  }
  if (const char* status = non_empty(std::getenv("GTEST_SHARD_STATUS_FILE")); from_environment && status)
    std::ofstream{status, std::ios::app};  // "this program shards": GoogleTest's runners check that it exists
  // Absolute, so that the rerun commands merge prints work from any directory.
  ShardRequest request{*shard, {}, args.times.empty() ? "" : std::filesystem::absolute(args.times).string()};
  if (!args.times.empty()) request.times = load_shard_times(args.times);
  return request;
}

std::vector<std::size_t> assign_shards(const std::vector<std::string>& ids, std::size_t total,
                                       const ShardTimes& times) {
  if (total < 1) throw std::invalid_argument("assign_shards: no shards");
  const std::set<std::string> unique(ids.begin(), ids.end());
  // A time of 0 says nothing about a scenario's cost (a merged report's missing scenarios, module errors): weighed
  // as 0, all of them would pile onto one shard, since adding nothing never changes which shard is least loaded.
  auto known_time = [&times](const std::string& id) -> std::optional<double> {
    const auto t = times.find(id);
    return t != times.end() && t->second > 0 ? std::optional<double>(t->second) : std::nullopt;
  };
  // Summed in id order, so every process gets the very same mean.
  double known_sum = 0;
  std::size_t known = 0;
  for (const std::string& id : unique)
    if (const auto t = known_time(id)) known_sum += *t, ++known;
  const double fallback = known ? known_sum / static_cast<double>(known) : 1.0;
  std::vector<std::pair<double, const std::string*>> items;
  for (const std::string& id : unique) items.emplace_back(known_time(id).value_or(fallback), &id);
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : *a.second < *b.second;
  });
  // The least-loaded shard (then fewer scenarios, then the lower index) from a heap of the shards used so far and
  // the lowest unused one: O(scenarios log scenarios) whatever `total` is, and no memory per unused shard.
  using Load = std::tuple<double, std::size_t, std::size_t>;  // load, scenarios, shard
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> used;
  std::size_t fresh = 0;  // shards from here on hold nothing yet
  std::map<std::string, std::size_t> shard_of;
  for (const auto& [weight, id] : items) {
    Load best{0.0, 0, fresh};
    const bool reuse = fresh == total || (!used.empty() && used.top() < best);
    if (reuse) {
      best = used.top();
      used.pop();
    } else {
      ++fresh;
    }
    auto& [load, count, shard] = best;
    shard_of[*id] = shard;
    used.push({load + weight, count + 1, shard});
  }
  std::vector<std::size_t> assigned;
  for (const std::string& id : ids) assigned.push_back(shard_of.at(id));
  return assigned;
}

ShardPlan ShardPlan::make(const ShardRequest& request, const std::vector<std::string>& ids) {
  ShardPlan plan{request.shard, ids, {}, request.times_from};
  for (const std::string& id : ids)
    if (const auto t = request.times.find(id); t != request.times.end()) plan.times.insert(*t);
  return plan;
}

std::vector<std::string> ShardPlan::ids() const {
  const std::vector<std::size_t> assigned = assignment();
  std::vector<std::string> mine;
  for (std::size_t i = 0; i < scenarios.size(); ++i)
    if (assigned[i] == shard.index) mine.push_back(scenarios[i]);
  return mine;
}

bool ShardPlan::same_partition(const ShardPlan& other) const {
  return shard.total == other.shard.total && scenarios == other.scenarios && times == other.times;
}

json ShardPlan::to_json() const {
  return {{"index", shard.index + 1},
          {"total", shard.total},
          {"scenarios", scenarios},
          {"times", times},
          {"times_from", times_from.empty() ? json() : json(times_from)}};
}

ShardPlan ShardPlan::from_json(const json& doc, const std::string& source) {
  auto fail = [&](const std::string& why) { return ShardError(source + ": malformed shard record: " + why); };
  if (!doc.is_object()) throw fail("not an object");
  const json &index = doc.value("index", json()), &total = doc.value("total", json());
  if (!index.is_number_unsigned() || !total.is_number_unsigned() || index.get<std::size_t>() < 1 ||
      index.get<std::size_t>() > total.get<std::size_t>() || total.get<std::size_t>() > kMaxShards)
    throw fail("\"index\" and \"total\" must be whole numbers with 1 <= index <= total <= " +
               std::to_string(kMaxShards));
  ShardPlan plan;
  plan.shard = {index.get<std::size_t>() - 1, total.get<std::size_t>()};
  try {
    plan.scenarios = doc.at("scenarios").get<std::vector<std::string>>();
    plan.times = doc.value("times", json::object()).get<ShardTimes>();
  } catch (const json::exception& e) {
    throw fail(e.what());
  }
  // A plan partitions distinct ids; one listed twice would be assigned twice, and readers keyed by id (merge) fail.
  std::set<std::string> seen;
  for (const std::string& id : plan.scenarios)
    if (!seen.insert(id).second) throw fail("scenario " + printable(id) + " is listed twice");
  const json& from = doc.value("times_from", json());
  plan.times_from = from.is_string() ? from.get<std::string>() : "";
  return plan;
}

std::optional<ShardPlan> recorded_plan(const Manifest& manifest) {
  if (!manifest.run.is_object() || !manifest.run.contains("shard")) return std::nullopt;
  return ShardPlan::from_json(manifest.run.at("shard"), (manifest.dir / kManifestName).string());
}

std::optional<ShardPlan> compare_shard_plan(const Manifest& gold, const Manifest& candidate,
                                            const std::optional<ShardRequest>& request,
                                            const std::vector<std::string>& ids) {
  const std::optional<ShardPlan> g = recorded_plan(gold), c = recorded_plan(candidate);
  if (g && c) check_lined_up(*g, gold, *c, candidate);
  if (!g && !c) return request ? std::optional(ShardPlan::make(*request, ids)) : std::nullopt;
  const Manifest& sharded = g ? gold : candidate;
  const ShardPlan& recorded = g ? *g : *c;
  if (!g || !c) check_full_side(g ? candidate : gold, recorded, sharded);
  if (request) check_request_fits(*request, recorded, sharded);
  return recorded;
}

}  // namespace parity
