// Reads [tool.parity] (or a parity.toml) with Python's tomllib and hands its values to the command line's options.
#include "config_file.h"

#include <pybind11/embed.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <system_error>

#include "compare.h"
#include "interpreter.h"
#include "outcome.h"
#include "safe_file.h"
#include "text.h"

namespace fs = std::filesystem;
namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// What a key's value must be. Paths are resolved against the configuration file's directory, so the file means the
// same from every working directory; a backend spec is a path only when it looks like one (a name stays a name).
enum class Kind { kPaths, kPath, kSpec, kSpecs, kInt, kNumber, kBool, kString };

struct Key {
  std::string name;  ///< the key, the option's long flag without "--"
  Kind kind;
  std::vector<std::string> commands;  ///< the commands whose option it sets
};

// The options that make sense as a project's defaults (README, "Configuration"); the rest are per invocation.
const std::vector<Key>& keys() {
  static const std::vector<Key> table = [] {
    std::vector<Key> t = {
        {"scenarios", Kind::kPaths, {"list", "run", "compare", "check", "coverage"}},
        {"backend", Kind::kSpec, {"run", "check"}},
        {"jobs", Kind::kInt, {"run", "compare", "check", "coverage"}},
        {"timeout", Kind::kNumber, {"run", "compare", "check", "coverage"}},
        {"max-memory", Kind::kInt, {"run", "check"}},
        {"shard-times", Kind::kPath, {"run", "compare", "check"}},
        {"no-pickle-probe", Kind::kBool, {"run", "compare", "check"}},
        {"json", Kind::kPath, {"compare", "check"}},
        {"junit", Kind::kPath, {"compare", "check"}},
        {"html", Kind::kPath, {"compare", "check"}},
        {"max-result-memory", Kind::kInt, {"compare", "check"}},
        {"strict-differences", Kind::kBool, {"compare", "check"}},
        {"trust-backend", Kind::kSpecs, {"compare", "check"}},
    };
    for (const PolicySpec& spec : policy_specs())
      t.push_back({std::string(spec.name) + "-policy", Kind::kString, {"compare", "check"}});
    return t;
  }();
  return table;
}

const char* const kCommands[] = {"list", "run", "compare", "check", "coverage"};
constexpr const char* kDateMark = "toml date";  // what parity_table makes of a TOML date or time

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_pyproject(const fs::path& file) { return file.filename() == "pyproject.toml"; }

std::string read_text(const fs::path& file) {
  try {
    return read_named_text_file(file);
  } catch (const std::system_error& e) {
    throw ConfigError(file.string() + ": cannot be read (" + e.code().message() + ")");
  } catch (const UnsafeFileError& e) {
    throw ConfigError(e.what());
  }
}

// The file's parity table as JSON (null: a pyproject.toml without [tool.parity]), parsed by tomllib (tomli before
// Python 3.11). A date or time becomes {kDateMark: text}, which every key refuses as a wrong type.
json parity_table(const fs::path& file) {
  const std::string text = read_text(file);
  start_python();  // a run's supervisor needs no NumPy: its workers import it
  try {
    py::dict scope;
    scope["text"] = py::bytes(text);
    scope["pyproject"] = is_pyproject(file);
    py::exec(R"(
try:
    import tomllib
except ImportError:
    import tomli as tomllib
import json
doc = tomllib.loads(text.decode("utf-8"))
if pyproject:
    tool = doc.get("tool")
    doc = tool.get("parity") if isinstance(tool, dict) else None
result = json.dumps(doc, allow_nan=False, default=lambda o: {"toml date": str(o)})
)",
             scope);
    return json::parse(scope["result"].cast<std::string>());
  } catch (const py::error_already_set& e) {
    // The exception alone ("TOMLDecodeError: Invalid statement (at line 4, column 1)"), not the traceback into tomllib.
    throw ConfigError(file.string() + ": not valid TOML: " + py::str(e.type().attr("__name__")).cast<std::string>() +
                      ": " + py::str(e.value()).cast<std::string>());
  }
}

