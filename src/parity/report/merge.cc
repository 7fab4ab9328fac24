// Merges shard compare reports, or shard results directories, into those of the whole (see merge.h).
#include "merge.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <span>

#include "compare.h"
#include "json_input.h"
#include "json_report.h"
#include "outcome.h"
#include "safe_file.h"
#include "text.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace parity {
namespace {

// A fact every shard of one compare (or run) shares, at a JSON pointer; `what` names it when two shards disagree.
struct Agreement {
  const char* pointer;
  const char* what;
};

constexpr Agreement kReportAgreements[] = {
    {"/parity", "parity version"},
    {"/gold/backend/name", "gold backend"},
    {"/gold/backend/version", "gold backend's version"},
    {"/candidate/backend/name", "candidate backend"},
    {"/candidate/backend/version", "candidate backend's version"},
    {"/candidate/backend/differences", "candidate backend's declared differences"},
    {"/policy", "compare policies (--dtype-policy, --layout-policy, ...)"},
    {"/strict_differences", "--strict-differences"},
    {"/shard/total", "number of shards"},
    {"/shard/scenarios", "scenario set"},
    {"/shard/times", "times the shards were balanced by (--shard-times)"},
};

constexpr Agreement kRunAgreements[] = {
    {"/run/parity", "parity version"},
    {"/backend/name", "backend"},
    {"/backend/version", "backend's version"},
    {"/backend/role", "role"},
    {"/run/shard/total", "number of shards"},
    {"/run/shard/scenarios", "scenario set"},
    {"/run/shard/times", "times the shards were balanced by (--shard-times)"},
};

// Two values as a message shows them: long lists and maps by their sizes and their first difference.
std::string describe_values(const json& a, const json& b) {
  const bool long_lists = a.is_array() && b.is_array() && std::max(a.size(), b.size()) > 3;
  const bool long_maps = a.is_object() && b.is_object() && std::max(a.size(), b.size()) > 3;
  if (!long_lists && !long_maps) return a.dump() + " vs " + b.dump();
  std::string first;
  if (long_lists) {
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    first = "#" + std::to_string(k + 1) + ": " + (k < a.size() ? a[k].dump() : "none") + " vs " +
            (k < b.size() ? b[k].dump() : "none");
  } else {
    std::set<std::string> keys;
    for (const json* m : {&a, &b})
      for (const auto& [key, value] : m->items()) keys.insert(key);
    for (const std::string& key : keys)
      if (first.empty() && (!a.contains(key) || !b.contains(key) || a[key] != b[key])) first = "'" + key + "'";
  }
  return std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " entries, the first difference at " + first;
}

json value_at(const json& doc, const char* pointer) {
  const json* at = find_at(doc, pointer);
  return at ? *at : json();
}

// Refuses inputs that are not shards of one `unit` (compare or run), naming the first two files that disagree.
void check_agreement(const std::vector<json>& docs, const std::vector<std::string>& names,
                     std::span<const Agreement> agreements, const std::string& unit) {
  for (std::size_t i = 1; i < docs.size(); ++i)
    for (const Agreement& a : agreements) {
      const json first = value_at(docs[0], a.pointer), other = value_at(docs[i], a.pointer);
      if (first != other)
        throw MergeError(names[0] + " and " + names[i] + " disagree on the " + a.what + " (" +
                         describe_values(first, other) + "): they are not shards of one " + unit);
    }
}

// One shard given twice is a mistake that would count its scenarios twice.
void check_distinct_shards(const std::vector<ShardPlan>& plans, const std::vector<std::string>& names) {
  std::map<std::size_t, std::size_t> seen;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (const auto [at, fresh] = seen.emplace(plans[i].shard.index, i); !fresh)
      throw MergeError(names[at->second] + " and " + names[i] + " are both shard " + plans[i].shard.text() +
                       ": give each shard once");
}

// Each id in at most one shard: {id: index of the input holding it}.
std::map<std::string, std::size_t> owners(const std::vector<std::vector<std::string>>& ids_by_input,
                                          const std::vector<std::string>& names) {
  std::map<std::string, std::size_t> owner;
  for (std::size_t i = 0; i < ids_by_input.size(); ++i)
    for (const std::string& id : ids_by_input[i])
      if (const auto [at, fresh] = owner.emplace(id, i); !fresh)
        throw MergeError(names[at->second] + " and " + names[i] + " both hold scenario '" + id +
                         "': they are not different shards of one partition");
  return owner;
}

std::string earliest(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return b.empty() || a < b ? a : b;  // ISO 8601 UTC timestamps order as strings
}

// The runs a merge covers, each once: the first one's record without its shard, seconds summed, the earliest start.
json merged_run(const std::vector<json>& runs) {
  json out = runs.front();
  out.erase("shard");
  double seconds = 0;
  std::string started;
  for (const json& run : runs) {
    seconds += run.value("seconds", 0.0);
    started = earliest(started, run.value("started", ""));
  }
  out["seconds"] = seconds;
  out["started"] = started;
  return out;
}

// `PROGRAM run ...` that runs one shard of the run `side` ({backend, run}) records, into `out`.
std::string shard_run_command(const std::string& program, const json& side, const std::string& shard_flags,
                              const std::string& out) {
  std::string cmd = run_command(program, side.at("backend"));
  const json run = side.value("run", json::object());
  for (const json& path : run.value("paths", json::array()))
    cmd += " --scenarios " + shell_quote(path.get<std::string>());
  for (const json& id : run.value("only", json::array())) cmd += " --only " + shell_quote(id.get<std::string>());
  if (const std::string k = run.value("keyword", ""); !k.empty()) cmd += " -k " + shell_quote(k);
  return cmd + shard_flags + " --out " + shell_quote(out);
}

std::string shard_flags(const Shard& shard, const ShardPlan& plan) {
  return " --shard " + shard.text() + (plan.times_from.empty() ? "" : " --shard-times " + shell_quote(plan.times_from));
}

// {shard index: the name of the input holding it}.
std::map<std::size_t, std::string> given_shards(const std::vector<ShardPlan>& plans,
                                                const std::vector<std::string>& names) {
  std::map<std::size_t, std::string> given;
  for (std::size_t i = 0; i < plans.size(); ++i) given[plans[i].shard.index] = names[i];
  return given;
}

// How a shard given or not given has no scenario: the rerun commands for shard `shard`, given the name of the
// input that holds it (nullptr: none does).
using Rerun = std::function<std::string(const Shard& shard, const std::string* given)>;

// The scenarios of the recorded set that no input has, grouped by the shard that should have had them:
// [{index (1-based), scenarios, reason, rerun}].
json missing_shards(const ShardPlan& plan, const std::set<std::string>& present,
                    const std::map<std::size_t, std::string>& given, const std::string& unit, const Rerun& rerun) {
  const std::vector<std::size_t> assigned = plan.assignment();
  std::map<std::size_t, std::vector<std::string>> lost;
  for (std::size_t k = 0; k < plan.scenarios.size(); ++k)
    if (!present.count(plan.scenarios[k])) lost[assigned[k]].push_back(plan.scenarios[k]);
  json groups = json::array();
  for (const auto& [index, ids] : lost) {
    const Shard shard{index, plan.shard.total};
    const auto in = given.find(index);
    const std::string reason =
        in == given.end() ? "no " + unit + " of shard " + shard.text() + " was given"
                          : in->second + " holds shard " + shard.text() + " without them (did its run stop early?)";
    groups.push_back({{"index", index + 1},
                      {"total", shard.total},
                      {"scenarios", ids},
                      {"reason", reason},
                      {"rerun", rerun(shard, in == given.end() ? nullptr : &in->second)}});
  }
  return groups;
}

std::size_t missing_count(const json& groups) {
  std::size_t n = 0;
  for (const json& g : groups) n += g.at("scenarios").size();
  return n;
}

void print_missing(const json& groups) {
  for (const json& g : groups) {
    const json& ids = g.at("scenarios");
    std::string listed;
    for (std::size_t i = 0; i < ids.size() && i < 3; ++i)
      listed += (i ? ", " : "") + printable(ids[i].get<std::string>());
    if (ids.size() > 3) listed += ", ...";
    std::fprintf(stderr,
                 "parity merge: missing: %zu scenario%s of shard %s/%s (%s): %s; rerun that shard, then merge "
                 "again: %s\n",
                 ids.size(), ids.size() == 1 ? "" : "s", g.at("index").dump().c_str(), g.at("total").dump().c_str(),
                 listed.c_str(), printable(g.value("reason", "")).c_str(), printable(g.value("rerun", "")).c_str());
  }
}

// The commands that make shard `shard`'s compare report again, from the first report's record of the runs.
std::string rerun_report_shard(const json& report, const Shard& shard, const ShardPlan& plan,
                               const std::string& program) {
  const json &gold = report.at("gold"), &candidate = report.at("candidate");
  const std::string flags = shard_flags(shard, plan), n = std::to_string(shard.index + 1);
  std::string gold_dir = gold.value("dir", ""), candidate_dir = candidate.value("dir", ""), cmd;
  if (gold.at("run").contains("shard") || candidate.at("run").contains("shard")) {  // sharded runs: run it again
    gold_dir = "gold-shard-" + n, candidate_dir = "candidate-shard-" + n;
    cmd = shard_run_command(program, gold, flags, gold_dir) + " ; " +
          shard_run_command(program, candidate, flags, candidate_dir) + " ; ";
  }
  PolicyChoice policy;
  const json policies = report.value("policy", json::object());
  for (const auto& [name, value] : policies.items()) policy.set(name, value);
  return cmd + shell_quote(program) + " compare " + shell_quote(gold_dir) + " " + shell_quote(candidate_dir) + flags +
         policy_flags(policy) + (report.value("strict_differences", false) ? " --strict-differences" : "") +
         " --json shard-" + n + ".json";
}

// A scenario no shard report has, as a report entry: compare's `missing` failure, saying which shard to rerun.
json missing_scenario(const std::string& id, const json& group) {
  ScenarioOutcome out;
  out.id = id;
  out.status = "fail";
  out.message = "failed checks: missing";
  out.meta = json::object();
  out.repro = group.at("rerun");
  const std::string shard = group.at("index").dump() + "/" + group.at("total").dump();
  out.checks.push_back({"missing",
                        false,
                        "outputs",
                        "scenario '" + id + "' is in no shard given (shard " + shard + " should have it): " +
                            group.at("reason").get<std::string>() + "; rerun that shard and merge again",
                        {{"shard", group.at("index")}, {"total", group.at("total")}}});
  return scenario_to_json(out);
}

std::vector<ShardPlan> report_plans(const std::vector<json>& reports, const std::vector<std::string>& files) {
  std::vector<ShardPlan> plans;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (!reports[i].contains("shard"))
      throw MergeError(files[i] +
                       ": not the report of one shard (it has no \"shard\"): merge the JSONs that "
                       "'parity compare --shard I/N' wrote");
    try {
      plans.push_back(ShardPlan::from_json(reports[i].at("shard"), files[i]));
    } catch (const ShardError& e) {
      throw MergeError(e.what());
    }
  }
  return plans;
}

