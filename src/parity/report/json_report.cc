// Builds the versioned compare JSON (see docs/report-json.md).
#include "json_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>

#include "config.h"
#include "json_input.h"
#include "outcome.h"
#include "safe_file.h"

using json = nlohmann::json;

namespace parity {
namespace {

json side_json(const Manifest& m) {
  return {{"dir", m.dir.string()},
          {"backend", m.backend},
          {"environment", m.environment},
          {"run", m.run},
          {"complete", m.complete}};
}

// Built in place rather than from an initializer list, which makes each pair a two-element array first and the
// object from those: this is called for every check of every scenario. The keys are sorted either way.
json check_json(const Check& c) {
  json out = json::object();
  json::object_t& fields = *out.get_ptr<json::object_t*>();
  fields.emplace("check", c.check);
  fields.emplace("ok", c.ok);
  fields.emplace("path", c.path);
  fields.emplace("message", c.message);
  fields.emplace("details", c.details);
  return out;
}

// What each scenario of a run printed (parity.capture), by id: only its text fields, for a manifest is data.
std::map<std::string, json> printed_by_id(const Manifest* run) {
  std::map<std::string, json> out;
  if (!run) return out;
  for (const ScenarioRecord& r : run->scenarios) {
    if (!r.output.is_object()) continue;
    json kept = json::object();
    for (const char* stream : {"stdout", "stderr"})
      if (r.output.contains(stream) && r.output[stream].is_string()) kept[stream] = r.output[stream];
    if (kept.empty()) continue;
    if (r.output.contains("truncated") && r.output["truncated"] == true) kept["truncated"] = true;
    out[r.id] = std::move(kept);
  }
  return out;
}

// Each scenario's "output": {gold: ..., candidate: ...}, the sides that printed something (JUnit's system-out/err).
void add_printed(json& scenarios, const CompareReport& report) {
  const std::map<std::string, json> sides[] = {printed_by_id(report.gold), printed_by_id(report.candidate)};
  for (json& s : scenarios) {
    json printed = json::object();
    for (int i = 0; i < 2; ++i)
      if (const auto it = sides[i].find(s.value("id", "")); it != sides[i].end())
        printed[i == 0 ? "gold" : "candidate"] = it->second;
    if (!printed.empty()) s["output"] = std::move(printed);
  }
}

// The line of the scenario's definition, 0 when unknown (a module that failed to import, an older manifest).
int definition_line(const json& meta) {
  return meta.is_object() && meta.contains("line") && meta["line"].is_number_integer() ? meta["line"].get<int>() : 0;
}

}  // namespace

json skipped_notices(const json& scenarios) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // kind, check, side, reason
  std::map<Key, int> groups;                                                   // -> how many scenarios
  for (const json& s : scenarios) {
    const json skipped = s.is_object() ? s.value("skipped_checks", json::array()) : json::array();
    std::set<Key> mine;
    for (const json& k : skipped.is_array() ? skipped : json::array()) {
      if (!k.is_object()) continue;
      auto text = [&k](const char* key) {
        return k.contains(key) && k[key].is_string() ? k[key].get<std::string>() : std::string();
      };
      mine.insert({text("kind"), text("check"), text("side"), text("reason")});
    }
    for (const Key& key : mine) ++groups[key];
  }
  json out = json::array();
  for (const auto& [key, n] : groups) {
    const auto& [kind, check, side, reason] = key;
    out.push_back({{"kind", kind},
                   {"check", check},
                   {"side", side},
                   {"scenarios", n},
                   {"message", check + " check skipped (" + side + ") in " + std::to_string(n) + " scenario" +
                                   (n == 1 ? "" : "s") + ": " + reason}});
  }
  return out;
}

json scenario_to_json(const ScenarioOutcome& s) {
  json checks = json::array();
  for (const Check& c : s.checks) checks.push_back(check_json(c));
  json doc = json::object();  // built in place, as check_json is
  json::object_t& fields = *doc.get_ptr<json::object_t*>();
  fields.emplace("id", s.id);
  fields.emplace("module", s.meta.value("module", ""));
  fields.emplace("function", s.meta.value("function", ""));
  fields.emplace("params", s.meta.value("params", json::object()));
  fields.emplace("tags", s.meta.value("tags", json::array()));
  fields.emplace("status", s.status);
  fields.emplace("message", s.message);
  fields.emplace("checks", std::move(checks));
  json seconds = json::object();
  json::object_t& sides = *seconds.get_ptr<json::object_t*>();
  sides.emplace("gold", s.gold_seconds);
  sides.emplace("candidate", s.candidate_seconds);
  sides.emplace("compare", s.compare_seconds);
  fields.emplace("seconds", std::move(seconds));
  fields.emplace("policy", s.policy);
  fields.emplace("source", s.meta.value("source", ""));
  fields.emplace("line", definition_line(s.meta));
  fields.emplace("repro", s.repro);
  // Present only when the outputs were compared: how many leaves there are and how many each check covered.
  if (s.coverage) doc["coverage"] = s.coverage->to_json();
  // Present only when a check was skipped: for trust (README, "Safety: what parity trusts"), or without a verdict.
  for (const SkippedCheck& k : s.skipped)
    doc["skipped_checks"].push_back({{"check", k.check}, {"side", k.side}, {"kind", k.kind}, {"reason", k.reason}});
  return doc;
}

