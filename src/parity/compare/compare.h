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
#include "outcome.h"
#include "policies.h"
#include "repro.h"
#include "shard.h"
#include "values.h"

namespace parity {

/// "values covered 2 of 5 leaves" when `values` covered fewer leaves than the report's `coverage` JSON counts
/// ({"leaves", "checks"}, as Coverage::to_json writes it), else "" (also for null or malformed coverage).
std::string coverage_note(const nlohmann::json& coverage);

/// Failed checks, how many leaves passed each check, and the checks skipped (for trust, or without a verdict).
struct CheckList {
  std::vector<Check> failures;
  std::map<std::string, std::int64_t> passed;
  std::vector<SkippedCheck> skipped;
  Coverage coverage;  ///< of the outputs' walk (compare_outputs); probes add nothing
  void pass(const std::string& check) { ++passed[check]; }
};

/// Compares two decoded output trees leaf by leaf. A per-path tolerance that applied to no values compared is an
/// `error` check at that path (a misspelt path would otherwise loosen nothing, silently). `taps`: the fidelity
/// digests' hashers the values kernel feeds as it reads the arrays (DigestTaps), if any.
CheckList compare_outputs(const Node& gold, const Node& candidate, const Policy& policy,
                          const DigestTaps* taps = nullptr);

struct CompareReport {
  const Manifest* gold = nullptr;
  const Manifest* candidate = nullptr;
  std::vector<ScenarioOutcome> scenarios;
  double seconds = 0;
  std::string started;
  PolicyChoice policy;  ///< the run's policies (--dtype-policy, ...)
  /// What the candidate backend declares: its DIFFERENCES now when compare loaded it (built-in or trusted), else
  /// those its manifest recorded at run time.
  std::vector<Difference> differences;
  std::vector<Notice> notices;      ///< e.g. the backend's DIFFERENCES changed since the run
  bool strict_differences = false;  ///< a declaration that explained nothing fails the run
  std::optional<ShardPlan> shard;   ///< the shard compared (CompareOptions::shard), recorded in the report
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
  PolicyChoice policy;  ///< the run's policies; a scenario's own `policy` overrides them
  /// The --NAME-policy flags given on the command line: they (and any value not the default) win over the candidate
  /// backend's POLICY; the others leave it in force.
  std::set<std::string> policies_given;
  ReadLimits limits;   ///< what one result file may expand to in memory (--max-result-memory)
  double timeout = 0;  ///< seconds one scenario's compare may take (--timeout); 0: no limit
  /// The candidate's declared differences must each explain something (a whole-corpus run: stale ones fail it).
  bool strict_differences = false;
  /// Processes comparing at once (--jobs): forked from this one once it is set up (fan_out.h); the report is the same.
  int jobs = 1;
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

/// What compare_runs loads before its first scenario, done ahead of it: the backends' reducers, gold's then the
/// candidate's (each `backend` object as its run's manifest records it, or the {spec, role} its run will record), and
/// the probes' module, where a second load is then a lookup. `parity check` calls it on the core its faster run left
/// idle (check.cc); compare_runs loads each again from the manifests, which decide.
void warm_compare(const nlohmann::json& gold_backend, const nlohmann::json& candidate_backend,
                  const CompareOptions& options);

}  // namespace parity
