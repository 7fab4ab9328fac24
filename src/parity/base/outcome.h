// The vocabulary every layer shares: exit codes, check names, statuses (and which fail), policies, outcome types.
// Python holds the same tables (parity._scenario CHECKS/POLICIES, parity.backend DECLARABLE_CHECKS,
// parity.html_report); tests/vocabulary_test.py proves they agree with these.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace parity {

/// Exit codes every subcommand uses; scripts rely on them. kExitNoTests is pytest's "no tests collected": a
/// selection (paths, --only, -k) of no scenario at all.
enum ExitCode : int { kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitNoTests = 5, kExitInterrupted = 130 };

/// Every check compare runs, a public contract (README "Checks", docs/report-json.md).
inline constexpr std::string_view kChecks[] = {
    "structure", "shape",      "dtype",    "layout", "strides",   "writeable", "type",    "attrs",
    "values",    "uncompared", "fidelity", "pickle", "assert_eq", "serialize", "missing", "error"};
/// The checks a candidate backend may declare as a known difference (its DIFFERENCES): all but fidelity (parity's
/// own codec changed an output) and missing (a run lacks the scenario), which no backend behaviour explains.
inline constexpr std::string_view kDeclarableChecks[] = {"structure", "type",      "shape",     "dtype",      "layout",
                                                         "strides",   "writeable", "values",    "uncompared", "attrs",
                                                         "pickle",    "assert_eq", "serialize", "error"};

/// A scenario's status in a compare, in the order its summary counts them (timeout only when one timed out).
inline constexpr std::string_view kStatuses[] = {"pass", "fail", "error", "xfail", "xpass", "skip", "timeout"};
/// The compare statuses that fail a compare (exit 1).
inline constexpr std::string_view kFailingStatuses[] = {"fail", "error", "xpass", "timeout"};
/// A scenario's status in a run's manifest: ok where compare says pass; crash and timeout when its worker died
/// or was stopped.
inline constexpr std::string_view kRunStatuses[] = {"ok", "error", "skip", "xfail", "xpass", "crash", "timeout"};
/// The run statuses that fail a run (`parity run` exits 1).
inline constexpr std::string_view kFailingRunStatuses[] = {"error", "xpass", "crash", "timeout"};

/// Whether `word` is one of `list`.
constexpr bool listed(std::span<const std::string_view> list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}
/// Whether each of `words` is one of `list`: tables keyed by status (the terminal's rows, JUnit's elements) hold
/// this in a static_assert, so that a status added to the lists above cannot be missing there.
constexpr bool lists_all(std::span<const std::string_view> list, std::span<const std::string_view> words) {
  return std::all_of(words.begin(), words.end(), [list](std::string_view word) { return listed(list, word); });
}
/// The compare statuses worst first, the order a report ranks its scenarios by (the HTML report's STATUS_ORDER).
inline constexpr std::string_view kStatusesWorstFirst[] = {"fail",  "error", "timeout", "xpass",
                                                           "xfail", "skip",  "pass"};
static_assert(std::size(kStatusesWorstFirst) == std::size(kStatuses) && lists_all(kStatusesWorstFirst, kStatuses),
              "kStatusesWorstFirst ranks every compare status once");
/// Whether a compare status fails a compare.
constexpr bool is_failing_status(std::string_view status) { return listed(kFailingStatuses, status); }
/// Whether a run status fails a run.
constexpr bool is_failing_run_status(std::string_view status) { return listed(kFailingRunStatuses, status); }

/// One comparison policy (README "Policies"): its name (`--NAME-policy`, a scenario's `policy={NAME: ...}`), the
/// values it takes (its default first) and what it governs, for --help.
struct PolicyVocabulary {
  std::string_view name;
  std::span<const std::string_view> values;
  std::string_view help;
};

namespace policy_values {
inline constexpr std::string_view kDtype[] = {"exact", "native-order-ok", "kind"};
inline constexpr std::string_view kLayout[] = {"contiguity", "strides", "ignore"};
inline constexpr std::string_view kType[] = {"exact-or-mapped", "subclass-ok", "ignore"};
inline constexpr std::string_view kExactOrIgnore[] = {"exact", "ignore"};
inline constexpr std::string_view kScalar[] = {"exact", "0d-ok"};
inline constexpr std::string_view kOrder[] = {"exact", "sorted"};
inline constexpr std::string_view kIndex[] = {"exact", "equivalent"};
}  // namespace policy_values

