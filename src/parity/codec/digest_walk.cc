// The fidelity digest walk's common nodes in C++ (digest_walk.h): python/parity/probe.py's _digest_into, node for node.
#include "digest_walk.h"

#include <pybind11/pybind11.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codec.h"
#include "digest.h"
#include "numpy_api.h"

namespace py = pybind11;

namespace parity {
namespace {

// probe.py's constants, which this walk must agree with: DIGEST, _SHOWN, the depth _digest_into stops at, _HEADS_KEPT.
constexpr std::string_view kAlgorithm = "xxh3:";
constexpr std::size_t kRecorded = kAlgorithm.size() + 16;  // what fidelity records of a digest
constexpr Py_ssize_t kShownMost = 2 * 80;
constexpr int kDeepest = 500;
constexpr std::size_t kHeadsKept = 4096;

// The nodes walked here; anything else is kPython.
enum class Kind { kPython, kDict, kList, kTuple, kFloat, kInt, kBool, kNone, kStr, kArray };

py::object owned(PyObject* made) {
  if (made == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(made);
}

py::str text(std::string_view utf8) {
  return py::reinterpret_steal<py::str>(
      owned(PyUnicode_DecodeUTF8(utf8.data(), static_cast<Py_ssize_t>(utf8.size()), nullptr)).release());
}

void set_item(const py::handle& dict, const py::handle& key, const py::handle& value) {
  if (PyDict_SetItem(dict.ptr(), key.ptr(), value.ptr()) != 0) throw py::error_already_set();
}

// The whole digest of `head` followed by `size` bytes at `data`, its prefix first: probe.py's _hash and the in-place
// branch of _leaf_digest.
std::string whole_digest(std::string_view head, const void* data = nullptr, std::size_t size = 0) {
  Xxh3 hasher;
  hasher.add(head.data(), head.size());
  if (size) hasher.add(data, size);
  return std::string(kAlgorithm) + hasher.hexdigest();
}

// _array_head's triple for one layout, with the dtype's .str for the description, cached by the layout as probe.py's
// _HEADS is; the dtype is held so that its address is not reused. Shared: a walk holds its node's head while it calls
// Python, where another thread's walk may clear the cache.
struct ArrayHead {
  std::string head;
  bool referable = false, in_place = false;
  py::object dtype_str, dtype;
};

using SharedHead = std::shared_ptr<const ArrayHead>;

std::unordered_map<std::string, SharedHead>& heads() {
  static auto* cache = new std::unordered_map<std::string, SharedHead>();  // never destroyed: it holds Python objects
  return *cache;
}

std::string layout_key(PyArrayObject* a) {
  std::string key;
  const int ndim = PyArray_NDIM(a);
  const int flags =
      PyArray_FLAGS(a) & (NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED);
  const PyArray_Descr* descr = PyArray_DESCR(a);
  key.append(reinterpret_cast<const char*>(&descr), sizeof descr);
  key.append(reinterpret_cast<const char*>(&flags), sizeof flags);
  key.append(reinterpret_cast<const char*>(PyArray_DIMS(a)), sizeof(npy_intp) * static_cast<std::size_t>(ndim));
  key.append(reinterpret_cast<const char*>(PyArray_STRIDES(a)), sizeof(npy_intp) * static_cast<std::size_t>(ndim));
  return key;
}

// "(50,)", "(3, 4)", "()": a shape as Python writes the tuple.
std::string shape_text(PyArrayObject* a) {
  std::string s = "(";
  for (int d = 0; d < PyArray_NDIM(a); ++d) s += (d ? ", " : "") + std::to_string(PyArray_DIMS(a)[d]);
  return s + (PyArray_NDIM(a) == 1 ? ",)" : ")");
}

class Walk {
 public:
  Walk(const DigestWalkState& state, const py::handle& deadline, const DigestWalkHooks& hooks)
      : state_(state), deadline_(deadline), hooks_(hooks), algorithm_(text(kAlgorithm)) {}

  void node(const py::handle& obj, const std::string& path, int depth) {
    SharedHead head;
    const Kind kind = classify(obj, head);
    const py::str where = text(path);
    if (kind == Kind::kPython) {
      hooks_.digest_into(obj, where, state_.out, depth, state_.seen, state_.shown, state_.arrays, algorithm_,
                         state_.pending);
      return;
    }
    if (depth > kDeepest) return;
    check_deadline();
    if (seen_before(obj, where)) return;
    if (kind == Kind::kDict || kind == Kind::kList || kind == Kind::kTuple)
      return container(obj, kind, path, where, depth);
    leaf(obj, kind, head, where);
  }

 private:
  // What kind of node `obj` is for this walk: kPython where _digest_into must judge it (a subclass, a reducer's
  // object, a dict key that is not text, a str with lone surrogates, an array whose bytes are not hashed in place).
  Kind classify(const py::handle& obj, SharedHead& head) {
    PyObject* o = obj.ptr();
    const PyTypeObject* type = Py_TYPE(o);
    if (type == &PyFloat_Type) return Kind::kFloat;
    if (type == &PyBool_Type) return Kind::kBool;
    if (o == Py_None) return Kind::kNone;
    if (type == &PyLong_Type) {
      int overflow = 0;
      PyLong_AsLongLongAndOverflow(o, &overflow);
      return overflow ? Kind::kPython : Kind::kInt;
    }
    if (type == &PyUnicode_Type) return utf8(o) ? Kind::kStr : Kind::kPython;
    if (type == &PyList_Type) return Kind::kList;
    if (type == &PyTuple_Type) return Kind::kTuple;
    if (type == &PyDict_Type) return text_keys(o) ? Kind::kDict : Kind::kPython;
    if (PyArray_CheckExact(o))
      return (head = plain_array(reinterpret_cast<PyArrayObject*>(o))) ? Kind::kArray : Kind::kPython;
    return Kind::kPython;
  }

  static const char* utf8(PyObject* s, Py_ssize_t* size = nullptr) {
    const char* bytes = PyUnicode_AsUTF8AndSize(s, size);
    if (bytes == nullptr) PyErr_Clear();  // lone surrogates: probe.py encodes them with surrogatepass
    return bytes;
  }

  static bool text_keys(PyObject* dict) {
    Py_ssize_t at = 0;
    PyObject *key, *value;
    while (PyDict_Next(dict, &at, &key, &value))
      if (Py_TYPE(key) != &PyUnicode_Type || !utf8(key)) return false;
    return true;
  }

  // The cached head of an array whose digest is its head then its memory, hashed in place; null for any other.
  SharedHead plain_array(PyArrayObject* a) {
    const PyArray_Descr* descr = PyArray_DESCR(a);
    if (PyDataType_HASFIELDS(descr) || PyDataType_REFCHK(descr) || PyArray_NBYTES(a) >= state_.fused_from)
      return nullptr;
    auto& cache = heads();
    std::string key = layout_key(a);
    auto found = cache.find(key);
    if (found == cache.end()) {
      const py::tuple triple =
          py::reinterpret_borrow<py::tuple>(hooks_.array_head(py::handle(reinterpret_cast<PyObject*>(a))));
      auto made = std::make_shared<ArrayHead>();
      made->head = triple[0].cast<std::string>();
      made->referable = triple[1].cast<bool>();
      made->in_place = triple[2].cast<bool>();
      made->dtype = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
      made->dtype_str = made->dtype.attr("str");
      if (cache.size() >= kHeadsKept) cache.clear();
      found = cache.insert_or_assign(std::move(key), std::move(made)).first;
    }
    return found->second->in_place ? found->second : nullptr;
  }

  void check_deadline() {
    if (deadline_.is_none()) return;
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);  // time.monotonic()'s clock
    if (static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec) > deadline_.cast<double>())
      hooks_.check_deadline();
  }

