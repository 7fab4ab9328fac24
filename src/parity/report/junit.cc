// Writes JUnit XML with pugixml from the compare JSON: pugixml escapes markup, xml_safe removes what XML cannot hold.
#include "junit.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <pugixml.hpp>
#include <sstream>
#include <stdexcept>

#include "json_input.h"
#include "json_report.h"
#include "outcome.h"
#include "text.h"
#include "trends.h"

using json = nlohmann::json;

namespace parity {
namespace {

// A value as text: strings as they are, null as "", anything else as JSON (a report re-read from a file is data,
// not a promise that every field has the type parity writes).
std::string as_text(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.is_null() ? "" : value.dump();
}

// The field at a JSON pointer as text, "" when absent.
std::string text_at(const json& doc, std::string_view pointer) {
  const json* at = find_at(doc, pointer);
  return at ? as_text(*at) : "";
}

double seconds_at(const json& doc, std::string_view pointer) {
  const json* at = find_at(doc, pointer);
  return at && at->is_number() ? at->get<double>() : 0.0;
}

// The longest time written as itself: ~31,700 years, far past any run, and short enough for "%.3f" to print whole.
constexpr double kMaxSeconds = 1e12;

// Milliseconds, as Ant writes them; plain digits, which every JUnit reader parses. A time no run could take (from
// a report from elsewhere: negative, NaN, infinite or past kMaxSeconds) is 0, not "inf" or a number cut short.
std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", seconds > 0 && seconds <= kMaxSeconds ? seconds : 0.0);
  return buf;
}

void set(pugi::xml_node node, const char* name, const std::string& value) {
  node.append_attribute(name).set_value(xml_safe(value).c_str());
}

void add_property(pugi::xml_node props, const std::string& name, const std::string& value) {
  auto p = props.append_child("property");
  set(p, "name", name);
  set(p, "value", value);
}

void add_properties(pugi::xml_node suite, const json& report) {
  auto props = suite.append_child("properties");
  add_property(props, "parity", text_at(report, "/parity"));
  for (const std::string side : {"gold", "candidate"}) {
    add_property(props, side + ".backend", text_at(report, "/" + side + "/backend/name"));
    add_property(props, side + ".version", text_at(report, "/" + side + "/backend/version"));
    // Each side's own: the two runs may have been made on different machines.
    for (const std::string key : {"python", "numpy", "platform"})
      add_property(props, side + "." + key, text_at(report, "/" + side + "/environment/" + key));
    // The libraries the run imported (pandas, scipy, ...): a CI page shows an install that changed one.
    if (const json* libraries = find_at(report, "/" + side + "/environment/libraries");
        libraries && libraries->is_object())
      for (const auto& [name, version] : libraries->items())
        add_property(props, side + ".library." + name, as_text(version));
  }
  const json policy = report.value("policy", json::object());
  for (const auto& [name, value] : policy.items()) add_property(props, "policy." + name, as_text(value));
  // Trends (`--baseline`): how many baselines, and the counts of each mark.
  if (report.contains("baselines") && report["baselines"].is_array())
    add_property(props, "trend.baselines", std::to_string(report["baselines"].size()));
  // Checks compare skipped (rather than trust the results directory, or without a verdict): a CI page must show
  // them, not only stderr.
  const json notices = report.value("notices", json::array());
  if (notices.is_array())
    for (const json& notice : notices) add_property(props, "notice", text_at(notice, "/message"));
  const json trends = report.value("trend_summary", json::object());
  for (const auto& [mark, n] : trends.items()) add_property(props, "trend." + mark, as_text(n));
}

// The outcome's message: the scenario's, with its trend mark when it has one ("failed checks: values (new failure)").
std::string outcome_message(const json& s) {
  const std::string mark = s.contains("trend") ? trend_label(s["trend"]) : "";
  return text_at(s, "/message") + (mark.empty() ? "" : " (" + mark + ")");
}

// The id spells the params in declaration order (parity/_scenario.py), which the JSON's params object does not
// keep; a module that failed to import has only its module name as id.
std::string testcase_name(const json& s) {
  const std::string id = text_at(s, "/id"), prefix = text_at(s, "/module") + ".";
  return id.rfind(prefix, 0) == 0 && id.size() > prefix.size() ? id.substr(prefix.size()) : id;
}

// One failed check as the failure text lists it; body() adds the scenario's repro once, at the end.
std::string failed_check_text(const json& check) {
  std::string text =
      "[" + text_at(check, "/check") + "] " + text_at(check, "/path") + ": " + text_at(check, "/message");
  // parity's error messages end with the traceback already (error_text); a report from elsewhere may keep it in
  // details only. Looked for at the end, not anywhere: a search of a long message for a long traceback took
  // quadratic time (a 12 MB report from elsewhere, minutes), and one found elsewhere is at worst told twice.
  const std::string traceback = text_at(check, "/details/traceback");
  const auto trimmed = [](std::string_view v) { return v.substr(0, v.find_last_not_of('\n') + 1); };
  if (!traceback.empty() && !trimmed(text).ends_with(trimmed(traceback))) text += "\n" + traceback;
  text.erase(text.find_last_not_of('\n') + 1);  // one blank line between checks, however a message ends
  return text;
}

std::string body(const json& s) {
  const std::string repro = text_at(s, "/repro");
  std::string text;
  for (const json& check : s.value("checks", json::array()))
    if (!check.value("ok", true)) text += failed_check_text(check) + "\n\n";
  if (text.empty()) text = text_at(s, "/message") + "\n\n";  // an xpass or a pass-level xfail fails no check
  if (!repro.empty()) text += "Repro: " + repro + "\n";
  return text;
}

// The element each compare status becomes; pass becomes none.
struct StatusElement {
  std::string_view status;
  const char* element;
};
constexpr StatusElement kElements[] = {{"pass", nullptr},   {"fail", "failure"},  {"xpass", "failure"},
                                       {"error", "error"},  {"timeout", "error"}, {"skip", "skipped"},
                                       {"xfail", "skipped"}};
constexpr bool every_status_has_an_element() {
  return std::all_of(std::begin(kStatuses), std::end(kStatuses), [](std::string_view status) {
    return std::any_of(std::begin(kElements), std::end(kElements), [status](auto e) { return e.status == status; });
  });
}
static_assert(every_status_has_an_element(), "every status of outcome.h becomes a JUnit element (or none)");

// The element a status becomes. A status this writer does not know is an error, never a pass.
const char* outcome_element(const std::string& status) {
  for (const StatusElement& e : kElements)
    if (e.status == status) return e.element;
  return "error";
}

// A scenario's file as CI annotators find it in a checkout: relative to the working directory (a CI job's is the
// repository's root) when it is under it, else as the run recorded it.
std::string annotated_file(const std::string& source) {
  std::error_code failed;
  const std::filesystem::path cwd = std::filesystem::current_path(failed);
  const std::filesystem::path file = std::filesystem::weakly_canonical(source, failed);
  if (failed || !file.is_absolute()) return source;
  const std::filesystem::path relative = file.lexically_relative(cwd);
  return relative.empty() || relative == "." || *relative.begin() == ".." ? source : relative.string();
}

// annotated_file of each source file once per report: a module's scenarios share it, and resolving it costs a
// system call per directory on its path.
using AnnotatedFiles = std::map<std::string, std::string>;

// Where CI annotators (GitHub check runs, GitLab) point a testcase: its scenario's source file and definition line.
void add_location(pugi::xml_node tc, const json& s, AnnotatedFiles& files) {
  if (const std::string file = text_at(s, "/source"); !file.empty()) {
    auto found = files.find(file);
    if (found == files.end()) found = files.emplace(file, annotated_file(file)).first;
    set(tc, "file", found->second);
  }
  const json* line = find_at(s, "/line");
  if (line && line->is_number_integer() && line->get<long long>() > 0)
    set(tc, "line", std::to_string(line->get<long long>()));
}

// What both sides printed on one stream ("stdout" or "stderr"), each under a label saying whose it is: gold and
// candidate run the same code, so their lines alone would read as one run's.
std::string printed(const json& s, const std::string& stream) {
  std::string text;
  for (const std::string side : {"gold", "candidate"}) {
    const std::string part = text_at(s, "/output/" + side + "/" + stream);
    if (part.empty()) continue;
    const json* cut = find_at(s, "/output/" + side + "/truncated");
    text += "----- " + side + " " + stream + (cut && *cut == true ? " (its end only)" : "") + " -----\n" + part +
            (part.back() == '\n' ? "" : "\n");
  }
  return text;
}

// Adds the testcase; returns its outcome element's name ("" for a pass).
std::string add_testcase(pugi::xml_node suite, const json& s, AnnotatedFiles& files) {
  auto tc = suite.append_child("testcase");
  const std::string module = text_at(s, "/module");
  set(tc, "classname", module.empty() ? text_at(s, "/id") : module);
  set(tc, "name", testcase_name(s));
  add_location(tc, s, files);
  // All three passes: the scenario's cost, whichever side made it slow.
  set(tc, "time",
      seconds_text(seconds_at(s, "/seconds/gold") + seconds_at(s, "/seconds/candidate") +
                   seconds_at(s, "/seconds/compare")));
  const std::string status = text_at(s, "/status");
  const char* element = outcome_element(status);
  if (element) {
    auto node = tc.append_child(element);
    set(node, "message", outcome_message(s));
    set(node, "type", status);  // keeps xpass apart from fail and xfail apart from skip
    if (status != "skip") node.text().set(xml_safe(body(s)).c_str());
  }
  // "values covered 2 of 5 leaves": leaves no values comparison reached, then what the scenario printed (the schema
  // puts system-out and system-err last).
  const std::string gap = coverage_note(s.value("coverage", json())), stdout_text = printed(s, "stdout");
  if (const std::string out = gap + (gap.empty() || stdout_text.empty() ? "" : "\n") + stdout_text; !out.empty())
    tc.append_child("system-out").text().set(xml_safe(out).c_str());
  if (const std::string err = printed(s, "stderr"); !err.empty())
    tc.append_child("system-err").text().set(xml_safe(err).c_str());
  return element ? element : "";
}

// The suite is the whole pipeline that produced the verdicts: both runs and the compare.
double suite_seconds(const json& report) {
  return seconds_at(report, "/gold/run/seconds") + seconds_at(report, "/candidate/run/seconds") +
         seconds_at(report, "/seconds");
}

// Ant's form: UTC as parity records it, without the "Z" Ant's schema has no room for.
std::string ant_timestamp(std::string utc) {
  if (!utc.empty() && utc.back() == 'Z') utc.pop_back();
  return utc;
}

void require_version_1(const json& report) {
  if (!report.is_object() || text_at(report, "/format") != "parity-compare" ||
      report.value("version", json()) != kReportJsonVersion || !report.contains("scenarios") ||
      !report["scenarios"].is_array())
    throw std::invalid_argument("not a version " + std::to_string(kReportJsonVersion) +
                                " parity compare report (docs/report-json.md)");
}

// XML 1.0's Char production.
bool xml_char(char32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
         cp >= 0x10000;
}

}  // namespace

