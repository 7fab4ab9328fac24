// compare_runs: every scenario of two results directories, their verdicts, and the report's counts.
#include "compare.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <set>
#include <utility>

#include "compare_internal.h"
#include "deadline.h"
#include "fan_out.h"
#include "outcome_wire.h"
#include "probes.h"
#include "verdict.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {

std::string coverage_note(const json& coverage) {
  if (!coverage.is_object() || !coverage.contains("leaves") || !coverage["leaves"].is_number_integer()) return "";
  const auto leaves = coverage["leaves"].get<std::int64_t>();
  const json checks = coverage.value("checks", json::object());
  const json values = checks.is_object() ? checks.value("values", json(0)) : json(0);
  const std::int64_t covered = values.is_number_integer() ? values.get<std::int64_t>() : 0;
  if (covered >= leaves) return "";
  return "values covered " + std::to_string(covered) + " of " + std::to_string(leaves) + " leaves";
}

std::map<std::string, int> CompareReport::counts() const {
  std::vector<std::string> statuses;
  for (const auto& s : scenarios) statuses.push_back(s.status);
  return count_statuses(statuses);
}

std::vector<std::string> CompareReport::stale_differences() const {
  std::vector<std::string> stale;
  for (const auto& [id, use] : difference_use(differences, scenarios))
    if (use.checks == 0) stale.push_back(id);
  return stale;
}

bool CompareReport::failed() const {
  return failing_counts(counts()) || (strict_differences && !stale_differences().empty());
}

std::vector<std::string> compared_ids(const Manifest& gold, const Manifest& candidate,
                                      const std::vector<std::string>& only) {
  const std::set<std::string> wanted(only.begin(), only.end());
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const Manifest* m : {&gold, &candidate})
    for (const auto& s : m->scenarios)
      if (seen.insert(s.id).second && (wanted.empty() || wanted.count(s.id))) ids.push_back(s.id);
  return ids;
}

std::vector<std::string> ids_to_compare(const Manifest& gold, const Manifest& candidate,
                                        const CompareOptions& options) {
  std::vector<std::string> ids = compared_ids(gold, candidate, options.only);
  if (!options.shard) return ids;
  const std::vector<std::string> mine = options.shard->ids();
  const std::set<std::string> in_shard(mine.begin(), mine.end());
  std::erase_if(ids, [&](const std::string& id) { return !in_shard.count(id); });
  return ids;
}

// The candidate backend's DIFFERENCES as its code declares them now, when compare loaded it (built-in or trusted):
// they replace those its manifest recorded, and a change since the run is a notice naming the ids added, removed
// or changed. Where it was not loaded (untrusted, or its import failed), the recorded ones are used, and a notice
// says they are as of the run and why: a built-in backend whose file no longer imports had been reported as "not
// built-in, not trusted", its error unsaid, while its edited DIFFERENCES went unused.
void use_current_differences(const Manifest& candidate, const CompareOptions& trusting, CompareReport& report) {
  const std::string manifest = (candidate.dir / kManifestName).string();
  const auto untrusted = trusting.untrusted.find("candidate");
  py::object now = untrusted != trusting.untrusted.end()
                       ? py::object(py::none())
                       : py::module_::import("parity.trust").attr("current_differences")("candidate");
  if (now.is_none()) {
    if (!report.differences.empty())
      report.notices.push_back(
          {"recorded-differences",
           "the candidate backend's declared differences are those recorded in " + manifest +
               " as of its run, so a change to its DIFFERENCES since then is not seen: " +
               (untrusted != trusting.untrusted.end() ? untrusted->second : "compare did not load the backend")});
    return;
  }
  const json declared = {{"differences", from_py(now)}};
  std::vector<Difference> current =
      parse_differences(declared, "the candidate backend " + candidate.backend.value("spec", "?") + "'s DIFFERENCES");
  const std::string changes = difference_changes(report.differences, current);
  report.differences = std::move(current);
  if (!changes.empty())
    report.notices.push_back({"changed-differences", "the candidate backend's DIFFERENCES changed since its run (" +
                                                         manifest + "): " + changes +
                                                         "; compare uses its current declarations"});
}

