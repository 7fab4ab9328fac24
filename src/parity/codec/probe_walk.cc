// parity.probe's walks in C++ (probe_walk.h): python/parity/probe.py's _digest_into and _losses, node for node.
#include "probe_walk.h"

#include <pybind11/pybind11.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codec.h"
#include "deadline.h"
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

// The nodes walked here; anything else is kPython. kSubclass: an ndarray subclass's array but for object arrays (which
// are containers to probe.py), its state first.
enum class Kind { kPython, kDict, kList, kTuple, kFloat, kInt, kBool, kNone, kStr, kArray, kSubclass };

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

// The node kinds both walks know by exact type (a subclass is kPython): each walk adds its own conditions.
Kind basic_kind(PyObject* o) {
  const PyTypeObject* type = Py_TYPE(o);
  if (type == &PyFloat_Type) return Kind::kFloat;
  if (type == &PyBool_Type) return Kind::kBool;
  if (o == Py_None) return Kind::kNone;
  if (type == &PyLong_Type) return Kind::kInt;
  if (type == &PyUnicode_Type) return Kind::kStr;
  if (type == &PyList_Type) return Kind::kList;
  if (type == &PyTuple_Type) return Kind::kTuple;
  if (type == &PyDict_Type) return Kind::kDict;
  if (PyArray_CheckExact(o)) return Kind::kArray;
  return Kind::kPython;
}

bool is_container(Kind kind) { return kind == Kind::kDict || kind == Kind::kList || kind == Kind::kTuple; }

bool fits_64_bits(PyObject* int_object) {
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(int_object, &overflow);
  return !overflow;
}

const char* utf8(PyObject* s, Py_ssize_t* size = nullptr) {
  const char* bytes = PyUnicode_AsUTF8AndSize(s, size);
  if (bytes == nullptr) PyErr_Clear();  // lone surrogates: probe.py encodes them with surrogatepass
  return bytes;
}

// Whether every key of `dict` is an exact str that has UTF-8 (the path functions take nothing else).
bool text_keys(PyObject* dict) {
  Py_ssize_t at = 0;
  PyObject *key, *value;
  while (PyDict_Next(dict, &at, &key, &value))
    if (Py_TYPE(key) != &PyUnicode_Type || !utf8(key)) return false;
  return true;
}

using Parts = std::vector<std::pair<std::string, py::object>>;

// The children of a walked container, with their paths as _children spells them (the values held: the walk below
// may run Python code).
Parts children_of(PyObject* o, Kind kind, const std::string& path) {
  Parts children;
  if (kind == Kind::kDict) {
    Py_ssize_t at = 0, size = 0;
    PyObject *key, *value;
    while (PyDict_Next(o, &at, &key, &value)) {
      const char* bytes = PyUnicode_AsUTF8AndSize(key, &size);
      children.emplace_back(key_path(path, std::string(bytes, static_cast<std::size_t>(size))),
                            py::reinterpret_borrow<py::object>(value));
    }
    return children;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  for (Py_ssize_t i = 0; i < n; ++i)
    children.emplace_back(item_path(path, static_cast<std::size_t>(i)),
                          py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(o, i)));
  return children;
}

