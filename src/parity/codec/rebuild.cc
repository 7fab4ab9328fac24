// Rebuilds Python objects from a decoded result file (to_python, see codec.h).
#include <pybind11/pybind11.h>

#include <unordered_map>
#include <unordered_set>

#include "codec.h"
#include "codec_internal.h"

namespace py = pybind11;

namespace parity {
using namespace detail;

namespace {

// Builds Python objects; `built` maps each object's path to what was built there, so a reference
// (written for an object seen twice) becomes that same object again.
class Rebuilder {
 public:
  explicit Rebuilder(const Node& root) : targets_(ref_targets(root)) {}
  py::object build(const Node& node) {
    if (node.is_ref()) return built_.at(node.ref());
    py::object obj;
    try {
      obj = build_node(node);
    } catch (py::error_already_set& e) {  // a reducer raising, a value Python refuses: the file is at fault
      throw FormatError(node.path + ": cannot rebuild " + (node.type.empty() ? kind_name(node.kind()) : node.type) +
                        ": " + e.what());
    }
    if (!targets_.empty() && targets_.count(node.path)) built_[node.path] = obj;
    return obj;
  }

 private:
  py::object build_node(const Node& node) {
    py::object obj = build_value(node);
    if (node.reducer.empty()) return obj;
    py::object state = node.state.empty() ? py::none() : build(node.state.front());
    try {
      return py::module_::import("parity.reducers")
          .attr("rebuild")(node.reducer, node.type, node.kind() == Node::Kind::Array ? obj : py::none(), state);
    } catch (py::error_already_set& e) {
      if (!e.matches(py::module_::import("parity.reducers").attr("RebuildError"))) throw;
      throw FormatError(node.path + ": " + py::str(e.value()).cast<std::string>());  // names the allow-list
    }
  }

  py::object build_value(const Node& node) {
    switch (node.kind()) {
      case Node::Kind::Dict: {
        py::dict d;
        for (std::size_t i = 0; i < node.keys().size(); ++i) d[py::str(node.keys()[i])] = build(node.items()[i]);
        return d;
      }
      case Node::Kind::List:
      case Node::Kind::Tuple: {
        py::list items;
        for (const Node& item : node.items()) items.append(build(item));
        return node.kind() == Node::Kind::List ? py::object(std::move(items)) : py::object(py::tuple(items));
      }
      case Node::Kind::None:
      case Node::Kind::Object:
        return py::none();
      case Node::Kind::Bool:
        return py::bool_(node.boolean());
      case Node::Kind::Int:
        return steal(PyLong_FromString(node.text().c_str(), nullptr, 16));
      case Node::Kind::Float:
        return py::float_(node.number().real());
      case Node::Kind::Complex:
        return steal(PyComplex_FromDoubles(node.number().real(), node.number().imag()));
      case Node::Kind::Str:
        return steal(
            PyUnicode_DecodeUTF8(node.text().data(), static_cast<Py_ssize_t>(node.text().size()), "surrogatepass"));
      case Node::Kind::Bytes:
        return py::bytes(node.text());
      case Node::Kind::Array:
        return node.items().empty() ? node.array() : fill_object_array(node);
      case Node::Kind::Scalar:  // the 0-d array's element, as array[()] gives it
        return steal(PyArray_Return(reinterpret_cast<PyArrayObject*>(node.array().inc_ref().ptr())));
    }
    return py::none();
  }

  // Puts each element (rebuilt) in its slot; the flag is lifted for that only, as the array is ours.
  py::object fill_object_array(const Node& node) {
    auto* array = reinterpret_cast<PyArrayObject*>(node.array().ptr());
    const bool writeable = PyArray_ISWRITEABLE(array);
    PyArray_ENABLEFLAGS(array, NPY_ARRAY_WRITEABLE);
    const std::vector<PyObject**> slots = object_slots(array);
    for (std::size_t i = 0; i < slots.size() && i < node.items().size(); ++i) {
      PyObject* element = build(node.items()[i]).release().ptr();
      Py_XDECREF(*slots[i]);
      *slots[i] = element;
    }
    if (!writeable) PyArray_CLEARFLAGS(array, NPY_ARRAY_WRITEABLE);
    return node.array();
  }

  const std::unordered_set<std::string> targets_;  // the paths references name: only those are remembered
  std::unordered_map<std::string, py::object> built_;
};

}  // namespace

py::object to_python(const Node& node) { return Rebuilder(node).build(node); }

}  // namespace parity