// Each side of the merged report: the first shard's, its run merged over the distinct runs the shards compared.
json merged_side(const std::vector<json>& reports, const char* side) {
  json out = reports.front().at(side), dirs = json::array();
  std::vector<json> runs;
  bool complete = true;
  for (const json& report : reports) {
    const json& s = report.at(side);
    complete = complete && s.value("complete", false);
    const json dir = s.value("dir", json());
    if (std::find(dirs.begin(), dirs.end(), dir) != dirs.end()) continue;  // shards of one full run: counted once
    dirs.push_back(dir);
    runs.push_back(s.value("run", json::object()));
  }
  out["run"] = merged_run(runs);
  out["complete"] = complete;
  if (dirs.size() > 1) out["dirs"] = dirs;
  return out;
}

// Each declaration's explained counts, summed over the shards (each scenario was compared in exactly one).
// Summed by id in one pass over the shards: a search of every shard's list for each id was quadratic in a report
// from elsewhere (two shards declaring 5,000 each: 40 s).
json summed_differences(const std::vector<json>& reports) {
  std::map<std::string, std::pair<int, int>> sums;  // id -> checks, scenarios explained
  for (const json& report : reports)
    for (const json& d : report.value("differences", json::array())) {
      auto& [checks, scenarios] = sums[d.value("id", "")];
      checks += d.value("checks_explained", 0), scenarios += d.value("scenarios_explained", 0);
    }
  json out = reports.front().value("differences", json::array());
  for (json& declared : out) {
    const auto& [checks, scenarios] = sums[declared.value("id", "")];
    declared["checks_explained"] = checks;
    declared["scenarios_explained"] = scenarios;
  }
  return out;
}

