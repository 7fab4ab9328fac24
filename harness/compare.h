// `parity compare`: checks every output leaf of two results directories and decides each scenario's status.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codec.h"
#include "manifest.h"
#include "values.h"

namespace parity {

/// One check at one place. Check names are a public contract (README, docs/report-json.md):
/// structure, shape, dtype, layout, writeable, type, attrs, values, fidelity, pickle, serialize, missing, error.
struct Check {
  std::string check;
  bool ok = false;
  std::string path;                                   ///< e.g. "outputs['ab'][2]"; "outputs" for passed-check summaries
  std::string message;                                ///< what differs, for people; empty for passes
  nlohmann::json details = nlohmann::json::object();  ///< the same facts, for programs
};

/// How two output trees are compared.
struct Policy {
  Tolerance tolerance;
  std::map<std::string, std::string> type_map;  ///< gold type -> candidate type expected in its place
  std::string gold_name = "gold", candidate_name = "candidate";
};

/// Failed checks, and how many leaves passed each check.
struct CheckList {
  std::vector<Check> failures;
  std::map<std::string, std::int64_t> passed;
  void pass(const std::string& check) { ++passed[check]; }
};

/// Compares two decoded output trees leaf by leaf.
CheckList compare_outputs(const Node& gold, const Node& candidate, const Policy& policy);

/// One scenario's verdict: pass, fail, error, xfail, xpass or skip.
struct ScenarioOutcome {
  std::string id, status, message;
  std::vector<Check> checks;  ///< failures first, then one summary per check that passed
  nlohmann::json meta;        ///< module, function, params, tags, rtol, atol, xfail, source
  double gold_seconds = 0, candidate_seconds = 0, compare_seconds = 0;
  std::string repro;
};

struct CompareReport {
  const Manifest* gold = nullptr;
  const Manifest* candidate = nullptr;
  std::vector<ScenarioOutcome> scenarios;
  double seconds = 0;
  std::string started;
  std::map<std::string, int> counts() const;
  bool failed() const;  ///< any fail, error or xpass
};

struct CompareOptions {
  std::string program = "parity";  ///< how the repro command invokes parity
  std::vector<std::string> only;   ///< restrict to these ids
  bool pickle_probe = true;        ///< unpickle the stored pickles (runs code from them: trusted results only)
};

/// Compares every scenario of the two runs (the union of their ids).
CompareReport compare_runs(const Manifest& gold, const Manifest& candidate, const CompareOptions& options);

/// A shell command that re-runs one scenario on both backends and compares it.
std::string repro_command(const std::string& program, const Manifest& gold, const Manifest& candidate,
                          const std::string& id, const nlohmann::json& meta);

}  // namespace parity