json report_to_json(const CompareReport& report) { return report_to_json(report, json::array()); }

json report_to_json(const CompareReport& report, json rendered) {
  if (!rendered.is_array() || rendered.size() > report.scenarios.size())
    throw std::logic_error("report_to_json: more scenarios rendered than the report holds");
  json scenarios = std::move(rendered);
  for (std::size_t i = scenarios.size(); i < report.scenarios.size(); ++i)
    scenarios.push_back(scenario_to_json(report.scenarios[i]));
  add_printed(scenarios, report);
  json counts = report.counts();
  counts["total"] = report.scenarios.size();
  json doc = {{"format", "parity-compare"},
              {"version", kReportJsonVersion},
              {"parity", PARITY_VERSION},
              {"started", report.started},
              {"seconds", report.seconds},
              {"gold", side_json(*report.gold)},
              {"candidate", side_json(*report.candidate)},
              {"policy", report.policy.to_json()},
              {"summary", counts},
              {"differences", differences_json(report.differences, report.scenarios)},
              {"strict_differences", report.strict_differences},
              {"scenarios", std::move(scenarios)}};
  if (report.shard) doc["shard"] = report.shard->to_json();  // absent from an unsharded compare's report
  json notices = skipped_notices(doc.at("scenarios"));       // checks skipped, then the compare's own notices
  for (const Notice& n : report.notices) notices.push_back({{"kind", n.kind}, {"message", n.message}});
  if (!notices.empty()) doc["notices"] = notices;
  return doc;
}

namespace {

// What makes a report's scenarios unreadable, "" when nothing: every reader (the HTML report, JUnit, merge, trends)
// counts a status it does not know as not failing, so a scenario whose status is not one compare writes (a report
// edited, or from another program) is refused here rather than passed.
std::string scenarios_problem(const json& doc) {
  const json* scenarios = find_at(doc, "/scenarios");
  if (scenarios == nullptr || !scenarios->is_array()) return "has no \"scenarios\" array";
  for (std::size_t i = 0; i < scenarios->size(); ++i) {
    const json& scenario = (*scenarios)[i];
    const json* id = scenario.is_object() ? find_at(scenario, "/id") : nullptr;
    if (id == nullptr || !id->is_string()) return "scenarios[" + std::to_string(i) + "] has no string \"id\"";
    const json* status = find_at(scenario, "/status");
    if (status == nullptr || !status->is_string() || !listed(kStatuses, status->get_ref<const std::string&>())) {
      std::string known;
      for (std::string_view word : kStatuses) known += (known.empty() ? "" : ", ") + std::string(word);
      return "scenario '" + id->get<std::string>() + "' has the status " +
             (status == nullptr ? std::string("(none)") : status->dump()) + ", not one compare writes (" + known + ")";
    }
  }
  return "";
}

}  // namespace

json read_report_json(const std::filesystem::path& file) {
  auto fail = [&](const std::string& why) { return ReportJsonError(file.string() + ": " + why); };
  std::string text;
  try {
    text = read_named_text_file(file);
  } catch (const std::system_error& e) {
    throw fail("cannot be read (" + e.code().message() + "): give the JSON that 'parity compare --json' wrote");
  } catch (const UnsafeFileError& e) {
    throw ReportJsonError(e.what());
  }
  json doc;
  try {
    doc = parse_json(text, file.string());
  } catch (const JsonInputError& e) {
    throw ReportJsonError(e.what());
  }
  if (!doc.is_object() || doc.value("format", "") != "parity-compare")
    throw fail("not a parity compare report (its \"format\" is not \"parity-compare\")");
  const json& version = doc.value("version", json());
  if (!version.is_number_integer()) throw fail("has no integer \"version\"");
  // Compared as written: a version read into an int had 4294967297 read as 1. A negative one counts as 0.
  const std::uint64_t number = version.is_number_unsigned()
                                   ? version.get<std::uint64_t>()
                                   : static_cast<std::uint64_t>(std::max<std::int64_t>(version.get<std::int64_t>(), 0));
  if (number < 1) throw fail("has the \"version\" " + version.dump() + ": a compare report's is 1 or more");
  if (number > kReportJsonVersion)
    throw fail("written by a newer parity (report version " + version.dump() + ", this parity reads up to " +
               std::to_string(kReportJsonVersion) + "); render it with that parity");
  if (const std::string problem = scenarios_problem(doc); !problem.empty()) throw fail(problem);
  return doc;
}

}  // namespace parity