json summary_of(const json& scenarios) {
  std::vector<std::string> statuses;
  for (const json& s : scenarios) statuses.push_back(s.value("status", ""));
  json summary = count_statuses(statuses);
  summary["total"] = scenarios.size();
  return summary;
}

// The merged report's scenarios in the full set's order, with a missing entry for each id no shard has; `missing`
// gets those ids grouped by shard (missing_shards).
json merged_scenarios(const std::vector<json>& reports, const std::vector<std::string>& files,
                      const std::vector<ShardPlan>& plans, const std::string& program, json& missing) {
  std::vector<std::vector<std::string>> ids(reports.size());
  std::map<std::string, json> entry;
  for (std::size_t i = 0; i < reports.size(); ++i)
    for (const json& s : reports[i].at("scenarios")) {
      ids[i].push_back(s.at("id").get<std::string>());
      entry[ids[i].back()] = s;
    }
  owners(ids, files);
  std::set<std::string> present;
  for (const auto& [id, s] : entry) present.insert(id);
  const ShardPlan& plan = plans.front();
  missing =
      missing_shards(plan, present, given_shards(plans, files), "report", [&](const Shard& shard, const std::string*) {
        return rerun_report_shard(reports.front(), shard, plan, program);
      });
  for (const json& group : missing)
    for (const json& id : group.at("scenarios")) entry[id.get<std::string>()] = missing_scenario(id, group);
  json scenarios = json::array();
  for (const std::string& id : plan.scenarios) {
    scenarios.push_back(std::move(entry.at(id)));
    entry.erase(id);
  }
  for (auto& [id, s] : entry) scenarios.push_back(std::move(s));  // outside the recorded set: kept, never dropped
  return scenarios;
}