  // An object met again is not walked again: its digest is the first one's (probe.py: the codec writes it once).
  bool seen_before(const py::handle& obj, const py::str& where) {
    const py::object id = owned(PyLong_FromVoidPtr(obj.ptr()));
    PyObject* first = PyDict_GetItemWithError(state_.seen.ptr(), id.ptr());
    if (first != nullptr) {
      set_item(state_.out, where, owned(PyObject_GetItem(state_.out.ptr(), PyTuple_GET_ITEM(first, 0))));
      return true;
    }
    if (PyErr_Occurred()) throw py::error_already_set();
    set_item(state_.seen, id, py::make_tuple(where, obj));
    return false;
  }

  void show(const py::str& where, const py::handle& description) {
    if (!state_.shown.is_none() && PyUnicode_GET_LENGTH(description.ptr()) <= kShownMost)
      set_item(state_.shown, where, description);
  }

  void record(const py::str& where, const std::string& whole) {
    set_item(state_.out, where, text(std::string_view(whole).substr(0, kRecorded)));
  }

  void container(const py::handle& obj, Kind kind, const std::string& path, const py::str& where, int depth) {
    std::vector<std::pair<std::string, py::object>> children;  // held: the walk below may run Python code
    PyObject* o = obj.ptr();
    if (kind == Kind::kDict) {
      Py_ssize_t at = 0, size = 0;
      PyObject *key, *value;
      while (PyDict_Next(o, &at, &key, &value)) {
        const char* bytes = PyUnicode_AsUTF8AndSize(key, &size);
        children.emplace_back(key_path(path, std::string(bytes, static_cast<std::size_t>(size))),
                              py::reinterpret_borrow<py::object>(value));
      }
    } else {
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      for (Py_ssize_t i = 0; i < n; ++i)
        children.emplace_back(item_path(path, static_cast<std::size_t>(i)),
                              py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(o, i)));
    }
    const char* name = kind == Kind::kDict ? "builtins.dict" : kind == Kind::kList ? "builtins.list" : "builtins.tuple";
    const std::string count = std::to_string(children.size());
    show(where, text(std::string(name) + " of " + count));
    record(where, whole_digest(std::string(name) + ":" + count));
    for (const auto& [child_path, child] : children) node(child, child_path, depth + 1);
  }

