// Marks a compare JSON's scenarios against earlier compare JSONs, by scenario id (see trends.h, docs/report-json.md).
#include "trends.h"

#include <algorithm>
#include <map>
#include <set>

#include "json_input.h"
#include "outcome.h"
#include "text.h"

using json = nlohmann::json;

namespace parity {
namespace {

// A scenario's history entry for a compare that did not have it.
constexpr const char* kAbsent = "absent";

// Every mark in the order the terminal lists them (new failures first), with its `trend_summary` key.
struct MarkName {
  const char* mark;
  const char* key;
};
constexpr MarkName kMarks[] = {
    {"new", "new"}, {"still-failing", "still_failing"}, {"fixed", "fixed"}, {"gone", "gone"}};

std::string text_at(const json& doc, const char* pointer) {
  const json* at = find_at(doc, pointer);
  return at && at->is_string() ? at->get<std::string>() : "";
}

bool has_string(const json& object, const char* key) {
  return object.is_object() && object.contains(key) && object[key].is_string();
}

// Why `report` cannot be a baseline of a compare of `candidate` started at `started`; "" when it can.
std::string unfit_baseline(const json& report, const std::string& candidate, const std::string& started) {
  const std::string when = text_at(report, "/started"), name = text_at(report, "/candidate/backend/name");
  if (when.empty()) return "has no \"started\" time";
  if (name.empty()) return "names no candidate backend (\"candidate\": {\"backend\": {\"name\": ...}})";
  if (!report.contains("scenarios") || !report["scenarios"].is_array()) return "has no \"scenarios\" list";
  for (const json& s : report["scenarios"])
    if (!has_string(s, "id") || !has_string(s, "status"))
      return "has a scenario without a string \"id\" and \"status\"";
  if (name != candidate)
    return "compares candidate backend '" + name + "', not '" + candidate +
           "': a baseline must be an earlier compare of the same candidate backend (another version of it is fine)";
  // ISO 8601 UTC times of one format order as text does.
  if (!started.empty() && when > started)
    return "started " + when + ", after this compare (" + started + "): a baseline must be an earlier compare";
  return "";
}

using StatusById = std::map<std::string, std::string>;

StatusById statuses(const json& report) {
  StatusById by_id;
  for (const json& s : report.value("scenarios", json::array())) by_id[s.value("id", "")] = s.value("status", "");
  return by_id;
}

// `id`'s status in each compare, in the compares' order; kAbsent where one did not have it.
std::vector<std::string> history_of(const std::string& id, const std::vector<StatusById>& compares) {
  std::vector<std::string> history;
  for (const StatusById& compare : compares) {
    const auto it = compare.find(id);
    history.push_back(it == compare.end() ? kAbsent : it->second);
  }
  return history;
}

// The trend of a scenario whose `history` holds its status in each baseline, oldest first, then now (two entries at
// least); `dates[i]` is when compare i started. Only the latest baseline decides the mark: a scenario failing there
// is still failing (since the oldest baseline of the run of failing ones it ends), fixed (passing now, or an
// expected failure; a skip proves nothing) or gone (not compared now); one passing there or absent from it and
// failing now is new.
json trend_of(const std::vector<std::string>& history, const std::vector<std::string>& dates) {
  const std::string& now = history.back();
  std::size_t first = history.size() - 2;  // the latest baseline, then back to where its run of failures began
  json mark = nullptr, since = nullptr;
  if (is_failing_trend_status(history[first])) {
    while (first > 0 && is_failing_trend_status(history[first - 1])) --first;
    if (is_failing_trend_status(now) || now == kAbsent) {
      mark = now == kAbsent ? "gone" : "still-failing";
      since = dates[first];
    } else if (now != "skip") {
      mark = "fixed";
    }
  } else if (is_failing_trend_status(now)) {
    mark = "new";
  }
  return {{"mark", mark}, {"since", since}, {"history", history}};
}

// {"total": n, status: n for every status} of the statuses of a baseline's scenarios. Counted, never copied from the
// baseline's own `summary`: a baseline is a report from elsewhere, and one whose summary said 0 failing had the HTML
// report's trends list it so beside its failing scenarios.
json status_counts(const json& report) {
  std::vector<std::string> all;
  for (const auto& [id, status] : statuses(report)) all.push_back(status);
  json counts = count_statuses(all);
  counts["total"] = all.size();
  return counts;
}

json baseline_json(const Baseline& b) {
  return {{"file", b.file},
          {"started", text_at(b.report, "/started")},
          {"parity", text_at(b.report, "/parity")},
          {"candidate",
           {{"name", text_at(b.report, "/candidate/backend/name")},
            {"version", text_at(b.report, "/candidate/backend/version")}}},
          {"summary", status_counts(b.report)}};
}

// Every compare's statuses and start time: the baselines, oldest first, then `report`.
struct Compares {
  std::vector<StatusById> statuses;
  std::vector<std::string> dates;
};

Compares compares_of(const std::vector<Baseline>& baselines, const json& report) {
  Compares c;
  for (const Baseline& b : baselines) {
    c.statuses.push_back(statuses(b.report));
    c.dates.push_back(text_at(b.report, "/started"));
  }
  c.statuses.push_back(statuses(report));
  c.dates.push_back(text_at(report, "/started"));
  return c;
}

// The failures of the latest baseline that this compare did not compare, each as {id, trend}, in its order.
json gone_scenarios(const json& latest, const Compares& compares) {
  json gone = json::array();
  for (const json& s : latest.at("scenarios")) {
    const std::string id = s.value("id", "");
    if (compares.statuses.back().count(id)) continue;
    json trend = trend_of(history_of(id, compares.statuses), compares.dates);
    if (trend["mark"] == "gone") gone.push_back({{"id", id}, {"trend", std::move(trend)}});
  }
  return gone;
}

// The mark of an entry of `scenarios` or `gone`; "" for none.
std::string mark_of(const json& entry) {
  const json trend = entry.value("trend", json::object());
  return has_string(trend, "mark") ? trend["mark"].get<std::string>() : "";
}

// Not summary_of: merge.cc has one, and a unity build (CMAKE_UNITY_BUILD) compiles both files as one.
json trend_summary_of(const json& report) {
  json counts = json::object();
  for (const MarkName& m : kMarks) {
    int n = 0;
    for (const char* list : {"scenarios", "gone"})
      for (const json& entry : report.at(list)) n += mark_of(entry) == m.mark;
    counts[m.key] = n;
  }
  return counts;
}

std::string plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string counts_line(const json& report) {
  const json& counts = report.at("trend_summary");
  const json& baselines = report.at("baselines");
  // The dates and ids come from the baseline files: this text is for the terminal, so they are escaped (text.h).
  const std::string oldest = printable(baselines.front().value("started", "?")),
                    latest = printable(baselines.back().value("started", "?"));
  return plural(counts.value("new", 0), "new failure", "new failures") + ", " +
         std::to_string(counts.value("still_failing", 0)) + " still failing, " +
         std::to_string(counts.value("fixed", 0)) + " fixed, " + std::to_string(counts.value("gone", 0)) +
         " gone (against " + plural(static_cast<int>(baselines.size()), "baseline", "baselines") + ", " +
         (oldest == latest ? "started " + oldest : oldest + " to " + latest) + ")\n";
}

// "  id  label" for every marked scenario, those of the first mark first, ids aligned.
std::string marked_lines(const json& report) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const MarkName& m : kMarks)
    for (const char* list : {"scenarios", "gone"})
      for (const json& entry : report.value(list, json::array()))
        if (mark_of(entry) == m.mark)
          rows.emplace_back(printable(entry.value("id", "")), printable(trend_label(entry["trend"])));
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string text;
  for (const auto& [id, label] : rows) text += "  " + id + std::string(width - id.size() + 2, ' ') + label + "\n";
  return text;
}

}  // namespace