namespace {

// The scenario whose compare process died comparing it (a crash in a reducer or an extension): its error, and the
// others are compared on.
ScenarioOutcome lost_outcome(const Manifest& gold, const Manifest& candidate, const ScenarioRecord* g,
                             const ScenarioRecord* c, const std::string& id, const CompareOptions& options,
                             const std::string& how) {
  ScenarioOutcome o;
  o.id = id;
  o.meta = g ? g->meta : c ? c->meta : json::object();
  o.gold_seconds = g ? g->seconds : 0;
  o.candidate_seconds = c ? c->seconds : 0;
  o.repro = repro_command(options, gold, candidate, id, o.meta);
  o.status = "error";
  o.message = "its compare process died comparing it (" + how + ")";
  o.checks.push_back({"error", false, "outputs", o.message});
  return o;
}

std::string wire(const ScenarioOutcome& o) {
  std::string bytes;
  append_outcome_wire(o, bytes);
  return bytes;
}

}  // namespace

CompareReport compare_runs(const Manifest& gold, const Manifest& candidate, const CompareOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompareReport report;
  report.differences = parse_differences(candidate.backend, (candidate.dir / kManifestName).string());
  report.strict_differences = options.strict_differences;
  CompareOptions trusting = options;  // the same options, with what compare_runs learns about the backends' trust
  for (const auto& [side, m] : {std::pair{"gold", &gold}, std::pair{"candidate", &candidate}}) {
    const std::string why = load_reducers(*m, side, options.trusted_backends);
    if (!why.empty()) trusting.untrusted[side] = why;
  }
  use_current_differences(candidate, trusting, report);
  report.gold = &gold;
  report.candidate = &candidate;
  report.policy = options.policy;
  report.shard = options.shard;
  const std::vector<std::string> ids = ids_to_compare(gold, candidate, options);
  const RecordIndex gold_index(gold), candidate_index(candidate);
  const auto one = [&](std::size_t i) {
    check_interrupted();  // a stop signal ends the compare here, in this process or a --jobs child
    ScenarioOutcome outcome = compare_scenario(gold, candidate, gold_index.find(ids[i]), candidate_index.find(ids[i]),
                                               ids[i], trusting, report.differences);
    check_interrupted();  // ... and a scenario it cut short (a walk ended by KeyboardInterrupt) is no outcome
    return outcome;
  };
  const auto keep = [&](std::size_t i, ScenarioOutcome outcome) {
    if (options.on_start && options.jobs > 1) options.on_start(ids[i], i, ids.size());  // the live line: in order
    report.scenarios.push_back(std::move(outcome));
    if (options.on_outcome) options.on_outcome(report.scenarios.back());
  };
  if (options.jobs <= 1 || ids.size() <= 1) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (options.on_start) options.on_start(ids[i], i, ids.size());
      keep(i, one(i));
    }
  } else {
    probe_module();  // imported once here rather than by every compare process at its first scenario
    fan_out(ids.size(), options.jobs,
            {[&](std::size_t i) { return wire(one(i)); },
             [&](std::size_t i, const std::string& how) {
               return wire(lost_outcome(gold, candidate, gold_index.find(ids[i]), candidate_index.find(ids[i]), ids[i],
                                        trusting, how));
             },
             [&](std::size_t i, const std::string& bytes) { keep(i, outcome_from_wire(bytes)); }});
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void warm_compare(const json& gold_backend, const json& candidate_backend, const CompareOptions& options) {
  load_reducers(gold_backend, "gold", options.trusted_backends);  // why one would not load is compare_runs' to say
  load_reducers(candidate_backend, "candidate", options.trusted_backends);
  probe_module();
}

}  // namespace parity
