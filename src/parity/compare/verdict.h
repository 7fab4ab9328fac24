// One scenario's verdict from both runs' records: what compare_runs calls per scenario.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compare.h"
#include "differences.h"
#include "manifest.h"

namespace parity {

// Each run's records by id, built once: a search per scenario made compare quadratic in the number of scenarios.
class RecordIndex {
 public:
  explicit RecordIndex(const Manifest& m) {
    by_id_.reserve(m.scenarios.size());
    for (const auto& s : m.scenarios) by_id_.emplace(s.id, &s);  // the first of a repeated id, as a search found
  }
  const ScenarioRecord* find(const std::string& id) const {
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string_view, const ScenarioRecord*> by_id_;
};

/// Compares scenario `id` (`g`, `c`: its records, nullptr where a run lacks it) and decides its status: malformed
/// records, a missing side, a side's own error, skip or xfail first; else the outputs, the probes, the compare
/// xfail and the candidate's declared differences. Its repro command is always set.
ScenarioOutcome compare_scenario(const Manifest& gold, const Manifest& candidate, const ScenarioRecord* g,
                                 const ScenarioRecord* c, const std::string& id, const CompareOptions& options,
                                 const std::vector<Difference>& differences);

/// Records the checks of compared outputs into `out`, as compare does for a scenario whose outputs it compared:
/// status pass when no check failed, else fail; the failures first, then one entry per check that passed with the
/// leaves it covered (details {"leaves": n}); the checks skipped (SkippedCheck); the coverage. parity._core's
/// compare_outputs records its verdict the same way.
void record_checks(CheckList list, ScenarioOutcome& out);

/// "failed checks: dtype, values" for the checks that failed in `out`; "" when none did.
std::string summary_message(const ScenarioOutcome& out);

}  // namespace parity
