// Private to compare's parts: small helpers several of them share, and how a scenario's policy is resolved.
#pragma once

#include <pybind11/pytypes.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "compare.h"

namespace parity {

/// `v` as printf's "%.6g" writes it.
std::string fmt_g(double v);
/// str(obj).
std::string py_str(pybind11::handle obj);
/// A JSON value as the Python object json.loads makes of it.
pybind11::object to_py(const nlohmann::json& value);
/// A JSON-able Python object (an error record, a failure's details, DIFFERENCES) as JSON, through Python's own json
/// module (parity._scenario.json_text, which keeps lone surrogates from making invalid UTF-8).
nlohmann::json from_py(pybind11::handle value);

/// Whether the run chose policy `spec`: its flag was given, or its value is not the default (set by a caller).
bool run_chose(const PolicyChoice& policy, const std::set<std::string>& given, const PolicySpec& spec);
/// The scenario's policies (README "Policies"): the defaults, under the candidate backend's POLICY, under the run's
/// --NAME-policy flags that were given (or differ from the default), under the scenario's own policy=. Throws
/// std::invalid_argument for a value parity does not know (a hand-edited or newer manifest).
Policy policy_for(const Manifest& gold, const Manifest& candidate, const nlohmann::json& meta,
                  const CompareOptions& options);

}  // namespace parity