json shards_record(const std::vector<ShardPlan>& plans, const std::vector<std::string>& names, const char* key) {
  json shards = json::array();
  for (std::size_t i = 0; i < plans.size(); ++i)
    shards.push_back({{"index", plans[i].shard.index + 1}, {key, names[i]}});
  return shards;
}

std::vector<ShardPlan> run_plans(const std::vector<Manifest>& manifests) {
  std::vector<ShardPlan> plans;
  for (const Manifest& m : manifests) {
    std::optional<ShardPlan> plan;
    try {
      plan = recorded_plan(m);
    } catch (const ShardError& e) {
      throw MergeError(e.what());
    }
    if (!plan)
      throw MergeError(m.dir.string() +
                       " is not a sharded run (its manifest has no run.shard): merge the "
                       "directories that 'parity run --shard I/N' wrote");
    plans.push_back(*plan);
  }
  return plans;
}

// A hard link shares the shard's bytes (nothing copied); across file systems it is a copy. A file the shard lacks
// stays absent: compare reports it missing, naming it. A symbolic link or anything but a regular file is refused
// (MergeError naming it): copying one would turn what it points at into a file of the merged directory.
bool shard_file_there(const fs::path& from_dir, const std::string& file) {
  try {
    return !file.empty() && is_safe_regular_file(from_dir, file);
  } catch (const UnsafeFileError& e) {
    throw MergeError(e.what());
  }
}

// Never over anything already in the merged directory: a copy over an existing name had written through a symbolic
// link planted there, or through a hard link to an input shard's own file (exclusive creation either way).
void link_or_copy(const fs::path& from_dir, const fs::path& to_dir, const std::string& file) {
  if (!shard_file_there(from_dir, file)) return;
  fs::create_directories((to_dir / file).parent_path());
  std::error_code ec;
  fs::create_hard_link(from_dir / file, to_dir / file, ec);
  if (ec == std::errc::file_exists)
    throw MergeError((to_dir / file).string() + " already exists: merge into a new directory");
  if (ec) fs::copy_file(from_dir / file, to_dir / file, fs::copy_options::none);
}

