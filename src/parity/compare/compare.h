// `parity compare`: checks every output leaf of two results directories and decides each scenario's status.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codec.h"
#include "differences.h"
#include "manifest.h"
#include "policies.h"
#include "repro.h"
#include "shard.h"
#include "values.h"

namespace parity {

/// One check at one place. Check names are a public contract (README, docs/report-json.md):
/// structure, shape, dtype, layout, strides, writeable, type, attrs, values, uncompared, fidelity, pickle,
/// assert_eq, serialize, missing, error.
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
/// trusts"). Reported, never counted as a pass or a failure.
struct SkippedCheck {
  std::string check;   ///< fidelity, attrs or pickle
  std::string side;    ///< gold or candidate
  std::string kind;    ///< untrusted-backend, untrusted-scenarios or unverified-pickle: what notices group by
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

/// "values covered 2 of 5 leaves" when `values` covered fewer leaves than the report's `coverage` JSON counts
/// ({"leaves", "checks"}, as Coverage::to_json writes it), else "" (also for null or malformed coverage).
std::string coverage_note(const nlohmann::json& coverage);

/// Failed checks, how many leaves passed each check, and the checks skipped for trust.
struct CheckList {
  std::vector<Check> failures;
  std::map<std::string, std::int64_t> passed;
  std::vector<SkippedCheck> skipped;
  Coverage coverage;  ///< of the outputs' walk (compare_outputs); probes add nothing
  void pass(const std::string& check) { ++passed[check]; }
};

/// Compares two decoded output trees leaf by leaf. A per-path tolerance that applied to no values compared is an
/// `error` check at that path (a misspelt path would otherwise loosen nothing, silently).
CheckList compare_outputs(const Node& gold, const Node& candidate, const Policy& policy);

/// One scenario's verdict: pass, fail, error, xfail, xpass or skip; timeout when comparing it took longer than
/// CompareOptions::timeout.
struct ScenarioOutcome {
  std::string id, status, message;
  std::vector<Check> checks;  ///< failures first, then one summary per check that passed
  std::vector<SkippedCheck> skipped;  ///< checks not run because they would trust the results directory
  nlohmann::json meta;        ///< module, function, params, tags, rtol, atol, tolerances, policy, xfail, source
  nlohmann::json policy;      ///< the policies the outputs were compared under (null when they were not compared)
  std::optional<Coverage> coverage;  ///< what each check covered, when the outputs were compared
  double gold_seconds = 0, candidate_seconds = 0, compare_seconds = 0;
  std::string repro;
};

/// How many scenarios have each status: pass, fail, error, xfail, xpass and skip always present (0 when none),
/// timeout when some scenario timed out.
std::map<std::string, int> count_statuses(const std::vector<std::string>& statuses);
/// Whether counts like count_statuses' fail a compare: any fail, error, xpass or timeout.
bool failing_counts(const std::map<std::string, int>& counts);

/// Something about the whole compare that a reader must not miss (stderr, the JSON's `notices`, JUnit, HTML).
struct Notice {
  std::string kind;     ///< changed-differences or recorded-differences (docs/report-json.md)
  std::string message;  ///< for people
};

struct CompareReport {
  const Manifest* gold = nullptr;
  const Manifest* candidate = nullptr;
  std::vector<ScenarioOutcome> scenarios;
  double seconds = 0;
  std::string started;
  PolicyChoice policy;                  ///< the run's policies (--dtype-policy, ...)
  /// What the candidate backend declares: its DIFFERENCES now when compare loaded it (built-in or trusted), else
  /// those its manifest recorded at run time.
  std::vector<Difference> differences;
  std::vector<Notice> notices;          ///< e.g. the backend's DIFFERENCES changed since the run
  bool strict_differences = false;      ///< a declaration that explained nothing fails the run
  std::optional<ShardPlan> shard;       ///< the shard compared (CompareOptions::shard), recorded in the report
  std::map<std::string, int> counts() const;
  /// The ids of declarations that explained no failed check in this run.
  std::vector<std::string> stale_differences() const;
  bool failed() const;  ///< any fail, error or xpass, or under strict_differences a stale declaration
};

struct CompareOptions {
  std::string program = "parity";  ///< how the repro command invokes parity
  std::vector<std::string> only;   ///< restrict to these ids
  bool pickle_probe = true;        ///< unpickle the stored pickles whose MAC verifies with the user's key
  /// Backend specs the user trusts (--trust-backend; PARITY_TRUST_BACKENDS adds more): compare may import them for
  /// their reducers. Built-in backends are trusted by name; a spec a manifest names is never imported.
  std::vector<std::string> trusted_backends;
  /// Scenario directories the user trusts (--scenarios; PARITY_TRUST_SCENARIOS adds more, and the bundled corpus is
  /// trusted): compare imports the one holding a scenario's module for its reducers when its outputs need them.
  std::vector<std::string> trusted_scenarios;
  /// Set by compare_runs: side ("gold", "candidate") -> why its backend's reducers are not loaded (absent: loaded).
  std::map<std::string, std::string> untrusted;
  PolicyChoice policy;             ///< the run's policies; a scenario's own `policy` overrides them
  /// The --NAME-policy flags given on the command line: they (and any value not the default) win over the candidate
  /// backend's POLICY; the others leave it in force.
  std::set<std::string> policies_given;
  ReadLimits limits;               ///< what one result file may expand to in memory (--max-result-memory)
  double timeout = 0;              ///< seconds one scenario's compare may take (--timeout); 0: no limit
  /// The candidate's declared differences must each explain something (a whole-corpus run: stale ones fail it).
  bool strict_differences = false;
  /// Compare only this shard's scenarios (compare_shard_plan, shard.h); nullopt: all of them.
  std::optional<ShardPlan> shard;
  /// Called before each scenario is compared: its id, its 0-based position and how many will be compared.
  std::function<void(const std::string& id, std::size_t index, std::size_t total)> on_start;
  /// Called with each scenario's verdict as soon as it is known (a progress display; compare_runs returns them all).
  std::function<void(const ScenarioOutcome&)> on_outcome;
};

/// The ids compare_runs compares, in its order: the union of both runs' ids (gold's first), narrowed to `only`.
std::vector<std::string> compared_ids(const Manifest& gold, const Manifest& candidate,
                                      const std::vector<std::string>& only);

/// compared_ids(gold, candidate, options.only), narrowed to the ids of options.shard when it is set.
std::vector<std::string> ids_to_compare(const Manifest& gold, const Manifest& candidate, const CompareOptions& options);

/// Compares every scenario of ids_to_compare(gold, candidate, options), calling the options' hooks around each. Throws
/// DifferenceError (before comparing anything) when the candidate manifest's declared differences are malformed.
CompareReport compare_runs(const Manifest& gold, const Manifest& candidate, const CompareOptions& options);

}  // namespace parity
