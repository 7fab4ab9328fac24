// The vocabulary every layer shares: exit codes, and (as they move here) statuses, checks and policies.
#pragma once

namespace parity {

/// Exit codes every subcommand uses; scripts rely on them. kExitNoTests is pytest's "no tests collected": a
/// selection (paths, --only, -k) of no scenario at all.
enum ExitCode : int { kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitNoTests = 5, kExitInterrupted = 130 };

}  // namespace parity
