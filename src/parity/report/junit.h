// The compare report as JUnit XML, in the dialect Jenkins, GitLab and GitHub test reporters read.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace parity {

/// Renders the version-1 compare JSON (what report_to_json makes, docs/report-json.md) as JUnit XML, so a report
/// can be re-rendered from its JSON file without re-running. One <testsuite> for the gold/candidate pair, with the
/// backends, environments, parity version and policies as properties; one <testcase> per scenario, classname = the
/// module, name = the function with its params as the id spells them. <failure> for fail and xpass, <error> for
/// error, <skipped> for skip and xfail; message = the scenario's message (for fail, the failing check names) and its
/// trend mark, if any ("(new failure)"; the trend counts are properties too), body =
/// every failed check's full message (tracebacks included), then the repro command. Throws std::invalid_argument
/// for a document that is not version-1 compare JSON.
std::string report_to_junit(const nlohmann::json& report);

/// Replaces characters XML 1.0 cannot carry (control characters, lone surrogates, malformed UTF-8) with U+FFFD.
std::string xml_safe(const std::string& text);

}  // namespace parity
