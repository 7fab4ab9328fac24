// Differences a candidate backend declares (its DIFFERENCES): the failed checks they explain, and how often.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "manifest.h"
#include "outcome.h"

namespace parity {

/// A malformed `differences` entry in a manifest's backend record; the message names the entry and the field.
struct DifferenceError : ManifestError {
  using ManifestError::ManifestError;
};

/// One declared difference: a check the candidate library genuinely fails at some places, with the reason.
/// `match` maps dotted keys of the failed check's JSON ({check, path, message, details}) to patterns: a string
/// is a glob (fnmatch, whole value; under the key `path`, '[' is itself, so outputs['x'][*] needs no escaping), a list
/// any of its patterns, anything else an equal JSON value.
struct Difference {
  std::string id, check, reason;
  nlohmann::json match = nlohmann::json::object();
  std::vector<std::string> scenarios;  ///< scenario ids or globs on them; empty: every scenario
};

/// The checks a backend may declare: all but `missing` and `fidelity`, which are parity's own failures.
bool declarable_check(const std::string& check);

/// Parses a manifest's `backend.differences` (absent: none); throws DifferenceError naming `source` and the entry.
std::vector<Difference> parse_differences(const nlohmann::json& backend, const std::string& source);

/// What changed between the declarations a run recorded and the backend's current ones, by id: "added a, b; removed c;
/// changed d" ("" when none: the same ids, each with the same check, reason, match and scenarios).
std::string difference_changes(const std::vector<Difference>& recorded, const std::vector<Difference>& current);

/// Whether `difference` explains failed check `check` of scenario `scenario_id`. A run error is explained only
/// on the candidate's side: gold raising is never the candidate library's difference.
bool explains(const Difference& difference, const std::string& scenario_id, const Check& check);

/// Marks every failed check of a failing or erroring scenario that a declaration explains (details.difference
/// and details.xfail). When all its failed checks are explained the scenario becomes xfail, naming them.
void apply_differences(const std::vector<Difference>& differences, ScenarioOutcome& outcome);

/// How much of a run each declaration explained: {id: {checks, scenarios}}. A declaration at zero is stale.
struct DifferenceUse {
  int checks = 0, scenarios = 0;
};
std::map<std::string, DifferenceUse> difference_use(const std::vector<Difference>& differences,
                                                    const std::vector<ScenarioOutcome>& outcomes);

/// The declarations with their use, as the JSON report records them.
nlohmann::json differences_json(const std::vector<Difference>& differences,
                                const std::vector<ScenarioOutcome>& outcomes);

}  // namespace parity