// _array_head's triple for one type and layout, with the dtype's .str and the type's qualified name for the
// description, cached by type and layout as probe.py's _HEADS is; the dtype and the type are held so that their
// addresses are not reused. Shared: a walk holds its node's head while it calls Python, where another thread's walk may
// clear the cache.
struct ArrayHead {
  std::string head;
  bool referable = false, in_place = false;
  py::object dtype_str, dtype, type;
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
  const PyTypeObject* type = Py_TYPE(a);  // the head begins with the type's name
  key.append(reinterpret_cast<const char*>(&type), sizeof type);
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

// reducers.qualified_name(type) as it is now (a class's names can change): its __module__ and __qualname__, or ""
// where either is not a str (then probe.py's _description writes it).
std::string qualified_name(PyTypeObject* type) {
  if (type == &PyArray_Type) return "numpy.ndarray";
  PyObject* t = reinterpret_cast<PyObject*>(type);
  const auto attribute = [t](const char* name) {
    PyObject* value = PyObject_GetAttrString(t, name);
    if (value == nullptr) PyErr_Clear();
    return py::reinterpret_steal<py::object>(value);
  };
  const py::object module = attribute("__module__"), name = attribute("__qualname__");
  if (!module || !name || !PyUnicode_CheckExact(module.ptr()) || !PyUnicode_CheckExact(name.ptr())) return "";
  const char *m = utf8(module.ptr()), *n = utf8(name.ptr());
  return m && n ? std::string(m) + "." + n : "";
}

// The cached head of an array of plain elements (no fields, no object elements), from probe.py's _array_head
// (`array_head`) on a miss: the one place both walks learn an array's head and whether its bytes are its values in C
// order (in_place). Null for an array this cache does not hold (probe.py's _HEADS does not keep structured dtypes
// either).
SharedHead cached_head(PyArrayObject* a, const py::handle& array_head) {
  const PyArray_Descr* descr = PyArray_DESCR(a);
  if (PyDataType_HASFIELDS(descr) || PyDataType_REFCHK(descr)) return nullptr;
  auto& cache = heads();
  std::string key = layout_key(a);
  auto found = cache.find(key);
  if (found == cache.end()) {
    const py::tuple triple = py::reinterpret_borrow<py::tuple>(array_head(py::handle(reinterpret_cast<PyObject*>(a))));
    auto made = std::make_shared<ArrayHead>();
    made->type = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(a)));
    made->head = triple[0].cast<std::string>();
    made->referable = triple[1].cast<bool>();
    made->in_place = triple[2].cast<bool>();
    made->dtype = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(PyArray_DESCR(a)));
    made->dtype_str = made->dtype.attr("str");
    if (cache.size() >= kHeadsKept) cache.clear();
    found = cache.insert_or_assign(std::move(key), std::move(made)).first;
  }
  return found->second;
}