// Whether the text may hold [tool.parity], before the interpreter starts (a pyproject.toml naming a project "parity",
// or parity as a dependency, is no configuration): a [tool.parity...] header, a dotted tool.parity key, or a [tool]
// table or inline tool table with a parity key. tomllib decides.
bool may_have_parity_table(const std::string& text) {
  static const std::regex dotted(R"((^|\n)[ \t]*\[?[ \t]*["']?tool["']?[ \t]*\.[ \t]*["']?parity\b)");
  static const std::regex table(R"((^|\n)[ \t]*\[[ \t]*["']?tool["']?[ \t]*\]|(^|\n)[ \t]*tool[ \t]*=)");
  static const std::regex key(R"((^|\n|\{|,)[ \t]*["']?parity["']?[ \t]*[.=])");
  return std::regex_search(text, dotted) || (std::regex_search(text, table) && std::regex_search(text, key));
}

bool has_parity_table(const fs::path& pyproject) {
  return may_have_parity_table(read_text(pyproject)) && !parity_table(pyproject).is_null();
}

std::string section(const fs::path& file, const std::string& command) {
  const std::string table = std::string(is_pyproject(file) ? "tool.parity" : "") +
                            (command.empty() || !is_pyproject(file) ? "" : ".") + command;
  return table.empty() ? "" : "[" + table + "] ";
}

const char* type_name(const json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a float";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return v.is_object() && v.contains(kDateMark) ? "a date or time" : "a table";
}

std::string resolve(const fs::path& dir, const std::string& path) {
  return path.empty() || fs::path(path).is_absolute() ? path : (dir / path).lexically_normal().string();
}

// The value as the option's words, type-checked and paths resolved; throws ConfigError naming the key and file.
std::vector<std::string> words(const Key& key, const json& value, const fs::path& file, const std::string& where) {
  const fs::path dir = fs::absolute(file).parent_path();
  const auto wrong = [&](const char* wanted) {
    return ConfigError(file.string() + ": " + where + key.name + ": expected " + wanted + ", got " + type_name(value));
  };
  const auto strings = [&](bool as_list, const char* wanted) {
    std::vector<std::string> out;
    if (value.is_string()) out.push_back(value.get<std::string>());
    if (as_list && value.is_array())
      for (const json& item : value) {
        if (!item.is_string()) throw wrong(wanted);
        out.push_back(item.get<std::string>());
      }
    if (out.empty() && !(as_list && value.is_array())) throw wrong(wanted);
    return out;
  };
  switch (key.kind) {
    case Kind::kPaths:
    case Kind::kSpecs:
    case Kind::kPath:
    case Kind::kSpec: {
      const bool list = key.kind == Kind::kPaths || key.kind == Kind::kSpecs;
      std::vector<std::string> out = strings(list, list ? "a string or an array of strings" : "a string");
      for (std::string& s : out)
        if (key.kind == Kind::kPaths || key.kind == Kind::kPath || looks_like_path(s)) s = resolve(dir, s);
      return out;
    }
    case Kind::kString:
      return strings(false, "a string");
    case Kind::kInt:
      if (!value.is_number_integer() && !value.is_number_unsigned()) throw wrong("an integer");
      return {value.dump()};
    case Kind::kNumber:
      if (!value.is_number()) throw wrong("a number");
      return {value.dump()};
    case Kind::kBool:
      if (!value.is_boolean()) throw wrong("a boolean (true or false)");
      return {value.get<bool>() ? "true" : "false"};
  }
  return {};
}

const Key* find_key(const std::string& name) {
  for (const Key& k : keys())
    if (k.name == name) return &k;
  return nullptr;
}

bool takes(const Key& key, const std::string& command) {
  return std::find(key.commands.begin(), key.commands.end(), command) != key.commands.end();
}

