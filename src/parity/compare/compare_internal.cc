// The small helpers the parts of compare share (compare_internal.h).
#include "compare_internal.h"

#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "json_input.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string py_str(py::handle obj) { return py::str(obj).cast<std::string>(); }

namespace {

constexpr int kDirectDepth = 64;  // deeper values go through json.loads, whose own recursion limit then applies
// Thrown where build_py does not build a value itself (too deep, or a kind json.loads should name): to_py then parses.
struct NotBuiltDirectly {};

// `value` built directly as json.loads would build it from value.dump(): a number nlohmann cannot write (NaN, an
// infinity) is written as null, so it is None here too; std::map keeps the keys in dump()'s order.
py::object build_py(const json& value, int depth) {
  if (depth > kDirectDepth) throw NotBuiltDirectly{};
  switch (value.type()) {
    case json::value_t::null:
      return py::none();
    case json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case json::value_t::number_integer:
      return py::int_(value.get<std::int64_t>());
    case json::value_t::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case json::value_t::number_float: {
      const double number = value.get<double>();
      return std::isfinite(number) ? py::object(py::float_(number)) : py::object(py::none());
    }
    case json::value_t::string:
      return py::str(value.get_ref<const std::string&>());
    case json::value_t::array: {
      py::list items;
      for (const json& item : value) items.append(build_py(item, depth + 1));
      return items;
    }
    case json::value_t::object: {
      py::dict fields;
      for (const auto& [key, item] : value.items()) fields[py::str(key)] = build_py(item, depth + 1);
      return fields;
    }
    default:  // binary, discarded: never in what compare reads; json.loads says what they are
      throw NotBuiltDirectly{};
  }
}

}  // namespace

// A JSON value as the Python object json.loads makes of it: built directly (compare converts a few small values
// per scenario, and text written only to be parsed again cost more than the value), through the text when deep.
py::object to_py(const json& value) {
  try {
    return build_py(value, 0);
  } catch (const NotBuiltDirectly&) {
    return py::module_::import("json").attr("loads")(value.dump());
  }
}

// A JSON-able Python object (an error record, a failure's details, DIFFERENCES) as JSON, through Python's own json
// module (parity._scenario.json_text, which keeps lone surrogates from making invalid UTF-8).
json from_py(py::handle value) {
  return parse_json(py::module_::import("parity._scenario").attr("json_text")(value).cast<std::string>(), "");
}

}  // namespace parity
