// The small helpers the parts of compare share (compare_internal.h).
#include "compare_internal.h"

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

// A JSON value as the Python object json.loads makes of it.
py::object to_py(const json& value) { return py::module_::import("json").attr("loads")(value.dump()); }

// A JSON-able Python object (an error record, a failure's details, DIFFERENCES) as JSON, through Python's own json
// module (parity._scenario.json_text, which keeps lone surrogates from making invalid UTF-8).
json from_py(py::handle value) {
  return parse_json(py::module_::import("parity._scenario").attr("json_text")(value).cast<std::string>(), "");
}

}  // namespace parity
