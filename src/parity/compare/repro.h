// The shell commands a failure's repro is made of: re-run one scenario on both backends, then compare it.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "manifest.h"
#include "policies.h"

namespace parity {

struct CompareOptions;  // compare.h

/// `PROGRAM run --backend SPEC`, with `--role ROLE` when the backend's recorded role is not its default one: the start
/// of a command that runs a manifest's `backend` again, every word quoted (shell_quote, text.h).
std::string run_command(const std::string& program, const nlohmann::json& backend);
/// The compare flags that set `policy` (" --dtype-policy kind", ...), "" for the defaults; a policy named in `given`
/// gets its flag even at its default (it overrides a backend's POLICY).
std::string policy_flags(const PolicyChoice& policy, const std::set<std::string>& given = {});

/// A shell command that re-runs one scenario on both backends and compares it.
std::string repro_command(const CompareOptions& options, const Manifest& gold, const Manifest& candidate,
                          const std::string& id, const nlohmann::json& meta);

}  // namespace parity
