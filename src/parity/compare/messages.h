// compare's messages and details for people and programs: array facts, value reports, a run's error.
#pragma once

#include <pybind11/pytypes.h>

#include <nlohmann/json.hpp>
#include <string>

#include "codec.h"
#include "manifest.h"
#include "policies.h"
#include "values.h"

namespace parity {

/// An array's shape as Python prints it: "(2, 3)".
std::string shape_text(pybind11::handle array);
/// "<f8 (little-endian float64)".
std::string dtype_text(pybind11::handle array);
/// "C-contiguous, strides (24, 8)".
std::string layout_text(pybind11::handle array);
/// What the layout-class checks look at, for one side (`node`: the array's decoded node).
nlohmann::json array_facts(pybind11::handle array, const Node& node);
/// Both sides' array_facts side by side, one row per fact.
std::string facts_table(const nlohmann::json& gold, const nlohmann::json& candidate, const std::string& gold_name,
                        const std::string& candidate_name);
/// A failed values comparison in numpy.testing's layout, plus NaN/inf locations and the largest differences.
std::string values_message(const ValueReport& r, const Tolerance& t, const Policy& p);
/// The same facts as values_message, for programs.
nlohmann::json values_details(const ValueReport& r, const Tolerance& t);
/// "TYPE: MESSAGE" of an error record.
std::string error_summary(const nlohmann::json& error);
/// What side `side`'s run says went wrong (raised, crashed, timed out), with its traceback.
std::string error_text(const std::string& side, const ScenarioRecord& r);

}  // namespace parity
