// What `parity run` and `parity compare` print while they work: a live status line on a terminal, one line per
// scenario elsewhere, and the summary table they both end with.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compare.h"
#include "manifest.h"

namespace parity {

/// How finished scenarios are shown: a status line redrawn in place (a terminal), or one line each (logs, pipes).
enum class Display { kLive, kLines };

/// How much is shown (--quiet, neither, --verbose).
enum class Verbosity { kQuiet, kNormal, kVerbose };

/// kLive when `out` is a terminal and TERM names one that can erase a line (set, and not "dumb"); else kLines.
Display display_for(std::FILE* out);

/// The width of the terminal `out` writes to; 0 when it is not a terminal or does not say.
int terminal_columns(std::FILE* out);

/// One finished scenario as the terminal shows it; to_shown() builds it from a run record or a compare outcome.
struct ShownScenario {
  std::string id;
  std::string status;  ///< run: ok, error, xfail, xpass, skip; compare: pass, fail, error, xfail, xpass, skip
  double seconds = 0;
  std::vector<std::string> failed_checks;    ///< names of the checks that failed, each once, in report order
  std::string note;                          ///< one line on the outcome; empty: the line names failed_checks
  std::vector<std::string> details;          ///< what differs (may span lines); shown for failures unless quiet
  std::vector<std::string> verbose_details;  ///< tracebacks, the checks that passed; shown only when verbose
};

/// A run's record: the error's type and message, its traceback for --verbose.
ShownScenario to_shown(const ScenarioRecord& record);
/// A compare outcome: every failed check's message; the checks that passed when `verbose` (--verbose shows them;
/// naming them cost the parent of a `compare --jobs` ~37k instructions a scenario, on the cores its children use).
ShownScenario to_shown(const ScenarioOutcome& outcome, bool verbose = true);

/// Something a command wrote, listed at the end of its summary.
struct WrittenReport {
  std::string label;  ///< e.g. "results", "JSON report"
  std::string path;
};

struct ProgressOptions {
  std::string verb;       ///< "run" or "compare"; the summary starts "parity <verb>:"
  std::size_t total = 0;  ///< how many scenarios will end
  Display display = Display::kLines;
  Verbosity verbosity = Verbosity::kNormal;
  int columns = 0;                ///< the live line is cut to fit a terminal this wide; 0: never cut
  std::function<double()> clock;  ///< seconds on a monotonic clock; empty: std::chrono::steady_clock
};

/// Options for a Progress writing to `out`: the display and the width come from the terminal, if `out` is one.
ProgressOptions progress_options(std::FILE* out, std::string verb, std::size_t total, Verbosity verbosity);

/// The per-scenario and summary output of one `run` or `compare`, written to one FILE (stderr).
///
/// Statuses fail, error and xpass are failures: they are always shown, with their details unless quiet. Live
/// display redraws one status line (`[ 37/104] 2 failed, 1 error | id | 0:03 elapsed, ETA 0:12`) at most ten times
/// a second and prints scenario lines above it; --quiet drops the live line and every line but the failures'.
class Progress {
 public:
  Progress(std::FILE* out, ProgressOptions options);
  ~Progress();  ///< erases a live line still drawn, so that whatever is printed next starts clean
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A scenario starts: the live line names it.
  void begin(const std::string& id);
  /// A scenario finished: counts it and shows it as the display and verbosity ask.
  void end(const ShownScenario& scenario);
  /// Erases the live line and prints the counts by status, the failures by check, the total time and `written`.
  void summary(const std::vector<WrittenReport>& written);

 private:
  bool shows_line(const std::string& status) const;
  void print_scenario(const ShownScenario& scenario);
  void print_tables() const;
  std::string live_text(double now) const;
  void draw(double now);
  void erase();
  double now() const { return options_.clock(); }

  std::FILE* out_;
  ProgressOptions options_;
  bool live_;  ///< a live line is kept (live display, not quiet)
  double started_;
  double last_draw_;
  bool drawn_ = false;  ///< the live line is on the screen
  std::size_t done_ = 0;
  std::string current_;
  std::map<std::string, int> by_status_;
  std::map<std::string, int> failures_by_check_;  ///< how many failed scenarios failed each check
};

/// A duration as a clock shows it: m:ss, or h:mm:ss from an hour on.
std::string clock_text(double seconds);

}  // namespace parity
