// Writing the reports asked for (see report_files.h).
#include "report_files.h"

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <future>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "atomic_file.h"
#include "deadline.h"
#include "html_report.h"
#include "interpreter.h"
#include "json_output.h"
#include "json_report.h"
#include "junit.h"
#include "safe_file.h"
#include "text.h"

namespace parity {
namespace {

// A declaration that explained nothing: the library changed (remove it), or this run did not include what it is for.
void print_stale_differences(const CompareReport& report) {
  const std::vector<std::string> stale = report.stale_differences();
  if (stale.empty()) return;
  std::string ids;
  for (const std::string& id : stale) ids += (ids.empty() ? "" : ", ") + printable(id);
  std::fprintf(
      stderr, "parity compare: %s: %zu declared difference%s explained no failure in this run: %s%s\n",
      report.strict_differences ? "failed" : "note", stale.size(), stale.size() == 1 ? "" : "s", ids.c_str(),
      report.strict_differences ? " (the library no longer differs there: remove them from its DIFFERENCES)" : "");
}

// Checks skipped (they would trust the results directory, or have no verdict): always shown, -q or not (README,
// "Safety").
void print_notices(const nlohmann::json& document) {
  for (const nlohmann::json& notice : document.value("notices", nlohmann::json::array()))
    print_line("compare", "notice: " + notice.value("message", ""));
}

// `render()` on a thread of its own when `wanted`, else nothing (a future never read); in this thread when no thread
// can be had (a process limit). A future's destructor waits for its thread, so one left unread on an error ends first.
template <class Render>
std::future<std::string> render_aside(bool wanted, Render render) {
  if (!wanted) return {};
  try {
    return std::async(std::launch::async, render);
  } catch (const std::system_error&) {
    return std::async(std::launch::deferred, render);
  }
}

// Where `path` leads, as one spelling for each file: its links followed, made absolute, its "." and ".." resolved where
// they exist. Empty for a device, FIFO or socket, or an open file named through /proc (/dev/stdout), which may take
// more than one report.
std::filesystem::path destination_key(const std::string& path) {
  namespace fs = std::filesystem;
  if (open_file_link(path)) return {};
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status) && !fs::is_directory(status)) return {};
  const fs::path key = fs::weakly_canonical(fs::absolute(followed_links(path), ec), ec);
  return ec ? fs::absolute(path).lexically_normal() : key;
}

// Why the report `flag` asks for at `path` (whose destination_key is `key`) cannot be written there, "" when it can
// (`created`: report_paths_problem).
std::string destination_problem(const std::string& flag, const std::string& path, const std::filesystem::path& key,
                                const std::string& created) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return flag + " " + path + ": is a directory; give the report's file name";
  // A loop of links: else the last link of the loop was replaced by the report.
  if (fs::status(path, ec).type() == fs::file_type::none && ec.value() == ELOOP)
    return flag + " " + path + ": its symbolic links make a loop";
  if (key.empty()) return "";  // a device, FIFO, socket or open file: written into as it is
  const fs::path parent = followed_links(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec) &&
      (created.empty() || absolute_spelling(parent) != absolute_spelling(created)))
    return flag + " " + path + ": its directory " + parent.string() + " does not exist";
  return "";
}

}  // namespace

std::string report_paths_problem(const ReportPaths& paths, const std::vector<std::string>& inputs,
                                 const std::string& created) {
  std::map<std::filesystem::path, std::string> taken;  // destination key -> what names it
  for (const std::string& input : inputs)
    if (const auto key = destination_key(input); !key.empty()) taken.emplace(key, "the input " + input);
  for (const auto& [flag, path] :
       {std::pair{"--json", &paths.json}, std::pair{"--junit", &paths.junit}, std::pair{"--html", &paths.html}}) {
    if (path->empty()) continue;
    const auto key = destination_key(*path);
    // Before the destination's own problems: a report over a check's results directory's manifest is that, not "its
    // directory does not exist" (the check makes it).
    if (const auto at = taken.find(key); !key.empty() && at != taken.end())
      return std::string(flag) + " " + *path + " names the same file as " + at->second +
             ": each report needs a file of its own, and no input may be overwritten";
    if (std::string problem = destination_problem(flag, *path, key, created); !problem.empty()) return problem;
    if (!key.empty()) taken.emplace(key, std::string(flag) + " " + *path);
  }
  return "";
}

