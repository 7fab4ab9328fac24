// Prints outcome.h's vocabulary as JSON, for test_vocabulary.py to hold the Python and HTML copies against.
#include <iostream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "outcome.h"

namespace {

nlohmann::json words(std::span<const std::string_view> list) {
  std::vector<std::string> out(list.begin(), list.end());
  return out;
}

}  // namespace

int main() {
  nlohmann::json policies = nlohmann::json::array();
  for (const parity::PolicyVocabulary& policy : parity::kPolicies)
    policies.push_back({{"name", policy.name}, {"values", words(policy.values)}, {"help", policy.help}});
  const nlohmann::json vocabulary = {{"checks", words(parity::kChecks)},
                                     {"declarable_checks", words(parity::kDeclarableChecks)},
                                     {"statuses", words(parity::kStatuses)},
                                     {"statuses_worst_first", words(parity::kStatusesWorstFirst)},
                                     {"failing_statuses", words(parity::kFailingStatuses)},
                                     {"run_statuses", words(parity::kRunStatuses)},
                                     {"failing_run_statuses", words(parity::kFailingRunStatuses)},
                                     {"policies", policies},
                                     {"exit_codes", {{"ok", parity::kExitOk}, {"failed", parity::kExitFailed}}}};
  std::cout << vocabulary.dump(2) << "\n";
  return 0;
}
