// The verdict of a scenario whose outputs were compared, from its list of checks (for parity._core, src/parity/api).
#pragma once

#include "compare.h"

namespace parity {

/// Records `list` into `out` as compare records outputs it compared: status pass when no check failed, else fail; the
/// failures first, then one entry per check that passed with the leaves it covered (details {"leaves": n}); the checks
/// skipped for trust; the coverage; and, when `out` has no message yet, "failed checks: dtype, values".
void record_checks(CheckList list, ScenarioOutcome& out);

}  // namespace parity