/// Every policy, in the order reports and --help list them.
inline constexpr PolicyVocabulary kPolicies[] = {
    {"dtype", policy_values::kDtype, "dtype check"},
    {"layout", policy_values::kLayout, "layout checks (strides: also exact strides)"},
    {"type", policy_values::kType, "type check"},
    {"writeable", policy_values::kExactOrIgnore, "writeable flag check"},
    {"scalar", policy_values::kScalar, "whether a 0-d array may stand for a NumPy scalar and back"},
    {"order", policy_values::kOrder,
     "set-like results (unique values, groupby(sort=False)): sorted compares them after sorting"},
    {"index", policy_values::kIndex,
     "pandas index and column types: equivalent lets RangeIndex stand for an integer Index"},
    {"names", policy_values::kExactOrIgnore, "pandas index, column and Series names"}};

/// The default value of policy `name` (a compile error when used in a constant expression with an unknown name).
constexpr std::string_view policy_default(std::string_view name) {
  for (const PolicyVocabulary& policy : kPolicies)
    if (policy.name == name) return policy.values.front();
  throw std::invalid_argument("unknown policy");  // in a constant expression: a compile error
}

/// How many scenarios have each status: pass, fail, error, xfail, xpass and skip always present (0 when none),
/// timeout when some scenario timed out.
std::map<std::string, int> count_statuses(const std::vector<std::string>& statuses);
/// Whether counts like count_statuses' fail a compare: any of kFailingStatuses.
bool failing_counts(const std::map<std::string, int>& counts);

/// One check at one place; `check` is one of kChecks.
struct Check {
  std::string check;
  bool ok = false;
  std::string path;                                   ///< e.g. "outputs['ab'][2]"; "outputs" for passed-check summaries
  std::string message;                                ///< what differs, for people; empty for passes
  nlohmann::json details = nlohmann::json::object();  ///< the same facts, for programs
};

/// A check compare did not run for one side of a scenario because running it would mean trusting the results
/// directory: its backend is not one the user trusts, its scenario module (whose reducers its outputs need) is not in
/// a scenario directory the user trusts, or its pickle does not carry the user's MAC (README, "Safety: what parity
/// trusts"); or the pickle check, which has no verdict where gold's own pickle raises when unpickled (probes.cc).
/// Reported, never counted as a pass or a failure.
struct SkippedCheck {
  std::string check;  ///< fidelity, attrs or pickle
  std::string side;   ///< gold or candidate
  /// untrusted-backend, untrusted-scenarios, unverified-pickle or unjudged-pickle: what notices group by
  std::string kind;
  std::string reason;  ///< why, and what would make compare run it
};

/// How much of a scenario's outputs each check reached. A leaf is a position of the compared pair that is no
/// container: an array, a number, a str, an object without parts; the parts of a reduced object compared part by
/// part (outputs['q'].magnitude) and the elements of an object array are leaves of their own, their owner is not.
/// A leaf on one side only (a dict key, a sequence's tail) counts too: no check covers it but `structure`.
struct Coverage {
  std::int64_t leaves = 0;
  std::map<std::string, std::int64_t> checks;  ///< check -> leaves it passed or failed at
  nlohmann::json to_json() const { return {{"leaves", leaves}, {"checks", checks}}; }
};

/// One scenario's verdict: one of kStatuses (timeout when comparing it took longer than CompareOptions::timeout).
struct ScenarioOutcome {
  std::string id, status;
  std::string message;                ///< one line on the verdict for people; never the repro, which is `repro`
  std::vector<Check> checks;          ///< failures first, then one summary per check that passed
  std::vector<SkippedCheck> skipped;  ///< checks not run for trust, or without a verdict (SkippedCheck)
  nlohmann::json meta;                ///< module, function, params, tags, rtol, atol, tolerances, policy, xfail, source
  nlohmann::json policy;  ///< the policies the outputs were compared under (null when they were not compared)
  std::optional<Coverage> coverage;  ///< what each check covered, when the outputs were compared
  double gold_seconds = 0, candidate_seconds = 0, compare_seconds = 0;
  /// A shell command that re-runs the scenario on both backends and compares it; the terminal, JUnit and HTML show
  /// it beside a failure (no check's message carries it).
  std::string repro;
};

/// Something about the whole compare that a reader must not miss (stderr, the JSON's `notices`, JUnit, HTML).
struct Notice {
  std::string kind;     ///< changed-differences or recorded-differences (docs/report-json.md)
  std::string message;  ///< for people
};

}  // namespace parity
