// The report files a command is asked for (JSON, JUnit, HTML), all rendered from one compare JSON, with the trends
// against earlier compares marked in it: what compare, report and merge write.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare_results.h"
#include "progress.h"
#include "trends.h"

namespace parity {

/// Where the reports go; an empty path is a report not asked for.
struct ReportPaths {
  std::string json, junit, html;
};

/// Why the reports asked for cannot be written, found before any work ("" when they can): a destination that is a
/// directory or whose directory does not exist, two reports naming one file, or a report naming a file the command
/// reads (`inputs`: its compare JSON, baselines, shard JSONs), which it would overwrite. Each is named by its flag.
/// A device, FIFO or socket may take more than one report (/dev/null); links are followed (write_named_file).
/// `created`: a directory the command makes before it writes the reports (a check's --out), so a report there is no
/// missing directory.
std::string report_paths_problem(const ReportPaths& paths, const std::vector<std::string>& inputs,
                                 const std::string& created = "");

/// Writes every report asked for from the one JSON document, so each report shows the same facts; adds each to
/// `written` once it is on disk (a failure later still lists the ones before it). Throws std::runtime_error.
void write_reports(const nlohmann::json& report, const ReportPaths& paths, std::vector<WrittenReport>& written);

/// `parity report` and `parity merge`: marks in a compare JSON (read back or merged) the trends against the compare
/// JSONs `baselines` names, writes the reports asked for and prints "parity <verb>: wrote ..." for each. Throws
/// ReportJsonError for a baseline that cannot serve, std::exception for what cannot be written.
void write_reports_with_trends(nlohmann::json& report, const ReportPaths& paths,
                               const std::vector<std::string>& baselines, const char* verb);

/// `parity compare`'s reports (compare_results.h): the baselines read before comparing, the JSON document rendered
/// with its trends into every report asked for, then the trends, stale declared differences and notices printed.
class CompareReportWriter : public CompareReporter {
 public:
  CompareReportWriter(ReportPaths paths, std::vector<std::string> baseline_files)
      : paths_(std::move(paths)), baseline_files_(std::move(baseline_files)) {}
  std::string prepare(const Manifest& candidate) override;
  void outcome(const ScenarioOutcome& scenario) override;
  void write(const CompareReport& report, std::vector<WrittenReport>& written) override;
  void tell(const CompareReport& report, Verbosity verbosity) override;

 private:
  ReportPaths paths_;
  std::vector<std::string> baseline_files_;
  std::vector<Baseline> baselines_;
  /// scenario_to_json of each outcome as it was decided: rendered while a `compare --jobs` parent waits for its
  /// children, they were a third of what it did after the last one (issue #20, target 3)
  nlohmann::json scenarios_ = nlohmann::json::array();
  nlohmann::json document_;  ///< the report as JSON, trends included, once written
};

}  // namespace parity
