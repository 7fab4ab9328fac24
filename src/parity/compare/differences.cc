// Declared differences (see differences.h): parsed from the candidate manifest, matched against failed checks.
#include "differences.h"

#include <map>
#include <set>

#include "compare.h"
#include "glob.h"

using json = nlohmann::json;

namespace parity {
namespace {

// `path` patterns read '[' as itself (glob.h), so that outputs['x'][0] names that path without escaping.
bool value_matches(const json& pattern, const json& value, bool is_path) {
  if (pattern.is_array()) {
    for (const json& p : pattern)
      if (value_matches(p, value, is_path)) return true;
    return false;
  }
  if (pattern.is_string())
    return value.is_string() && glob_match(pattern.get<std::string>(), value.get<std::string>(), is_path);
  return pattern == value && pattern.type() == value.type();
}

// The value at dotted `key` ("details.table.candidate.c_contiguous"), or null when any part is absent.
const json* lookup(const json& root, const std::string& key) {
  const json* node = &root;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &node->at(part);
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

// [a-z0-9]+(-[a-z0-9]+)*, checked by hand: std::regex recurses once per character, and a long id from a manifest
// would overflow the stack.
bool is_word_id(const std::string& id) {
  bool after_word = false;  // the previous character ends a word, so '-' or the end may follow
  for (const char ch : id) {
    const bool word = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (!word && (ch != '-' || !after_word)) return false;
    after_word = word;
  }
  return after_word;
}

[[noreturn]] void refuse(const std::string& source, std::size_t index, const std::string& what) {
  throw DifferenceError(source + ": backend.differences[" + std::to_string(index) + "] " + what);
}

std::string required_text(const json& entry, const char* key, const std::string& source, std::size_t index) {
  if (!entry.contains(key) || !entry.at(key).is_string() || entry.at(key).get<std::string>().empty())
    refuse(source, index, std::string("needs a non-empty string '") + key + "'");
  return entry.at(key).get<std::string>();
}

bool valid_pattern(const json& pattern) {
  if (!pattern.is_array()) return !pattern.is_object();
  for (const json& p : pattern)
    if (p.is_array() || p.is_object()) return false;
  return true;
}

Difference parse_one(const json& entry, const std::string& source, std::size_t index) {
  static const std::set<std::string> keys = {"id", "check", "reason", "match", "scenarios"};
  if (!entry.is_object()) refuse(source, index, "is not an object");
  for (const auto& [key, _] : entry.items())
    if (!keys.count(key))
      refuse(source, index, "has an unknown field '" + key + "' (id, check, reason, match, scenarios)");
  Difference d;
  d.id = required_text(entry, "id", source, index);
  d.check = required_text(entry, "check", source, index);
  d.reason = required_text(entry, "reason", source, index);
  if (!is_word_id(d.id)) refuse(source, index, "id '" + d.id + "' is not lowercase words joined by '-'");
  if (!declarable_check(d.check))
    refuse(source, index,
           "('" + d.id + "') cannot declare check '" + d.check + "' (missing and fidelity are parity's own)");
  d.match = entry.value("match", json::object());
  if (!d.match.is_object()) refuse(source, index, "('" + d.id + "') match is not an object");
  for (const auto& [key, pattern] : d.match.items())
    if (!valid_pattern(pattern))
      refuse(source, index, "('" + d.id + "') match '" + key + "' is not a value or a list of values");
  const json scenarios = entry.value("scenarios", json::array());
  for (const json& s : scenarios.is_array() ? scenarios : json::array({scenarios})) {
    if (!s.is_string()) refuse(source, index, "('" + d.id + "') scenarios is not a glob or a list of globs");
    d.scenarios.push_back(s.get<std::string>());
  }
  return d;
}

bool any_scenario_glob(const Difference& d, const std::string& id) {
  if (d.scenarios.empty()) return true;
  // An exact id matches as itself: parametrized ids hold '[', which a glob reads as a character class.
  for (const std::string& pattern : d.scenarios)
    if (pattern == id || glob_match(pattern, id)) return true;
  return false;
}

}  // namespace

bool declarable_check(const std::string& check) { return listed(kDeclarableChecks, check); }

std::vector<Difference> parse_differences(const json& backend, const std::string& source) {
  std::vector<Difference> out;
  const json declared = backend.is_object() ? backend.value("differences", json::array()) : json::array();
  if (!declared.is_array()) throw DifferenceError(source + ": backend.differences is not a list");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    out.push_back(parse_one(declared[i], source, i));
    if (!ids.insert(out.back().id).second) refuse(source, i, "repeats the id '" + out.back().id + "'");
  }
  return out;
}

std::string difference_changes(const std::vector<Difference>& recorded, const std::vector<Difference>& current) {
  std::map<std::string, const Difference*> before;
  for (const Difference& d : recorded) before[d.id] = &d;
  std::vector<std::string> added, changed;
  for (const Difference& d : current) {
    const auto found = before.find(d.id);
    if (found == before.end()) {
      added.push_back(d.id);
      continue;
    }
    const Difference& old = *found->second;
    if (old.check != d.check || old.reason != d.reason || old.match != d.match || old.scenarios != d.scenarios)
      changed.push_back(d.id);
    before.erase(found);
  }
  std::string text;
  auto part = [&text](const char* what, const std::vector<std::string>& ids) {
    if (ids.empty()) return;
    text += (text.empty() ? "" : "; ") + std::string(what);
    for (const std::string& id : ids) text += (&id == &ids.front() ? " " : ", ") + id;
  };
  std::vector<std::string> removed;
  for (const auto& [id, _] : before) removed.push_back(id);
  part("added", added);
  part("removed", removed);
  part("changed", changed);
  return text;
}

bool explains(const Difference& difference, const std::string& scenario_id, const Check& check) {
  if (check.ok || check.check != difference.check || !any_scenario_glob(difference, scenario_id)) return false;
  if (check.check == "error" && check.path != "candidate") return false;
  const json facts = {
      {"check", check.check}, {"path", check.path}, {"message", check.message}, {"details", check.details}};
  for (const auto& [key, pattern] : difference.match.items()) {
    const json* value = lookup(facts, key);
    if (!value || !value_matches(pattern, *value, key == "path")) return false;
  }
  return true;
}

void apply_differences(const std::vector<Difference>& differences, ScenarioOutcome& outcome) {
  if (differences.empty() || (outcome.status != "fail" && outcome.status != "error")) return;
  std::set<std::string> used;
  bool all_explained = true;
  for (Check& check : outcome.checks) {
    // A check the scenario's own xfail expects is already accounted for; it stays with that reason.
    if (check.ok || check.details.contains("xfail")) continue;
    const Difference* found = nullptr;
    for (const Difference& d : differences)
      if (explains(d, outcome.id, check)) {
        found = &d;
        break;
      }
    if (!found) {
      all_explained = false;
      continue;
    }
    check.details["difference"] = found->id;
    check.details["xfail"] = found->reason;
    used.insert(found->id + " (" + found->check + ")");
  }
  if (!all_explained || used.empty()) return;
  std::string names;
  for (const std::string& n : used) names += (names.empty() ? "" : ", ") + n;
  outcome.status = "xfail";
  outcome.message = "declared differences of the candidate: " + names;
}

std::map<std::string, DifferenceUse> difference_use(const std::vector<Difference>& differences,
                                                    const std::vector<ScenarioOutcome>& outcomes) {
  std::map<std::string, DifferenceUse> use;
  for (const Difference& d : differences) use[d.id];
  for (const ScenarioOutcome& s : outcomes) {
    std::set<std::string> in_scenario;
    for (const Check& c : s.checks) {
      if (c.ok || !c.details.contains("difference")) continue;
      const std::string id = c.details.at("difference").get<std::string>();
      ++use[id].checks;
      if (in_scenario.insert(id).second) ++use[id].scenarios;
    }
  }
  return use;
}

json differences_json(const std::vector<Difference>& differences, const std::vector<ScenarioOutcome>& outcomes) {
  const auto use = difference_use(differences, outcomes);
  json out = json::array();
  for (const Difference& d : differences) {
    const DifferenceUse& u = use.at(d.id);
    out.push_back({{"id", d.id},
                   {"check", d.check},
                   {"reason", d.reason},
                   {"match", d.match},
                   {"scenarios", d.scenarios},
                   {"checks_explained", u.checks},
                   {"scenarios_explained", u.scenarios}});
  }
  return out;
}

}  // namespace parity
