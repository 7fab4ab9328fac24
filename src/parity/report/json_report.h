// The compare report as JSON (schema in docs/report-json.md): every field the other reports show.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "compare.h"

namespace parity {

inline constexpr int kReportJsonVersion = 1;

nlohmann::json report_to_json(const CompareReport& report);
/// The same, with `rendered` holding scenario_to_json of report.scenarios' first entries, made as they were decided
/// (CompareReportWriter: while the other scenarios were compared); the rest are rendered here.
nlohmann::json report_to_json(const CompareReport& report, nlohmann::json rendered);
/// One scenario's entry of the report's `scenarios`.
nlohmann::json scenario_to_json(const ScenarioOutcome& scenario);

/// The report's `notices`: the scenarios' `skipped_checks` grouped by kind, check, side and reason, as [{kind,
/// check, side, scenarios, message}] (empty when nothing was skipped). Entries that are not well-formed are ignored.
nlohmann::json skipped_notices(const nlohmann::json& scenarios);

/// A report file that cannot be read back; what() names the file and says what to do.
struct ReportJsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reads a compare JSON written by `parity compare --json` (for `parity report`). Throws ReportJsonError when the
/// file is missing, is not JSON, is not a compare report, or was written by a newer parity.
nlohmann::json read_report_json(const std::filesystem::path& file);

}  // namespace parity
