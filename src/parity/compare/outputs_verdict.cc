// Turns a CheckList into a scenario's status, checks and message, as compare_files and compare_scenario do.
#include "outputs_verdict.h"

#include <set>

namespace parity {

void record_checks(CheckList list, ScenarioOutcome& out) {
  out.status = list.failures.empty() ? "pass" : "fail";
  out.coverage = list.coverage;
  std::set<std::string> failed;
  for (const Check& c : list.failures) failed.insert(c.check);
  out.checks = std::move(list.failures);
  out.skipped = std::move(list.skipped);
  for (const auto& [check, n] : list.passed) out.checks.push_back({check, true, "outputs", "", {{"leaves", n}}});
  if (!out.message.empty() || failed.empty()) return;
  out.message = "failed checks: ";
  for (const std::string& name : failed) out.message += (&name == &*failed.begin() ? "" : ", ") + name;
}

}  // namespace parity