// paths.state_path(path, name) as probe.py spells a state's part: here for a str, by Python for anything else (which
// its path functions refuse, with Python's error).
std::string part_path(const std::string& path, const py::handle& name) {
  Py_ssize_t size = 0;
  if (const char* text = PyUnicode_Check(name.ptr()) ? utf8(name.ptr(), &size) : nullptr)
    return state_path(path, std::string(text, static_cast<std::size_t>(size)));
  // Never destroyed: the extension module's statics outlive the interpreter of the process that imports it.
  static const auto* python_state_path = new py::object(py::module_::import("parity.paths").attr("state_path"));
  return (*python_state_path)(path, name).cast<std::string>();
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
    if (is_container(kind)) return container(obj, kind, path, where, depth);
    if (kind == Kind::kSubclass) return subclass(obj, path, where, depth);
    leaf(obj, kind, head, where);
  }

 private:
  // What kind of node `obj` is for this walk: kPython where _digest_into must judge it (a subclass of anything but
  // ndarray, a reducer's object, a dict key that is not text, a str with lone surrogates, an array whose bytes are not
  // hashed in place).
  Kind classify(const py::handle& obj, SharedHead& head) {
    PyObject* o = obj.ptr();
    switch (const Kind kind = basic_kind(o)) {
      case Kind::kInt:
        return fits_64_bits(o) ? kind : Kind::kPython;
      case Kind::kStr:
        return utf8(o) ? kind : Kind::kPython;
      case Kind::kDict:
        return text_keys(o) ? kind : Kind::kPython;
      case Kind::kArray:
        return (head = plain_array(reinterpret_cast<PyArrayObject*>(o))) ? kind : Kind::kPython;
      case Kind::kPython:  // an ndarray subclass but an object array (a container to probe.py)
        return PyArray_Check(o) && PyArray_TYPE(reinterpret_cast<PyArrayObject*>(o)) != NPY_OBJECT ? Kind::kSubclass
                                                                                                   : kind;
      default:
        return kind;
    }
  }

  // The cached head of an array whose digest is its head then its memory, hashed in place; null for any other.
  SharedHead plain_array(PyArrayObject* a) {
    if (PyArray_NBYTES(a) >= state_.fused_from) return nullptr;
    SharedHead head = cached_head(a, hooks_.array_head);
    return head && head->in_place ? head : nullptr;
  }

  void check_deadline() {
    if (detail::stop_signal) {  // a Ctrl-C during a compare (deadline.h): the walk of a large object ends with it
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
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

  // The short description `describe()` makes, kept at `where` when the caller asked for them (a run's worker does, for
  // the manifest's fidelity_values). compare's walks ask for none, and a small array's description is a call of
  // Python's _description (array2string): made only where it is kept.
  template <class Describe>
  void show(const py::str& where, Describe describe) {
    if (state_.shown.is_none()) return;
    const py::object description = describe();
    if (PyUnicode_GET_LENGTH(description.ptr()) <= kShownMost) set_item(state_.shown, where, description);
  }

  void record(const py::str& where, const std::string& whole) {
    set_item(state_.out, where, text(std::string_view(whole).substr(0, kRecorded)));
  }

  // _digest_into for an ndarray subclass met for the first time, in its order: its state (a reducer runs, and may
  // change the array), then its leaf (here where its array is hashed in place, else probe.py's _leaf_into), then the
  // state's parts, as Python iterates the state (a dict may change as it is walked) and with its paths (which refuse a
  // key that is not text), or the state as one part, "state".
  void subclass(const py::handle& obj, const std::string& path, const py::str& where, int depth) {
    const py::object state = owned(PyObject_CallOneArg(hooks_.state.ptr(), obj.ptr()));
    if (const SharedHead head = plain_array(reinterpret_cast<PyArrayObject*>(obj.ptr())))
      array_leaf(reinterpret_cast<PyArrayObject*>(obj.ptr()), *head, where);
    else
      hooks_.leaf_into(obj, where, state_.out, state_.shown, state_.arrays, algorithm_, state_.pending, state);
    if (state.is_none()) return;
    if (!PyDict_Check(state.ptr())) return node(state, state_path(path, "state"), depth + 1);
    for (const py::handle item : state.attr("items")()) {
      const py::tuple name_value = py::reinterpret_borrow<py::tuple>(item);
      node(name_value[1], part_path(path, name_value[0]), depth + 1);
    }
  }

  void container(const py::handle& obj, Kind kind, const std::string& path, const py::str& where, int depth) {
    const auto children = children_of(obj.ptr(), kind, path);
    const char* name = kind == Kind::kDict ? "builtins.dict" : kind == Kind::kList ? "builtins.list" : "builtins.tuple";
    const std::string count = std::to_string(children.size());
    show(where, [&] { return text(std::string(name) + " of " + count); });
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
      show(where, [&] {
        const py::str shown_value = py::reinterpret_steal<py::str>(owned(PyObject_Repr(o)).release());
        return text(kind_name + " " + shown_value.cast<std::string>());
      });
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
    show(where, [&] { return text(kind_name + " " + value); });
    record(where, whole_digest(kind_name + "|" + value));
  }

  void str_leaf(PyObject* o, const py::str& where) {
    static constexpr std::string_view kName = "builtins.str";
    Py_ssize_t size = 0;
    const char* bytes = PyUnicode_AsUTF8AndSize(o, &size);
    const Py_ssize_t length = PyUnicode_GET_LENGTH(o);
    show(where, [&] {
      if (length > 80) return py::object(text(std::string(kName) + " of length " + std::to_string(length)));
      const py::object value = owned(PyObject_Repr(o));
      return PyUnicode_GET_LENGTH(value.ptr()) <= 80
                 ? py::reinterpret_steal<py::object>(
                       owned(PyUnicode_FromFormat("%s %U", kName.data(), value.ptr())).release())
                 : py::object(text(kName));
    });
    record(where, whole_digest(std::string(kName) + "|" + std::string(bytes, static_cast<std::size_t>(size))));
  }

  void array_leaf(PyArrayObject* a, const ArrayHead& head, const py::str& where) {
    const py::handle obj(reinterpret_cast<PyObject*>(a));
    show(where, [&] {
      const std::string kind = PyArray_SIZE(a) <= 8 ? "" : qualified_name(Py_TYPE(a));  // small: array2string's text
      return kind.empty()
                 ? hooks_.description(obj, py::none())
                 : py::object(text(kind + " " + head.dtype_str.cast<std::string>() + " shape " + shape_text(a)));
    });
    const std::string whole = whole_digest(head.head, PyArray_DATA(a), static_cast<std::size_t>(PyArray_NBYTES(a)));
    record(where, whole);
    if (!state_.arrays.is_none() && head.referable) set_item(state_.arrays, where, py::make_tuple(obj, text(whole)));
  }

  const DigestWalkState& state_;
  const py::handle deadline_;
  const DigestWalkHooks& hooks_;
  const py::str algorithm_;
};

// The pickle probe's losses (loss_walk): a pair settled here is one that probe.py's _losses would find nothing in.
class LossWalk {
 public:
  explicit LossWalk(const LossWalkState& state) : state_(state) {}

  void pair(const py::handle& faithful, const py::handle& unpickled, const std::string& path, int depth) {
    if (depth > kDeepest) return;
    const py::object key =
        py::make_tuple(owned(PyLong_FromVoidPtr(faithful.ptr())), owned(PyLong_FromVoidPtr(unpickled.ptr())));
    const int known = PyDict_Contains(state_.seen.ptr(), key.ptr());
    if (known < 0) throw py::error_already_set();
    if (known) return;  // a shared pair is judged where it first appears
    PyObject *f = faithful.ptr(), *u = unpickled.ptr();
    const Kind kind = basic_kind(f);
    if (kind != Kind::kPython && basic_kind(u) == kind) {
      if (is_container(kind) && same_structure(f, u, kind)) {
        set_item(state_.seen, key, py::make_tuple(faithful, unpickled));
        const auto children = children_of(f, kind, path);
        std::size_t i = 0;
        for (const py::handle value : values_of(u, kind)) {
          pair(children[i].second, value, children[i].first, depth + 1);
          ++i;
        }
        return;
      }
      if (!is_container(kind) && same_leaf(f, u, kind))
        return set_item(state_.seen, key, py::make_tuple(faithful, unpickled));
    }
    if (kind == Kind::kPython && Py_TYPE(f) == Py_TYPE(u) && PyArray_Check(f) && subclass_pair(f, u, key, path, depth))
      return;
    append_found(owned(PyObject_CallFunctionObjArgs(state_.judge.ptr(), f, u, text(path).ptr(), py::int_(depth).ptr(),
                                                    state_.seen.ptr(), nullptr)));
  }

 private:
  // _container_losses's test: the same length and, for dicts, the same keys in the same order (text keys only here).
  static bool same_structure(PyObject* f, PyObject* u, Kind kind) {
    if (kind != Kind::kDict) return PySequence_Fast_GET_SIZE(f) == PySequence_Fast_GET_SIZE(u);
    if (PyDict_GET_SIZE(f) != PyDict_GET_SIZE(u) || !text_keys(f) || !text_keys(u)) return false;
    Py_ssize_t at_f = 0, at_u = 0;
    PyObject *key_f, *key_u, *value;
    while (PyDict_Next(f, &at_f, &key_f, &value) && PyDict_Next(u, &at_u, &key_u, &value))
      if (PyUnicode_Compare(key_f, key_u) != 0) return false;
    return true;
  }

  // The unpickled side's children in _child_values's order.
  static std::vector<py::handle> values_of(PyObject* u, Kind kind) {
    std::vector<py::handle> values;
    if (kind == Kind::kDict) {
      Py_ssize_t at = 0;
      PyObject *key, *value;
      while (PyDict_Next(u, &at, &key, &value)) values.emplace_back(value);
      return values;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(u); ++i) values.emplace_back(PySequence_Fast_GET_ITEM(u, i));
    return values;
  }

  // Two leaves of one exact kind that _losses finds nothing in; false where it must judge them.
  bool same_leaf(PyObject* f, PyObject* u, Kind kind) const {
    switch (kind) {
      case Kind::kFloat: {  // _DOUBLE.pack(f) == _DOUBLE.pack(u): bit for bit
        const double x = PyFloat_AS_DOUBLE(f), y = PyFloat_AS_DOUBLE(u);
        return std::memcmp(&x, &y, sizeof x) == 0;
      }
      case Kind::kBool:
      case Kind::kNone:
        return f == u;
      case Kind::kInt:
      case Kind::kStr:  // equal values: equal _leaf_description
        return PyObject_RichCompareBool(f, u, Py_EQ) == 1;
      case Kind::kArray:
        return same_array(reinterpret_cast<PyArrayObject*>(f), reinterpret_cast<PyArrayObject*>(u));
      default:
        return false;
    }
  }

  // _same_aspects's and _array_losses's test of two dtypes: the same object, or (an unpickled array's is another)
  // equal with the same .str.
  static bool same_dtype(PyArray_Descr* f, PyArray_Descr* u) {
    if (f == u) return true;
    if (PyDataType_HASFIELDS(f) || PyDataType_HASFIELDS(u)) return false;
    const py::handle a(reinterpret_cast<PyObject*>(f)), b(reinterpret_cast<PyObject*>(u));
    const int equal = PyObject_RichCompareBool(a.ptr(), b.ptr(), Py_EQ);
    if (equal < 0) throw py::error_already_set();
    return equal && PyObject_RichCompareBool(a.attr("str").ptr(), b.attr("str").ptr(), Py_EQ) == 1;
  }

  // _array_losses's verdict of nothing lost in the arrays themselves, for two small arrays of one type and layout whose
  // bytes are their values in C order (the faithful one's cached head says so: probe.py's _bytes_are_values, not spelt
  // again here); what their attributes hold is the caller's.
  bool same_array_part(PyArrayObject* f, PyArrayObject* u) const {
    constexpr int kAspects = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS | NPY_ARRAY_WRITEABLE;
    const int ndim = PyArray_NDIM(f);
    const auto bytes = sizeof(npy_intp) * static_cast<std::size_t>(ndim);
    if (PyArray_NBYTES(f) >= state_.referenced_from) return false;
    const SharedHead head = cached_head(f, state_.array_head);
    return head && head->in_place && same_dtype(PyArray_DESCR(f), PyArray_DESCR(u)) && ndim == PyArray_NDIM(u) &&
           (PyArray_FLAGS(f) & kAspects) == (PyArray_FLAGS(u) & kAspects) &&
           std::memcmp(PyArray_DIMS(f), PyArray_DIMS(u), bytes) == 0 &&
           std::memcmp(PyArray_STRIDES(f), PyArray_STRIDES(u), bytes) == 0 &&
           std::memcmp(PyArray_DATA(f), PyArray_DATA(u), static_cast<std::size_t>(PyArray_NBYTES(f))) == 0;
  }

  // Appends a judge's list of losses to `found`.
  void append_found(const py::object& losses) const {
    const Py_ssize_t end = PyList_GET_SIZE(state_.found.ptr());
    if (PyList_SetSlice(state_.found.ptr(), end, end, losses.ptr()) != 0) throw py::error_already_set();
  }

  // Two plain arrays with nothing lost: a plain ndarray has no attributes when no reducer is registered like ndarray's.
  bool same_array(PyArrayObject* f, PyArrayObject* u) const { return state_.bare_arrays && same_array_part(f, u); }

  // _losses for two arrays of one ndarray subclass (the same type: its first test) whose arrays lose nothing: seen,
  // then their attributes as _array_losses's end and _dict_losses walk them: probe._attributes of the faithful one, of
  // the unpickled one only when there are some; each part in the order Python iterates them, its counterpart looked
  // up when its turn comes (a reducer walked before may have changed it), one that is gone a loss of probe._loss's
  // making. False, nothing recorded, where _losses must judge the whole pair.
  bool subclass_pair(PyObject* f, PyObject* u, const py::object& key, const std::string& path, int depth) {
    if (!same_array_part(reinterpret_cast<PyArrayObject*>(f), reinterpret_cast<PyArrayObject*>(u))) return false;
    set_item(state_.seen, key, py::make_tuple(py::handle(f), py::handle(u)));
    const py::object kept = owned(PyObject_CallOneArg(state_.attributes.ptr(), f));
    const int any = PyObject_IsTrue(kept.ptr());
    if (any < 0) throw py::error_already_set();
    if (!any) return true;
    const py::object held = owned(PyObject_CallOneArg(state_.attributes.ptr(), u));
    for (const py::handle item : kept.attr("items")()) {
      const py::tuple name_value = py::reinterpret_borrow<py::tuple>(item);
      const py::handle name = name_value[0];
      const std::string part = part_path(path, owned(PyObject_Str(name.ptr())));
      const int has = PySequence_Contains(held.ptr(), name.ptr());
      if (has < 0) throw py::error_already_set();
      if (has) {
        pair(name_value[1], owned(PyObject_GetItem(held.ptr(), name.ptr())), part, depth + 1);
        continue;
      }
      const py::object lost =
          owned(PyObject_CallFunction(state_.loss.ptr(), "Osss", text(part).ptr(), "attribute", "present", "missing"));
      if (PyList_Append(state_.found.ptr(), lost.ptr()) != 0) throw py::error_already_set();
    }
    return true;
  }

  const LossWalkState& state_;
};
// One float's text as FloatingFormat writes it in positional notation with 8 digits at most after the point (Dragon4,
// unique, trimmed to the point), split there; false where the shortest text has 9 digits after the point ending in 5,
// left to NumPy. The shortest text that reads back as `value` and is nearest it (to_chars', as Python's repr) is
// NumPy's where it has at most 8 digits after the point; where it has more, NumPy rounds the value itself to 8, as
// to_chars with a precision does (exactly, half to even). Rounding the shortest text would agree, as no shorter text
// lies between the two; the one case where they could differ is a shortest text that is itself a halfway point (the
// exact ties among them), excluded as a margin whichever way a tie is broken.
bool positional_parts(double value, std::string& whole, std::string& fraction) {
  char text[64];  // magnitudes in [1e-4, 1e8) (float_words): a sign, 8 digits, the point, 21 digits at most
  const auto shortest = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed);
  std::string_view written(text, static_cast<std::size_t>(shortest.ptr - text));
  std::size_t point = written.find('.');
  const std::size_t digits = point == std::string_view::npos ? 0 : written.size() - point - 1;
  if (digits == 9 && written.back() == '5') return false;
  if (digits > 8) {
    const auto rounded = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, 8);
    written = std::string_view(text, static_cast<std::size_t>(rounded.ptr - text));
    written = written.substr(0, written.find_last_not_of('0') + 1);
    point = written.find('.');
  }
  whole = written.substr(0, point);
  fraction = point == std::string_view::npos ? "" : written.substr(point + 1);  // to_chars writes 1.0 as "1"
  return true;
}