std::vector<Manifest> read_shard_manifests(const std::vector<fs::path>& dirs, const fs::path& out) {
  if (dirs.empty()) throw MergeError("nothing to merge: give the results directories of the shards");
  if (fs::exists(out / kManifestName))
    throw MergeError(out.string() + " already holds a results directory: merge into a new directory");
  std::vector<Manifest> manifests;
  try {
    for (const fs::path& dir : dirs) manifests.push_back(read_manifest(dir));
  } catch (const ManifestError& e) {
    throw MergeError(e.what());
  }
  return manifests;
}

// The shards of one run, read and checked.
struct ShardRuns {
  std::vector<Manifest> manifests;
  std::vector<std::string> dirs;
  std::vector<ShardPlan> plans;
  std::map<std::string, std::pair<std::size_t, std::size_t>> records;  ///< id: (shard input, record index)
};

// Reads the shards' manifests and refuses them unless they are shards of one run, each once, none sharing a scenario.
ShardRuns read_shard_runs(const std::vector<fs::path>& dirs, const fs::path& out) {
  ShardRuns shards;
  shards.manifests = read_shard_manifests(dirs, out);
  std::vector<json> docs;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> ids(shards.manifests.size());
  for (std::size_t i = 0; i < shards.manifests.size(); ++i) {
    const Manifest& m = shards.manifests[i];
    docs.push_back(to_json(m));
    names.push_back((m.dir / kManifestName).string());
    shards.dirs.push_back(m.dir.string());
    for (std::size_t k = 0; k < m.scenarios.size(); ++k) {
      ids[i].push_back(m.scenarios[k].id);
      shards.records[m.scenarios[k].id] = {i, k};
    }
  }
  shards.plans = run_plans(shards.manifests);
  check_agreement(docs, names, kRunAgreements, "run");
  check_distinct_shards(shards.plans, shards.dirs);
  owners(ids, shards.dirs);
  return shards;
}

// Every file of the shards' records checked before any is linked (no half-merged directory), and no file named by two
// records: the second link had gone over the first's name in the merged directory.
void check_shard_files(const ShardRuns& shards) {
  std::map<std::string, std::string> named;  // file: the id whose record names it
  for (const auto& [id, at] : shards.records)
    for (const ScenarioRecord& r = shards.manifests[at.first].scenarios[at.second];
         const std::string& file : {r.file, r.pickle_file}) {
      if (!shard_file_there(shards.manifests[at.first].dir, file)) continue;
      const auto [was, fresh] = named.emplace(file, id);
      if (!fresh)
        throw MergeError("the records of '" + was->second + "' and '" + id + "' both name the result file " + file +
                         ": a results directory parity did not write");
    }
}

// The shards' records into `m`, in the unsharded run's order, their files linked into `out`; a record the shards'
// plan does not list (a manifest edited, or written otherwise) comes after them, kept rather than dropped.
void link_scenarios(const ShardRuns& shards, const fs::path& out, Manifest& m) {
  check_shard_files(shards);
  fs::create_directories(out / kResultsSubdir);
  const std::vector<std::string>& planned = shards.plans.front().scenarios;
  const std::set<std::string> in_plan(planned.begin(), planned.end());
  std::vector<std::string> order = planned;
  for (const auto& [id, at] : shards.records)
    if (!in_plan.count(id)) order.push_back(id);
  for (const std::string& id : order) {
    const auto found = shards.records.find(id);
    if (found == shards.records.end()) continue;
    const auto [i, k] = found->second;
    const ScenarioRecord& r = shards.manifests[i].scenarios[k];
    for (const std::string& file : {r.file, r.pickle_file}) link_or_copy(shards.manifests[i].dir, out, file);
    m.scenarios.push_back(r);
  }
}

}  // namespace

