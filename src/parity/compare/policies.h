// The comparison policies (README "Policies") and the tolerances a scenario sets: what compare is told to relax.
#pragma once

#include <pybind11/pytypes.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "outcome.h"
#include "values.h"

namespace parity {

/// The policies a compare runs under, one field per policy of kPolicies (outcome.h: the names, the values each
/// takes, its default first); each field starts at its default.
struct PolicyChoice {
  std::string dtype{policy_default("dtype")};          ///< the dtype check
  std::string layout{policy_default("layout")};        ///< the layout checks
  std::string type{policy_default("type")};            ///< the type check
  std::string writeable{policy_default("writeable")};  ///< the writeable flag check
  std::string scalar{policy_default("scalar")};        ///< whether a 0-d array may stand for a NumPy scalar
  std::string order{policy_default("order")};          ///< whether set-like results are compared after sorting
  std::string index{policy_default("index")};          ///< pandas index/column types
  std::string names{policy_default("names")};          ///< pandas index, column and Series names
  /// Sets `name` (one of kPolicies' names) to `value`; throws std::invalid_argument naming both when either is
  /// unknown.
  void set(const std::string& name, const std::string& value);
  /// The value of policy `name`; throws std::invalid_argument for an unknown name.
  const std::string& get(const std::string& name) const;
  /// The values policy `name` takes, its default first; throws std::invalid_argument for an unknown name.
  static const std::vector<std::string>& values(const std::string& name);
  /// {name: value} for every policy, in kPolicies' order (what reports record as `policy`).
  nlohmann::json to_json() const;
};

/// One policy of kPolicies with the PolicyChoice field that stores it.
struct PolicySpec {
  const char* name;
  std::string PolicyChoice::*member;
  std::vector<std::string> values;
  const char* help;
};
/// Every policy, in kPolicies' order (the order reports and --help list them).
const std::vector<PolicySpec>& policy_specs();

/// Tolerances a scenario sets; an absent value falls back to the per-dtype default (values.h).
struct ToleranceOverride {
  std::optional<double> rtol, atol;
};

/// How two output trees are compared.
struct Policy {
  ToleranceOverride tolerance;                       ///< for every output
  std::map<std::string, ToleranceOverride> by_path;  ///< for an output path and everything under it
  bool signed_zeros = false;
  PolicyChoice choice;
  std::map<std::string, std::string> type_map;  ///< gold type -> candidate type expected in its place
  std::string gold_name = "gold", candidate_name = "candidate";

  /// The tolerance for values at `path`: the per-dtype default of the less precise side, then the scenario's
  /// override, then the longest matching path's (its key goes to `matched`, when given).
  Tolerance tolerance_for(const std::string& path, pybind11::handle gold_dtype, pybind11::handle candidate_dtype,
                          std::string* matched = nullptr) const;
};

}  // namespace parity
