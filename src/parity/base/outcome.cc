// Counting statuses (outcome.h): the summary every report writes and whether its counts fail the compare.
#include "outcome.h"

namespace parity {

std::map<std::string, int> count_statuses(const std::vector<std::string>& statuses) {
  std::map<std::string, int> n;
  for (const std::string_view status : kStatuses)
    if (status != "timeout") n[std::string(status)] = 0;  // timeout is counted only when a scenario timed out
  for (const std::string& status : statuses) ++n[status];
  return n;
}

bool failing_counts(const std::map<std::string, int>& counts) {
  for (const std::string_view status : kFailingStatuses)
    if (const auto n = counts.find(std::string(status)); n != counts.end() && n->second > 0) return true;
  return false;
}

}  // namespace parity
