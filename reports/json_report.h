// The compare report as JSON (schema in docs/report-json.md): every field the other reports show.
#pragma once

#include <nlohmann/json.hpp>

#include "compare.h"

namespace parity {

inline constexpr int kReportJsonVersion = 1;

nlohmann::json report_to_json(const CompareReport& report);

}  // namespace parity