bool is_failing_trend_status(const std::string& status) { return is_failing_status(status) || status == "missing"; }

std::vector<Baseline> read_baselines(const std::vector<std::string>& files, const std::string& candidate,
                                     const std::string& started) {
  std::vector<Baseline> baselines;
  for (const std::string& file : files) {
    Baseline b{file, nullptr};
    try {
      b.report = read_report_json(file);
    } catch (const ReportJsonError& e) {
      throw ReportJsonError(std::string("baseline ") + e.what());
    }
    if (const std::string why = unfit_baseline(b.report, candidate, started); !why.empty())
      throw ReportJsonError("baseline " + file + ": " + why);
    baselines.push_back(std::move(b));
  }
  return baselines;
}

void add_trends(json& report, std::vector<Baseline> baselines) {
  if (baselines.empty()) return;
  std::stable_sort(baselines.begin(), baselines.end(), [](const Baseline& a, const Baseline& b) {
    return text_at(a.report, "/started") < text_at(b.report, "/started");
  });
  const Compares compares = compares_of(baselines, report);
  for (json& s : report.at("scenarios"))
    s["trend"] = trend_of(history_of(s.value("id", ""), compares.statuses), compares.dates);
  report["gone"] = gone_scenarios(baselines.back().report, compares);
  json list = json::array();
  for (const Baseline& b : baselines) list.push_back(baseline_json(b));
  report["baselines"] = std::move(list);
  report["trend_summary"] = trend_summary_of(report);
}

std::string trend_label(const json& trend) {
  const std::string mark = has_string(trend, "mark") ? trend["mark"].get<std::string>() : "";
  const std::string since = has_string(trend, "since") ? trend["since"].get<std::string>() : "?";
  if (mark == "new") return "new failure";
  if (mark == "still-failing") return "still failing since " + since;
  if (mark == "gone") return "gone (failing since " + since + ", not in this compare)";
  return mark;
}

std::string trend_summary_text(const json& report, bool counts_only) {
  if (!report.contains("trend_summary") || !report.contains("baselines") || report["baselines"].empty()) return "";
  return counts_line(report) + (counts_only ? "" : marked_lines(report));
}

}  // namespace parity
