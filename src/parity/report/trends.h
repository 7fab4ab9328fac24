// Trends across compares: each scenario of a compare JSON marked new, still failing, fixed or gone against earlier
// ones.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "json_report.h"

namespace parity {

/// An earlier compare JSON (`parity compare --baseline FILE`) and the path it was read from.
struct Baseline {
  std::string file;
  nlohmann::json report;
};

/// Whether a baseline's scenario status counts as failing for trends: a failing status (outcome.h), or missing
/// should a report carry that as a status.
bool is_failing_trend_status(const std::string& status);

/// Reads each file as a compare JSON that can be a baseline of a compare of candidate backend `candidate` that
/// started at `started` (UTC, as `utc_timestamp()` writes it; "" skips that check): a readable compare report with a
/// `started` time no later than `started`, scenarios with string ids and statuses, and the same candidate backend
/// name (its version may differ). Throws ReportJsonError naming the first file that cannot serve and why.
std::vector<Baseline> read_baselines(const std::vector<std::string>& files, const std::string& candidate,
                                     const std::string& started);

/// Adds the trend fields (docs/report-json.md, "Trends") to the compare JSON `report`: a `trend` per scenario,
/// `baselines`, `trend_summary` and `gone`, replacing any it had. Baselines are ordered by their `started` time,
/// oldest first (equal times keep the order given). Without baselines the report is left as it is.
void add_trends(nlohmann::json& report, std::vector<Baseline> baselines);

/// A scenario's `trend` in words: "new failure", "still failing since <started>", "fixed", "gone (failing since
/// <started>)"; "" when it has no mark.
std::string trend_label(const nlohmann::json& trend);

/// The trends for the terminal: "1 new failure, 2 still failing, 1 fixed, 0 gone (against 3 baselines, ...)" and,
/// unless `counts_only`, one line per marked scenario, the new failures first. "" when the report has no trends.
std::string trend_summary_text(const nlohmann::json& report, bool counts_only);

}  // namespace parity