json merge_reports(const std::vector<json>& reports, const std::vector<std::string>& files,
                   const std::string& program) {
  if (reports.empty()) throw MergeError("nothing to merge: give the compare JSONs of the shards");
  const std::vector<ShardPlan> plans = report_plans(reports, files);
  check_agreement(reports, files, kReportAgreements, "compare");
  check_distinct_shards(plans, files);
  json missing = json::array();
  const json scenarios = merged_scenarios(reports, files, plans, program, missing);
  std::string started;
  double seconds = 0;
  for (const json& report : reports) {
    started = earliest(started, report.value("started", ""));
    seconds += report.value("seconds", 0.0);
  }
  const json& first = reports.front();
  json merged = {
      {"format", "parity-compare"},
      {"version", kReportJsonVersion},
      {"parity", first.value("parity", "")},
      {"started", started},
      {"seconds", seconds},
      {"gold", merged_side(reports, "gold")},
      {"candidate", merged_side(reports, "candidate")},
      {"policy", first.value("policy", json::object())},
      {"summary", summary_of(scenarios)},
      {"differences", summed_differences(reports)},
      {"strict_differences", first.value("strict_differences", false)},
      {"scenarios", scenarios},
      {"merged",
       {{"total", plans.front().shard.total}, {"shards", shards_record(plans, files, "file")}, {"missing", missing}}}};
  json notices = skipped_notices(scenarios);            // as compare's, then each shard's own notices once
  std::set<json> seen(notices.begin(), notices.end());  // not a search of the list per notice: quadratic
  for (const json& report : reports)
    for (const json& n : report.value("notices", json::array()))
      if (n.is_object() && !n.contains("check") && seen.insert(n).second) notices.push_back(n);
  if (!notices.empty()) merged["notices"] = notices;
  return merged;
}

bool merged_report_failed(const json& report) {
  std::vector<std::string> statuses;
  for (const json& s : report.value("scenarios", json::array())) statuses.push_back(s.value("status", ""));
  bool stale = false;
  for (const json& d : report.value("differences", json::array())) stale = stale || d.value("checks_explained", 0) == 0;
  return failing_counts(count_statuses(statuses)) || (report.value("strict_differences", false) && stale);
}

// The libraries the shards imported (environment.libraries), each with its version. Shards that disagree (an install
// between their runs) are shown, not refused: the version reads "2.2.3 | 2.1.0", in shard order. Null when no shard
// recorded libraries (runs of a parity before them).
json merged_libraries(const std::vector<Manifest>& manifests) {
  std::map<std::string, std::vector<std::string>> versions;
  bool recorded = false;
  for (const Manifest& shard : manifests) {
    const auto found = shard.environment.find("libraries");
    if (found == shard.environment.end() || !found->is_object()) continue;
    recorded = true;
    for (const auto& [name, version] : found->items()) {
      const std::string text = version.is_string() ? version.get<std::string>() : version.dump();
      std::vector<std::string>& seen = versions[name];
      if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(text);
    }
  }
  if (!recorded) return json();
  json out = json::object();
  for (const auto& [name, seen] : versions) {
    std::string text;
    for (const std::string& v : seen) text += (text.empty() ? "" : " | ") + v;
    out[name] = text;
  }
  return out;
}

MergedRun merge_results(const std::vector<fs::path>& dirs, const fs::path& out, const std::string& program) {
  const ShardRuns shards = read_shard_runs(dirs, out);
  const ShardPlan& plan = shards.plans.front();
  MergedRun merged;
  Manifest& m = merged.manifest;
  m.dir = out;
  m.backend = shards.manifests.front().backend;
  m.environment = shards.manifests.front().environment;
  if (json libraries = merged_libraries(shards.manifests); !libraries.is_null() && m.environment.is_object())
    m.environment["libraries"] = std::move(libraries);
  std::vector<json> runs;
  for (const Manifest& shard : shards.manifests) runs.push_back(shard.run);
  m.run = merged_run(runs);
  std::set<std::string> present;
  for (const auto& [id, at] : shards.records) present.insert(id);
  // Shard K again: into the directory given for it, resumed (it stopped early), or into a new one.
  merged.missing = missing_shards(plan, present, given_shards(shards.plans, shards.dirs), "results directory",
                                  [&](const Shard& shard, const std::string* given) {
                                    const std::string dir = given ? *given : "shard-" + std::to_string(shard.index + 1);
                                    return shard_run_command(program, to_json(shards.manifests.front()),
                                                             shard_flags(shard, plan), dir) +
                                           (given ? " --resume" : "");
                                  });
  link_scenarios(shards, out, m);
  m.complete = merged.missing.empty() && std::all_of(shards.manifests.begin(), shards.manifests.end(),
                                                     [](const Manifest& shard) { return shard.complete; });
  m.run["merged"] = {{"total", plan.shard.total},
                     {"shards", shards_record(shards.plans, shards.dirs, "dir")},
                     {"missing", merged.missing}};
  write_manifest(m);
  return merged;
}