// The words of a row of float64 `values` as FloatingFormat pads them (every whole part to the widest, every fraction
// to the longest); false where NumPy would use exponents (a magnitude >= 1e8 or < 1e-4, or a range over 1000), nan or
// inf, or where positional_parts leaves a value to NumPy.
bool float_words(const std::vector<double>& values, std::vector<std::string>& words) {
  double largest = 0, smallest = 0;
  for (double v : values) {
    if (!std::isfinite(v)) return false;
    const double magnitude = std::fabs(v);
    if (magnitude == 0) continue;
    largest = std::max(largest, magnitude);
    smallest = smallest == 0 ? magnitude : std::min(smallest, magnitude);
  }
  if (largest != 0 && (largest >= 1e8 || smallest < 0.0001 || largest / smallest > 1000.0)) return false;
  std::vector<std::pair<std::string, std::string>> parts(values.size());
  std::size_t left = 0, right = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!positional_parts(values[i], parts[i].first, parts[i].second)) return false;
    left = std::max(left, parts[i].first.size());
    right = std::max(right, parts[i].second.size());
  }
  for (const auto& [whole, fraction] : parts)
    words.push_back(std::string(left - whole.size(), ' ') + whole + "." + fraction +
                    std::string(right - fraction.size(), ' '));
  return true;
}

