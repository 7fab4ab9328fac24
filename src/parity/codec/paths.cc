// The output-path grammar: how a value's place inside the outputs is written (outputs['a'][2].mask). Written only
// here: Python's parity.paths (the fidelity digests' paths) calls these functions through define_path_functions.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>

#include "codec.h"

namespace parity {

std::string key_path(const std::string& path, const std::string& key) {
  std::string out;
  out.reserve(path.size() + key.size() + 4);
  out.append(path).append("['");
  for (char c : key) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out.append("']");
}

std::string item_path(const std::string& path, std::size_t i) {
  char index[24];
  const int n = std::snprintf(index, sizeof index, "[%zu]", i);
  std::string out;
  out.reserve(path.size() + static_cast<std::size_t>(n));
  return out.append(path).append(index, static_cast<std::size_t>(n));
}

std::string state_path(const std::string& path, const std::string& key) {
  return !key.empty() && (key.front() == '[' || key.front() == '.') ? path + key : path + "." + key;
}

std::string index_path(const std::vector<std::int64_t>& index) {
  if (index.empty()) return "[()]";
  std::string s = "[";
  for (std::size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

void define_path_functions(pybind11::module_& module) {
  namespace py = pybind11;
  module.def("key_path", &key_path, py::arg("path"), py::arg("key"),
             "The path of a dict entry: outputs['a']['it\\'s'] (quotes and backslashes escaped).");
  module.def("item_path", &item_path, py::arg("path"), py::arg("i"),
             "The path of element `i` of a list or tuple: outputs['a'][2].");
  module.def("state_path", &state_path, py::arg("path"), py::arg("key"),
             "The path of entry `key` of a reducer's dict state: path.key, or path + key for a key starting with "
             "'[' or '.'.");
  // Qualified: batched with decode.cc (CMAKE_UNITY_BUILD), its `using namespace detail` would add detail::index_path.
  module.def("index_path", &parity::index_path, py::arg("index"),
             "An object array element's index as a path suffix: [2, 0], or [()] for a 0-d array.");
}

}  // namespace parity
