// Type checks of a scenario record's fields (see record_check.h): one function per field shape, composed by name.
#include "record_check.h"

#include <functional>
#include <initializer_list>
#include <utility>

using json = nlohmann::json;

namespace parity {
namespace {

// What a field must be, as the message says it, and the test.
struct Shape {
  const char* words;
  std::function<bool(const json&)> fits;
};

const Shape kText{"a string", [](const json& v) { return v.is_string(); }};
const Shape kNumberOrNull{"a number or null", [](const json& v) { return v.is_number() || v.is_null(); }};
const Shape kBoolean{"true or false", [](const json& v) { return v.is_boolean(); }};
const Shape kObject{"an object", [](const json& v) { return v.is_object(); }};
const Shape kList{"a list", [](const json& v) { return v.is_array(); }};
const Shape kObjectOrNull{"an object or null", [](const json& v) { return v.is_object() || v.is_null(); }};
const Shape kTextOrNull{"a string or null", [](const json& v) { return v.is_string() || v.is_null(); }};
const Shape kScalar{"a string, number, boolean or null", [](const json& v) { return v.is_primitive(); }};

std::string wrong(const std::string& path, const json& value, const Shape& shape) {
  const std::string type = value.type_name();
  const std::string is = value.is_null() ? type : (value.is_object() || value.is_array() ? "an " : "a ") + type;
  return path + " is " + is + ", not " + shape.words;
}

// The first of `fields` present in `object` with the wrong shape; `object` is known to be an object.
std::string first_wrong(const json& object, const std::string& path,
                        std::initializer_list<std::pair<const char*, const Shape*>> fields) {
  for (const auto& [key, shape] : fields) {
    const auto it = object.find(key);
    if (it != object.end() && !shape->fits(*it)) return wrong(path + "." + key, *it, *shape);
  }
  return "";
}

// Every member of `object` must have `shape`.
std::string wrong_member(const json& object, const std::string& path, const Shape& shape) {
  for (const auto& [key, value] : object.items())
    if (!shape.fits(value)) return wrong(path + "." + key, value, shape);
  return "";
}

std::string wrong_tolerances(const json& tolerances) {
  for (const auto& [path, tol] : tolerances.items()) {
    const std::string where = "meta.tolerances." + path;
    if (!tol.is_object()) return wrong(where, tol, kObject);
    if (auto bad = first_wrong(tol, where, {{"rtol", &kNumberOrNull}, {"atol", &kNumberOrNull}}); !bad.empty())
      return bad;
  }
  return "";
}

// xfail.compare: a reason, or {check: reason}.
std::string wrong_xfail(const json& xfail) {
  const auto spec = xfail.find("compare");
  if (spec == xfail.end() || spec->is_string()) return "";
  if (!spec->is_object()) return wrong("meta.xfail.compare", *spec, Shape{"a reason or {check: reason}", {}});
  return wrong_member(*spec, "meta.xfail.compare", kText);
}

std::string wrong_meta(const json& meta) {
  if (!meta.is_object()) return wrong("meta", meta, kObject);
  std::string bad = first_wrong(meta, "meta",
                                {{"module", &kText},
                                 {"function", &kText},
                                 {"source", &kText},
                                 {"params", &kObject},
                                 {"tags", &kList},
                                 {"rtol", &kNumberOrNull},
                                 {"atol", &kNumberOrNull},
                                 {"tolerances", &kObject},
                                 {"signed_zeros", &kBoolean},
                                 {"policy", &kObject},
                                 {"xfail", &kObject},
                                 {"xfail_strict", &kBoolean},
                                 {"kind", &kText},
                                 {"assert_eq", &kTextOrNull}});
  if (bad.empty() && meta.contains("tolerances")) bad = wrong_tolerances(meta.at("tolerances"));
  if (bad.empty() && meta.contains("policy")) bad = wrong_member(meta.at("policy"), "meta.policy", kText);
  // A run writes each tag and each parameter's value as text (format_param; records written by hand hold numbers
  // too); the reports' renderers (the HTML report's tag counts and parameter table) had failed the whole report on a
  // list or a deeply nested value.
  if (bad.empty() && meta.contains("tags")) bad = wrong_member(meta.at("tags"), "meta.tags", kText);
  if (bad.empty() && meta.contains("params")) bad = wrong_member(meta.at("params"), "meta.params", kScalar);
  if (bad.empty() && meta.contains("xfail")) bad = wrong_xfail(meta.at("xfail"));
  return bad;
}

// error and pickle_error: {type, message, traceback, reason, path}, each a string when present.
std::string wrong_error(const json& error, const std::string& path) {
  if (!kObjectOrNull.fits(error)) return wrong(path, error, kObjectOrNull);
  if (error.is_null()) return "";
  return first_wrong(
      error, path,
      {{"type", &kText}, {"message", &kText}, {"traceback", &kText}, {"reason", &kText}, {"path", &kText}});
}

}  // namespace

std::string malformed_field(const ScenarioRecord& record) {
  std::string bad = wrong_meta(record.meta);
  if (bad.empty()) bad = wrong_error(record.error, "error");
  if (bad.empty()) bad = wrong_error(record.pickle_error, "pickle_error");
  for (const auto& [field, value] :
       {std::pair{"fidelity", &record.fidelity}, std::pair{"fidelity_values", &record.fidelity_values}}) {
    if (bad.empty() && !kObjectOrNull.fits(*value)) bad = wrong(field, *value, kObjectOrNull);
    if (bad.empty() && value->is_object()) bad = wrong_member(*value, field, kText);
  }
  return bad;
}

}  // namespace parity