// A row of words as array2string's _formatArray lays it out: "[", the words one space apart, wrapped at 75 columns
// with a one-space hanging indent (_extendLine: a line of 75 columns less the "]"), "]".
std::string row_text(const std::vector<std::string>& words) {
  std::string text, line = "[";
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (line.size() + words[i].size() > 74 && line.size() > 1) {
      text += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
      line = " ";
    }
    line += words[i];
    if (i + 1 < words.size()) line += ' ';
  }
  return text + line + "]";
}

// The elements of a small 1-D array as Python objects (NumPy's getitem: either byte order, any strides).
std::vector<py::object> elements_of(PyArrayObject* a) {
  std::vector<py::object> elements;
  for (npy_intp i = 0; i < PyArray_DIMS(a)[0]; ++i)
    elements.push_back(owned(PyArray_GETITEM(a, static_cast<const char*>(PyArray_GETPTR1(a, i)))));
  return elements;
}

// The elements of a small 1-D float64 array, either byte order, any strides.
std::vector<double> doubles_of(PyArrayObject* a) {
  std::vector<double> values;
  for (npy_intp i = 0; i < PyArray_DIMS(a)[0]; ++i) {
    char bytes[sizeof(double)];
    std::memcpy(bytes, PyArray_GETPTR1(a, i), sizeof bytes);
    if (!PyArray_ISNOTSWAPPED(a)) std::reverse(bytes, bytes + sizeof bytes);
    values.push_back(std::bit_cast<double>(bytes));
  }
  return values;
}

