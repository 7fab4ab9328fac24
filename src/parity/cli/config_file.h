// Defaults for list, run, compare and check from [tool.parity] or a parity.toml (README, "Configuration").
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace parity {

/// What --config FILE and --no-config asked for.
struct ConfigFileArgs {
  std::string file;   ///< --config FILE: this file, no search
  bool none = false;  ///< --no-config: no file at all
};

/// Adds --config FILE and --no-config to each command that reads a configuration file.
void add_config_flags(const std::vector<CLI::App*>& commands, ConfigFileArgs& args);

/// The configuration file that applies from `start`: --config's file, or the nearest directory from `start` upwards
/// holding a parity.toml, or else a pyproject.toml with a [tool.parity] table; a directory holding a manifest.json
/// (a results directory: data, never configuration) is passed over. Empty when there is none or with --no-config.
std::string find_config_file(const std::string& start, const ConfigFileArgs& args);

/// After the command line is parsed: gives each option of the parsed subcommand that the command line left unset
/// the configuration file's value, checked by that option's own validators, and says on stderr which file was read
/// (unless -q). Returns kExitOk, or kExitUsage after printing what is wrong (unknown key, wrong type, bad value,
/// malformed TOML) naming the key and the file.
int apply_config_file(CLI::App& app, const ConfigFileArgs& args);

}  // namespace parity
