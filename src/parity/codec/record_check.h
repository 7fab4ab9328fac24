// Type checks of the scenario record fields compare and the reports read, so a mistyped field is that scenario's
// error naming it, never an exception that ends the compare.
#pragma once

#include <string>

#include "manifest.h"

namespace parity {

/// The first field of `record` whose type compare cannot use, as "meta.rtol is a string, not a number" (the path
/// from the scenario's entry in the manifest); "" when every field compare reads has a usable type. Checked: meta and
/// what compare and the reports read of it (module, function, source, params, tags, rtol, atol, tolerances,
/// signed_zeros, policy, xfail, xfail_strict, kind, assert_eq), error, pickle_error and fidelity. Values are not judged
/// here: an unknown policy value is the policy's own error.
std::string malformed_field(const ScenarioRecord& record);

}  // namespace parity
