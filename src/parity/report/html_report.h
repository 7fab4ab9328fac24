// The compare report as one self-contained HTML page, rendered from the compare JSON by a Jinja2 template.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace parity {

/// Renders `report` (the version-1 JSON that report_to_json writes, or one read back from a file) through
/// reports/templates/report.html.j2 with python/parity/html_report.py. Needs the interpreter
/// (start_interpreter). Throws std::runtime_error naming the template's complaint when the JSON lacks what
/// the page shows.
std::string report_to_html(const nlohmann::json& report);

}  // namespace parity