// IntegerFormat's and BoolFormat's words: the values' str right-justified to the widest; " True" in any array.
std::vector<std::string> integer_or_bool_words(const std::vector<py::object>& elements, bool boolean) {
  std::vector<std::string> words;
  std::size_t width = 0;
  for (const py::object& e : elements) {
    words.push_back(boolean ? (e.ptr() == Py_True ? " True" : "False") : py::str(e).cast<std::string>());
    width = std::max(width, words.back().size());
  }
  for (std::string& word : words) word.insert(0, width - word.size(), ' ');
  return words;
}
}  // namespace

py::object small_row_text(const py::handle& array) {
  if (!PyArray_CheckExact(array.ptr())) return py::none();  // a subclass prints its own way (a masked array's --)
  auto* a = reinterpret_cast<PyArrayObject*>(array.ptr());
  const PyArray_Descr* descr = PyArray_DESCR(a);
  const char kind = descr->kind;
  const bool float64 = kind == 'f' && PyDataType_ELSIZE(descr) == 8;
  if (PyArray_NDIM(a) != 1 || PyArray_SIZE(a) < 1 || PyArray_SIZE(a) > 8 || PyDataType_HASFIELDS(descr) ||
      !(float64 || kind == 'i' || kind == 'u' || kind == 'b'))
    return py::none();
  std::vector<std::string> words;
  if (!float64)
    words = integer_or_bool_words(elements_of(a), kind == 'b');
  else if (!float_words(doubles_of(a), words))
    return py::none();
  return text(row_text(words));
}

void digest_walk(const py::handle& obj, const py::handle& path, const DigestWalkState& state,
                 const py::handle& deadline, const DigestWalkHooks& hooks) {
  Walk(state, deadline, hooks).node(obj, path.cast<std::string>(), 0);
}

void loss_walk(const py::handle& faithful, const py::handle& unpickled, const py::handle& path, int depth,
               const LossWalkState& state) {
  LossWalk(state).pair(faithful, unpickled, path.cast<std::string>(), depth);
}

}  // namespace parity