void write_reports(const nlohmann::json& report, const ReportPaths& paths, std::vector<WrittenReport>& written) {
  // The JSON text and the JUnit XML are rendered on threads of their own while this one renders the HTML (Python's,
  // so here): after a compare's last scenario they were its longest serial step (issue #20, target 3). Each is
  // pure C++ reading the one document, which nothing changes meanwhile. Then they are written in this order, and an
  // error is thrown where it was when they were rendered one after the other.
  std::future<std::string> json_text =
      render_aside(!paths.json.empty(), [&report] { return dump_json(report, 1) + "\n"; });
  std::future<std::string> junit_xml =
      render_aside(!paths.junit.empty(), [&report] { return report_to_junit(report); });
  std::optional<std::string> html;
  std::exception_ptr html_error;
  try {
    if (!paths.html.empty()) html = report_to_html(report);
  } catch (...) {
    html_error = std::current_exception();
  }
  auto write = [&](const char* label, const std::string& path, auto text) {
    if (path.empty()) return;
    write_named_file(path, text());
    written.push_back({label, path});
  };
  write("JSON report", paths.json, [&] { return json_text.get(); });
  write("JUnit report", paths.junit, [&] { return junit_xml.get(); });
  write("HTML report", paths.html, [&] {
    if (html_error) std::rethrow_exception(html_error);
    return std::move(*html);
  });
}

void write_reports_with_trends(nlohmann::json& report, const ReportPaths& paths,
                               const std::vector<std::string>& baselines, const char* verb) {
  add_trends(report, read_baselines(baselines, report.value("/candidate/backend/name"_json_pointer, ""),
                                    report.value("started", "")));
  // Installed before the interpreter starts, as compare's, so that Python installs no handler of its own: a Ctrl-C
  // during its start or the HTML's rendering had been a KeyboardInterrupt inside them, told as their error (exit
  // 2); now the reports are written and it ends the command as an interruption (Interrupted: exit 130).
  const StopSignalHandler stops(note_stop_signal);
  if (!paths.html.empty()) start_interpreter();
  std::vector<WrittenReport> written;
  write_reports(report, paths, written);
  for (const WrittenReport& w : written) print_line(verb, "wrote " + w.label + " " + w.path);
  check_interrupted();
}

std::string CompareReportWriter::prepare(const Manifest& candidate) {
  try {
    baselines_ = read_baselines(baseline_files_, candidate.backend.value("name", ""), utc_timestamp());
  } catch (const ReportJsonError& e) {
    return e.what();
  }
  return "";
}

void CompareReportWriter::outcome(const ScenarioOutcome& scenario) { scenarios_.push_back(scenario_to_json(scenario)); }

void CompareReportWriter::write(const CompareReport& report, std::vector<WrittenReport>& written) {
  document_ = report_to_json(report, std::exchange(scenarios_, nlohmann::json::array()));
  add_trends(document_, std::move(baselines_));
  // Every writer reads this JSON, so a report re-rendered later from the JSON file says what this one says.
  write_reports(document_, paths_, written);
}

void CompareReportWriter::tell(const CompareReport& report, Verbosity verbosity) {
  if (const std::string trends = trend_summary_text(document_, verbosity == Verbosity::kQuiet); !trends.empty())
    std::fprintf(stderr, "parity compare: %s", trends.c_str());
  print_stale_differences(report);
  print_notices(document_);
}

}  // namespace parity
