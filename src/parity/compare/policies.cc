// The comparison policies (PolicyChoice, policy_specs) and how a scenario's policies and tolerances are resolved.
#include "policies.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string_view>

#include "compare_internal.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {

const std::vector<PolicySpec>& policy_specs() {
  static const std::vector<PolicySpec> kSpecs = [] {
    // The field of each policy; kPolicies (outcome.h) holds the names, values and help.
    const std::map<std::string_view, std::string PolicyChoice::*> fields = {
        {"dtype", &PolicyChoice::dtype},         {"layout", &PolicyChoice::layout}, {"type", &PolicyChoice::type},
        {"writeable", &PolicyChoice::writeable}, {"scalar", &PolicyChoice::scalar}, {"order", &PolicyChoice::order},
        {"index", &PolicyChoice::index},         {"names", &PolicyChoice::names}};
    std::vector<PolicySpec> specs;
    for (const PolicyVocabulary& policy : kPolicies)
      specs.push_back({policy.name.data(),
                       fields.at(policy.name),
                       {policy.values.begin(), policy.values.end()},
                       policy.help.data()});
    return specs;
  }();
  return kSpecs;
}

namespace {
const PolicySpec& policy_spec(const std::string& name) {
  for (const PolicySpec& spec : policy_specs())
    if (name == spec.name) return spec;
  std::string known;
  for (const PolicySpec& spec : policy_specs()) known += (known.empty() ? "" : ", ") + std::string(spec.name);
  throw std::invalid_argument("unknown policy '" + name + "' (" + known + ")");
}
}  // namespace

const std::vector<std::string>& PolicyChoice::values(const std::string& name) { return policy_spec(name).values; }

const std::string& PolicyChoice::get(const std::string& name) const { return this->*policy_spec(name).member; }

void PolicyChoice::set(const std::string& name, const std::string& value) {
  const PolicySpec& spec = policy_spec(name);
  if (std::find(spec.values.begin(), spec.values.end(), value) == spec.values.end()) {
    std::string allowed;
    for (const std::string& v : spec.values) allowed += (allowed.empty() ? "" : ", ") + v;
    throw std::invalid_argument("policy " + name + " cannot be '" + value + "' (" + allowed + ")");
  }
  this->*spec.member = value;
}

json PolicyChoice::to_json() const {
  json out = json::object();
  for (const PolicySpec& spec : policy_specs()) out[spec.name] = this->*spec.member;
  return out;
}

Tolerance Policy::tolerance_for(const std::string& path, py::handle gold_dtype, py::handle candidate_dtype,
                                std::string* matched) const {
  const Tolerance g = default_tolerance(gold_dtype), c = default_tolerance(candidate_dtype);
  Tolerance t{std::max(g.rtol, c.rtol), std::max(g.atol, c.atol), signed_zeros};
  auto apply = [&t](const ToleranceOverride& o) {
    if (o.rtol) t.rtol = *o.rtol;
    if (o.atol) t.atol = *o.atol;
  };
  apply(tolerance);
  // The longest path that is `path` or contains it: outputs['x'] covers outputs['x'][0] and outputs['x'].field('a').
  const std::pair<const std::string, ToleranceOverride>* best = nullptr;
  for (const auto& entry : by_path) {
    const std::string& prefix = entry.first;
    const bool covers = path.compare(0, prefix.size(), prefix) == 0 &&
                        (path.size() == prefix.size() || path[prefix.size()] == '[' || path[prefix.size()] == '.');
    if (covers && (!best || prefix.size() >= best->first.size())) best = &entry;
  }
  if (!best) return t;
  apply(best->second);
  if (matched) *matched = best->first;
  return t;
}

namespace {

std::optional<double> optional_number(const json& meta, const char* key) {
  const auto it = meta.find(key);
  if (it == meta.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

// Sets each {name: value} of `policies`, read from a manifest; throws std::invalid_argument naming `what` when it is
// malformed or names a policy or value parity does not know.
void set_policies(PolicyChoice& choice, const json& policies, const std::string& what) {
  if (!policies.is_object()) throw std::invalid_argument(what + " is not an object of policy names to values");
  for (const auto& [name, value] : policies.items()) {
    if (!value.is_string()) throw std::invalid_argument(what + "['" + name + "'] is not a string");
    choice.set(name, value.get<std::string>());
  }
}

}  // namespace

// Whether the run chose policy `spec`: its flag was given, or its value is not the default (set by a caller).
bool run_chose(const PolicyChoice& policy, const std::set<std::string>& given, const PolicySpec& spec) {
  return given.count(spec.name) || policy.*spec.member != PolicyChoice{}.*spec.member;
}

// The scenario's policies (README "Policies"): the defaults, under the candidate backend's POLICY, under the run's
// --NAME-policy flags that were given (or differ from the default), under the scenario's own policy=. Throws
// std::invalid_argument for a value parity does not know (a hand-edited or newer manifest).
Policy policy_for(const Manifest& gold, const Manifest& candidate, const json& meta, const CompareOptions& options) {
  Policy p;
  p.tolerance = {optional_number(meta, "rtol"), optional_number(meta, "atol")};
  const json tolerances = meta.value("tolerances", json::object()), choice = meta.value("policy", json::object());
  for (const auto& [path, tol] : tolerances.items())
    p.by_path[path] = {optional_number(tol, "rtol"), optional_number(tol, "atol")};
  p.signed_zeros = meta.value("signed_zeros", false);
  set_policies(p.choice, candidate.backend.value("policy", json::object()), "the candidate backend's POLICY");
  for (const PolicySpec& spec : policy_specs())
    if (run_chose(options.policy, options.policies_given, spec)) p.choice.*spec.member = options.policy.*spec.member;
  set_policies(p.choice, choice, "the scenario's policy");
  p.type_map = candidate.backend.value("type_map", std::map<std::string, std::string>{});
  p.gold_name = gold.backend.value("name", "gold");
  p.candidate_name = candidate.backend.value("name", "candidate");
  if (p.gold_name == p.candidate_name) p.gold_name += " (gold)", p.candidate_name += " (candidate)";
  return p;
}

}  // namespace parity