int merge_results_command(const std::vector<std::string>& dirs, const std::string& out, const std::string& program) {
  MergedRun merged;
  try {
    merged = merge_results(std::vector<fs::path>(dirs.begin(), dirs.end()), out, program);
  } catch (const MergeError& e) {
    print_line("merge", e.what());
    return kExitUsage;
  } catch (const fs::filesystem_error& e) {
    std::fprintf(stderr, "parity merge: cannot write %s: %s\n", printable(out).c_str(),
                 printable(e.what(), Newlines::kKeep).c_str());
    return kExitUsage;
  }
  print_missing(merged.missing);
  const std::size_t missing = missing_count(merged.missing);
  std::fprintf(stderr, "parity merge: %zu shards into %s: %zu scenarios, %zu missing\n", dirs.size(),
               printable(out).c_str(), merged.manifest.scenarios.size() + missing, missing);
  return missing == 0 && !run_failed(merged.manifest.scenarios) ? kExitOk : kExitFailed;
}

// What is wrong with a shard's declared differences (summed_differences reads every shard's), "" when nothing.
static std::string declarations_problem(const json& report) {
  if (!report.contains("differences")) return "";
  const json& declared = report.at("differences");
  if (!declared.is_array()) return "'differences' is no list";
  const auto whole = [](const json& d, const char* key) { return d.value(key, json(0)).is_number_integer(); };
  for (const json& d : declared)
    if (!d.is_object() || !d.value("id", json("")).is_string() || !whole(d, "checks_explained") ||
        !whole(d, "scenarios_explained"))
      return "an entry of 'differences' without a string 'id' and whole-number counts explained";
  return "";
}

// What merge_reports reads of each report beyond what read_report_json checks (the scenarios' ids and statuses),
// checked first so that a damaged one is named (nlohmann's own message names no file).
static void check_shard_report(const json& report, const std::string& file) {
  const auto problem = [&]() -> std::string {
    for (const char* side : {"gold", "candidate"})
      if (!report.contains(side) || !report.at(side).is_object()) return std::string("no '") + side + "' object";
    return declarations_problem(report);
  }();
  if (!problem.empty()) throw MergeError(file + ": not a complete compare JSON: " + problem);
}

int merge_reports_command(const std::vector<std::string>& files, const std::string& program,
                          const std::function<void(const json&)>& write) {
  json merged;
  try {
    std::vector<json> reports;
    for (const std::string& file : files) {
      reports.push_back(read_report_json(file));
      check_shard_report(reports.back(), file);
    }
    merged = merge_reports(reports, files, program);
    write(merged);
  } catch (const std::exception& e) {  // refused or unreadable input (named in the message), an unwritable report
    print_line("merge", e.what());
    return kExitUsage;
  }
  print_missing(merged.at("/merged/missing"_json_pointer));
  std::string counts;
  for (const auto& [status, n] : merged.at("summary").items())
    if (status != "total" && n.get<int>() > 0)
      counts += (counts.empty() ? "" : ", ") + std::to_string(n.get<int>()) + " " + printable(status);
  std::fprintf(stderr, "parity merge: %zu shard reports: %zu scenarios: %s (%zu missing)\n", files.size(),
               merged.at("scenarios").size(), counts.c_str(), missing_count(merged.at("/merged/missing"_json_pointer)));
  return merged_report_failed(merged) ? kExitFailed : kExitOk;
}

}  // namespace parity
