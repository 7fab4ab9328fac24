// The terminal view of run and compare (see progress.h): live line, per-scenario lines and the summary tables.
#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "outcome.h"
#include "text.h"

namespace parity {
namespace {

constexpr double kRedrawInterval = 0.1;  // ten redraws a second keep the line current without flooding a slow tty
constexpr const char* kEraseLine = "\r\x1b[K";

// The summary's row order; run says ok where compare says pass.
constexpr std::string_view kStatusOrder[] = {"pass",    "ok",    "fail",  "error", "crash",
                                             "timeout", "xfail", "xpass", "skip"};
static_assert(lists_all(kStatusOrder, kStatuses) && lists_all(kStatusOrder, kRunStatuses),
              "every status of outcome.h has its place in the summary");

// A run's or a compare's failing status (outcome.h).
bool is_failure(const std::string& status) { return is_failing_status(status) || is_failing_run_status(status); }

// A run's scenario that ended without a result of its own making: its worker died or was stopped (runner.cc).
bool is_lost(const std::string& status) { return status == "crash" || status == "timeout"; }

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

std::string formatted(const char* format, auto... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  std::string text(static_cast<std::size_t>(std::max(size, 0)), '\0');
  std::snprintf(text.data(), text.size() + 1, format, args...);
  return text;
}

// A scenario's own time: milliseconds read best for the usual short scenario.
std::string scenario_time(double seconds) {
  return seconds < 10 ? formatted("%.0f ms", seconds * 1e3) : formatted("%.1f s", seconds);
}

std::string total_time(double seconds) { return seconds < 60 ? formatted("%.2f s", seconds) : clock_text(seconds); }

// "[ 37/104]": the count padded to the total's width, so that the lines of one command align.
std::string counter(std::size_t done, std::size_t total) {
  const int width = static_cast<int>(std::to_string(total).size());
  return formatted("[%*zu/%zu]", width, done, total);
}

// A message under its scenario line: its first line indented, the rest indented further (as a block).
std::string indented(const std::string& text) {
  std::string out = "  ";
  std::size_t start = 0;
  const std::string body = text.substr(0, text.find_last_not_of('\n') + 1);
  for (std::size_t end = body.find('\n'); end != std::string::npos; end = body.find('\n', start)) {
    out += body.substr(start, end - start) + "\n";
    start = end + 1;
    if (start < body.size() && body[start] != '\n') out += "        ";
  }
  return out + body.substr(start) + "\n";
}

// The id shortened from the left to `room` characters, keeping the distinguishing end of a long parametrized id.
std::string fitted(const std::string& id, std::size_t room) {
  if (id.size() <= room) return id;
  return room <= 3 ? std::string(room, '.') : "..." + id.substr(id.size() - (room - 3));
}

// The table's rows: statuses in kStatusOrder first, then any other, each only when non-zero.
std::vector<std::pair<std::string, int>> status_rows(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> rows;
  for (const std::string_view ordered : kStatusOrder)
    if (const auto it = counts.find(std::string(ordered)); it != counts.end() && it->second) rows.push_back(*it);
  for (const auto& [status, n] : counts)
    if (n && !listed(kStatusOrder, status)) rows.emplace_back(status, n);
  return rows;
}

// Failing checks, the most frequent first: where a maintainer should look first.
std::vector<std::pair<std::string, int>> check_rows(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return rows;
}

void print_table(std::FILE* out, const std::string& heading, std::vector<std::pair<std::string, int>> rows) {
  if (rows.empty()) return;
  for (auto& row : rows) row.first = printable(row.first);  // statuses and check names a results file may spell
  std::size_t width = heading.size();
  for (const auto& row : rows) width = std::max(width, row.first.size());
  const int w = static_cast<int>(width);
  std::fprintf(out, "  %-*s  scenarios\n", w, heading.c_str());
  for (const auto& [name, n] : rows) std::fprintf(out, "  %-*s  %9d\n", w, name.c_str(), n);
}

void print_written(std::FILE* out, const std::vector<WrittenReport>& written) {
  std::size_t width = 0;
  for (const WrittenReport& w : written) width = std::max(width, w.label.size());
  for (const WrittenReport& w : written)
    std::fprintf(out, "  %-*s  %s\n", static_cast<int>(width), w.label.c_str(), printable(w.path).c_str());
}

// " (3 leaves)" from a passed check's details; empty when they do not say.
std::string leaf_count(const nlohmann::json& details) {
  if (!details.is_object() || !details.contains("leaves") || !details["leaves"].is_number_integer()) return "";
  const auto n = details["leaves"].get<std::int64_t>();
  return " (" + std::to_string(n) + (n == 1 ? " leaf)" : " leaves)");
}

}  // namespace

Display display_for(std::FILE* out) {
  const char* term = std::getenv("TERM");
  const bool can_erase = term && *term && std::strcmp(term, "dumb") != 0;
  return can_erase && ::isatty(::fileno(out)) ? Display::kLive : Display::kLines;
}

int terminal_columns(std::FILE* out) {
  winsize size{};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

ProgressOptions progress_options(std::FILE* out, std::string verb, std::size_t total, Verbosity verbosity) {
  const Display display = display_for(out);
  return {std::move(verb), total, display, verbosity, display == Display::kLive ? terminal_columns(out) : 0, {}};
}

std::string clock_text(double seconds) {
  const long total = static_cast<long>(std::max(seconds, 0.0));
  const long hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  return hours ? formatted("%ld:%02ld:%02ld", hours, minutes, secs) : formatted("%ld:%02ld", minutes, secs);
}

ShownScenario to_shown(const ScenarioRecord& record) {
  ShownScenario shown{record.id, record.status, record.seconds, {}, "", {}, {}};
  if (!record.error.is_object()) return shown;
  const std::string message = record.error.value("message", "");
  const std::string error = record.error.value("type", "?") + ": " + message;
  if (record.status == "xfail") {
    shown.note = "expected failure: " + record.error.value("reason", "");
    shown.verbose_details.push_back(error);
  } else {
    shown.note = first_line(record.status == "error" || is_lost(record.status) ? error : message);
  }
  if (record.status == "error" && message.find('\n') != std::string::npos) shown.details.push_back(error);
  const std::string traceback = record.error.value("traceback", "");
  // What a dead worker printed last is all there is to go on: always shown.
  if (!traceback.empty()) (is_lost(record.status) ? shown.details : shown.verbose_details).push_back(traceback);
  return shown;
}

ShownScenario to_shown(const ScenarioOutcome& outcome, bool verbose) {
  ShownScenario shown{outcome.id, outcome.status, outcome.compare_seconds, {}, "", {}, {}};
  std::vector<std::string> passed;
  for (const Check& check : outcome.checks) {
    if (check.ok) {
      if (verbose) passed.push_back(check.check + leaf_count(check.details));
      continue;
    }
    auto& names = shown.failed_checks;
    if (std::find(names.begin(), names.end(), check.check) == names.end()) names.push_back(check.check);
    shown.details.push_back("[" + check.check + "] " + check.path + ": " + check.message);
  }
  // The command that reproduces the failures, once under them (it is a field: no message carries it).
  if (!shown.failed_checks.empty() && !outcome.repro.empty()) shown.details.push_back("Repro: " + outcome.repro);
  // Leaves that no values comparison reached: a count beside the failures that say where.
  if (const std::string gap = outcome.coverage ? coverage_note(outcome.coverage->to_json()) : ""; !gap.empty())
    shown.details.insert(shown.details.begin(), gap);
  if (outcome.status != "fail") shown.note = first_line(outcome.message);  // a fail's line names its checks
  if (!passed.empty()) shown.verbose_details.push_back("passed: " + joined(passed, ", "));
  return shown;
}

Progress::Progress(std::FILE* out, ProgressOptions options)
    : out_(out),
      options_(std::move(options)),
      live_(options_.display == Display::kLive && options_.verbosity != Verbosity::kQuiet),
      last_draw_(-std::numeric_limits<double>::infinity()) {
  if (!options_.clock) options_.clock = steady_seconds;
  started_ = now();
}

Progress::~Progress() { erase(); }

void Progress::begin(const std::string& id) {
  current_ = printable(id);
  const double t = now();
  if (live_ && t - last_draw_ >= kRedrawInterval) draw(t);
}

void Progress::end(const ShownScenario& scenario) {
  ++done_;
  ++by_status_[scenario.status];
  if (is_failure(scenario.status))
    for (const std::string& check : scenario.failed_checks) ++failures_by_check_[check];
  const bool printed = shows_line(scenario.status);
  if (printed) {
    erase();
    print_scenario(scenario);
  }
  // The next begin() redraws, naming the scenario that runs then; until the last, which has no next.
  if (live_ && (printed || done_ == options_.total)) draw(now());
  std::fflush(out_);
}

void Progress::summary(const std::vector<WrittenReport>& written) {
  erase();
  const double seconds = now() - started_;
  const std::string head =
      formatted("parity %s: %zu scenarios in %s", options_.verb.c_str(), done_, total_time(seconds).c_str());
  if (options_.verbosity == Verbosity::kQuiet) {
    std::vector<std::string> counts;
    for (const auto& [status, n] : status_rows(by_status_))
      counts.push_back(std::to_string(n) + " " + printable(status));
    std::fprintf(out_, "%s%s%s\n", head.c_str(), counts.empty() ? "" : ": ", joined(counts, ", ").c_str());
  } else {
    std::fprintf(out_, "%s\n", head.c_str());
    print_tables();
  }
  print_written(out_, written);
  std::fflush(out_);
}

// Live: only what needs attention goes above the line; lines: every scenario unless quiet; verbose: everything.
bool Progress::shows_line(const std::string& status) const {
  if (is_failure(status) || options_.verbosity == Verbosity::kVerbose) return true;
  return options_.verbosity == Verbosity::kNormal && options_.display == Display::kLines;
}

void Progress::print_scenario(const ShownScenario& s) {
  // Everything shown here came from a scenario or a results directory: escaped, it cannot drive the terminal.
  const std::string tail = printable(s.note.empty() ? joined(s.failed_checks, ", ") : s.note);
  std::fprintf(out_, "%s %-6s %s (%s)%s%s\n", counter(done_, options_.total).c_str(), printable(s.status).c_str(),
               printable(s.id).c_str(), scenario_time(s.seconds).c_str(), tail.empty() ? "" : " ", tail.c_str());
  const auto print_detail = [this](const std::string& detail) {
    std::fputs(indented(printable(detail, Newlines::kKeep)).c_str(), out_);
  };
  const bool verbose = options_.verbosity == Verbosity::kVerbose;
  if (verbose || (options_.verbosity == Verbosity::kNormal && is_failure(s.status)))
    for (const std::string& detail : s.details) print_detail(detail);
  if (verbose)
    for (const std::string& detail : s.verbose_details) print_detail(detail);
}

void Progress::print_tables() const {
  print_table(out_, "status", status_rows(by_status_));
  print_table(out_, "failed check", check_rows(failures_by_check_));
}

// `[ 37/104] 2 failed, 1 error | basic.matrix | 0:03 elapsed, ETA 0:12`, the id shortened to fit the terminal.
std::string Progress::live_text(double t) const {
  const auto count = [this](const char* status) { return by_status_.count(status) ? by_status_.at(status) : 0; };
  const double elapsed = t - started_;
  const std::size_t remaining = options_.total > done_ ? options_.total - done_ : 0;
  const std::string eta = done_ ? clock_text(elapsed / static_cast<double>(done_) * remaining) : "-:--";
  const std::string head =
      counter(done_, options_.total) + formatted(" %d failed, %d error | ", count("fail") + count("xpass"),
                                                 count("error") + count("crash") + count("timeout"));
  const std::string tail = " | " + clock_text(elapsed) + " elapsed, ETA " + eta;
  if (options_.columns <= 0) return head + current_ + tail;
  const std::size_t width = static_cast<std::size_t>(options_.columns) - 1;  // the last column would wrap
  const std::size_t fixed = head.size() + tail.size();
  const std::string line = head + fitted(current_, width > fixed + 3 ? width - fixed : 3) + tail;
  return line.substr(0, width);
}

void Progress::draw(double t) {
  std::fprintf(out_, "%s%s", kEraseLine, live_text(t).c_str());
  std::fflush(out_);
  drawn_ = true;
  last_draw_ = t;
}

void Progress::erase() {
  if (!drawn_) return;
  std::fputs(kEraseLine, out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace parity