  void leaf(const py::handle& obj, Kind kind, const SharedHead& head, const py::str& where) {
    PyObject* o = obj.ptr();
    if (kind == Kind::kArray) return array_leaf(reinterpret_cast<PyArrayObject*>(o), *head, where);
    if (kind == Kind::kStr) return str_leaf(o, where);
    std::string kind_name, value;  // _leaf_description's "kind|value" and _description's "kind value"
    if (kind == Kind::kFloat) {
      kind_name = "builtins.float";
      const py::str shown_value = py::reinterpret_steal<py::str>(owned(PyObject_Repr(o)).release());
      show(where, text(kind_name + " " + shown_value.cast<std::string>()));
      double x = PyFloat_AS_DOUBLE(o);
      char bytes[sizeof x];
      std::memcpy(bytes, &x, sizeof x);
      if constexpr (std::endian::native == std::endian::big) std::reverse(bytes, bytes + sizeof x);  // struct "<d"
      return record(where, whole_digest(kind_name + "|" + std::string(bytes, sizeof bytes)));
    }
    if (kind == Kind::kInt) {
      kind_name = "builtins.int";
      value = std::to_string(PyLong_AsLongLong(o));
    } else if (kind == Kind::kBool) {
      kind_name = "builtins.bool";
      value = o == Py_True ? "True" : "False";
    } else {
      kind_name = "builtins.NoneType";
      value = "None";
    }
    show(where, text(kind_name + " " + value));
    record(where, whole_digest(kind_name + "|" + value));
  }

  void str_leaf(PyObject* o, const py::str& where) {
    static constexpr std::string_view kName = "builtins.str";
    Py_ssize_t size = 0;
    const char* bytes = PyUnicode_AsUTF8AndSize(o, &size);
    const Py_ssize_t length = PyUnicode_GET_LENGTH(o);
    if (length > 80) {
      show(where, text(std::string(kName) + " of length " + std::to_string(length)));
    } else {
      const py::object value = owned(PyObject_Repr(o));
      show(where, PyUnicode_GET_LENGTH(value.ptr()) <= 80
                      ? py::reinterpret_steal<py::object>(
                            owned(PyUnicode_FromFormat("%s %U", kName.data(), value.ptr())).release())
                      : py::object(text(kName)));
    }
    record(where, whole_digest(std::string(kName) + "|" + std::string(bytes, static_cast<std::size_t>(size))));
  }

  void array_leaf(PyArrayObject* a, const ArrayHead& head, const py::str& where) {
    const py::handle obj(reinterpret_cast<PyObject*>(a));
    show(where,
         PyArray_SIZE(a) <= 8
             ? hooks_.description(obj, py::none())
             : py::object(text("numpy.ndarray " + head.dtype_str.cast<std::string>() + " shape " + shape_text(a))));
    const std::string whole = whole_digest(head.head, PyArray_DATA(a), static_cast<std::size_t>(PyArray_NBYTES(a)));
    record(where, whole);
    if (!state_.arrays.is_none() && head.referable) set_item(state_.arrays, where, py::make_tuple(obj, text(whole)));
  }

  const DigestWalkState& state_;
  const py::handle deadline_;
  const DigestWalkHooks& hooks_;
  const py::str algorithm_;
};

}  // namespace

void digest_walk(const py::handle& obj, const py::handle& path, const DigestWalkState& state,
                 const py::handle& deadline, const DigestWalkHooks& hooks) {
  Walk(state, deadline, hooks).node(obj, path.cast<std::string>(), 0);
}

}  // namespace parity