std::string xml_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(text, i, cp);
    if (len > 0 && xml_char(cp))
      out.append(text, i, len);
    else
      out += "\xef\xbf\xbd";  // U+FFFD: one per forbidden character, one per byte of malformed input
    i += len > 0 ? len : 1;
  }
  return out;
}

std::string report_to_junit(const json& report) {
  require_version_1(report);
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  auto suite = suites.append_child("testsuite");
  add_properties(suite, report);
  std::map<std::string, int> outcomes;  // by element name
  const json& scenarios = report.at("scenarios");
  AnnotatedFiles files;
  for (const json& s : scenarios) ++outcomes[add_testcase(suite, s, files)];

  const std::string time = seconds_text(suite_seconds(report));
  set(suites, "name", "parity");
  set(suite, "name", text_at(report, "/gold/backend/name") + "-vs-" + text_at(report, "/candidate/backend/name"));
  for (pugi::xml_node node : {suites, suite}) {
    set(node, "tests", std::to_string(scenarios.size()));
    set(node, "failures", std::to_string(outcomes["failure"]));
    set(node, "errors", std::to_string(outcomes["error"]));
    if (node == suite) set(node, "skipped", std::to_string(outcomes["skipped"]));  // junit-10.xsd: not on testsuites
    set(node, "time", time);
  }
  set(suite, "timestamp", ant_timestamp(text_at(report, "/started")));
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

}  // namespace parity