// The values that apply to `command`, key by key: the top level's, then its own table's, which win.
std::map<std::string, std::pair<std::vector<std::string>, std::string>> values_for(const json& table,
                                                                                   const fs::path& file,
                                                                                   const std::string& command) {
  if (!table.is_object()) throw ConfigError(file.string() + ": " + section(file, "") + "is not a table");
  std::map<std::string, std::pair<std::vector<std::string>, std::string>> out;
  const auto take = [&](const json& t, const std::string& own) {
    const std::string where = section(file, own);
    for (const auto& [name, value] : t.items()) {
      if (own.empty() && std::find(std::begin(kCommands), std::end(kCommands), name) != std::end(kCommands)) {
        if (!value.is_object())
          throw ConfigError(file.string() + ": " + where + name + ": expected a table, got " + type_name(value));
        continue;  // a command's table, read on its own below
      }
      const Key* key = find_key(name);
      if (!key || (!own.empty() && !takes(*key, own)))
        throw ConfigError(file.string() + ": " + where + "unknown key '" + name + "'" +
                          (key ? " (not an option of " + own + ")" : ""));
      std::vector<std::string> w = words(*key, value, file, where);  // every key checked, used or not
      if (!w.empty() && takes(*key, command)) out[name] = {std::move(w), where + name};  // [] leaves the default
    }
  };
  take(table, "");
  for (const char* c : kCommands)
    if (table.contains(c)) {
      const auto before = out;
      take(table.at(c), c);
      if (c != command) out = before;  // another command's table: checked, not applied
    }
  return out;
}

// Sets an option the command line left unset, as CLI11 sets one from its own config files (App::_parse_config).
void set_option(CLI::Option* option, const std::vector<std::string>& value) {
  if (option->get_expected_min() == 0)  // a flag: its own value for true ("false" for a !--no-... flag)
    option->add_result(option->get_flag_value(option->get_single_name(), value.front()));
  else
    option->add_result(value);
  option->run_callback();
}

int fail(const CLI::App* command, const std::string& message) {
  print_line(command->get_name().c_str(), message);
  return kExitUsage;
}

}  // namespace

void add_config_flags(const std::vector<CLI::App*>& commands, ConfigFileArgs& args) {
  for (CLI::App* cmd : commands) {
    auto* file = cmd->add_option("--config", args.file,
                                 "read defaults from this TOML file (a pyproject.toml's [tool.parity], or a "
                                 "parity.toml) instead of the nearest one")
                     ->check(CLI::ExistingFile);
    cmd->add_flag("--no-config", args.none, "read no configuration file")->excludes(file);
  }
}

std::string find_config_file(const std::string& start, const ConfigFileArgs& args) {
  if (args.none) return "";
  if (!args.file.empty()) return args.file;
  for (fs::path dir = fs::absolute(start);; dir = dir.parent_path()) {
    std::error_code ec;
    if (!fs::exists(dir / "manifest.json", ec)) {  // a results directory is data (README, "Safety")
      if (fs::is_regular_file(dir / "parity.toml", ec)) return (dir / "parity.toml").string();
      if (fs::is_regular_file(dir / "pyproject.toml", ec) && has_parity_table(dir / "pyproject.toml"))
        return (dir / "pyproject.toml").string();
    }
    if (dir == dir.parent_path()) return "";
  }
}

int apply_config_file(CLI::App& app, const ConfigFileArgs& args) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (parsed.empty() ||
      std::find(std::begin(kCommands), std::end(kCommands), parsed.front()->get_name()) == std::end(kCommands))
    return kExitOk;
  CLI::App* command = parsed.front();
  try {
    const std::string file = find_config_file(fs::current_path().string(), args);
    if (file.empty()) return kExitOk;
    const json table = parity_table(file);
    if (table.is_null()) throw ConfigError(file + ": has no [tool.parity] table");
    const CLI::Option* quiet = command->get_option_no_throw("--quiet");
    if (!quiet || quiet->count() == 0) print_line(command->get_name().c_str(), "configuration: " + file);
    for (const auto& [name, value] : values_for(table, file, command->get_name())) {
      CLI::Option* option = command->get_option("--" + name);
      if (option->count() > 0) continue;  // the command line wins
      try {
        set_option(option, value.first);
      } catch (const CLI::Error& e) {
        throw ConfigError(file + ": " + value.second + ": " + e.what());
      }
    }
  } catch (const ConfigError& e) {
    return fail(command, e.what());
  }
  return kExitOk;
}

}  // namespace parity
