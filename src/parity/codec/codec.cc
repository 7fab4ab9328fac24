// Writes and reads result files (see codec.h and docs/format.md).
#include "codec.h"

#include <fcntl.h>
#include <pybind11/stl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "atomic_file.h"
#include "json_input.h"
#include "numpy_api.h"
#include "safe_file.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

constexpr char kMagic[8] = {'P', 'A', 'R', 'I', 'T', 'Y', 'R', '\n'};
constexpr std::size_t kPreamble = 24;  // magic, u32 major, u32 minor, u64 header length
constexpr std::size_t kAlign = 64;     // blobs start on 64-byte boundaries so a mapping can be used in place
constexpr std::size_t kMisalignModulus = 16;
constexpr int kMaxDepth = 500;

py::object steal(PyObject* obj) {
  if (!obj) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(obj);
}

std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::string type_name(py::handle obj) {
  py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  return py::str(type.attr("__module__")).cast<std::string>() + "." +
         py::str(type.attr("__qualname__")).cast<std::string>();
}

// " (name)" of a function or method, whose qualified name says which one it is (a lambda a test returned): read only
// from those types, whose __qualname__ is a plain attribute that runs no code of the object's (never repr()).
std::string own_name(py::handle obj) {
  PyObject* o = obj.ptr();
  if (!PyFunction_Check(o) && !PyMethod_Check(o) && !PyCFunction_Check(o)) return "";
  PyObject* name = PyObject_GetAttrString(PyMethod_Check(o) ? PyMethod_GET_FUNCTION(o) : o, "__qualname__");
  if (!name) {
    PyErr_Clear();
    return "";
  }
  const py::str text = py::reinterpret_steal<py::object>(name);
  return " (" + text.cast<std::string>() + ")";
}

std::string hex_bits(double value) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(value)));
  return buf;
}

// The memory an array's elements occupy: [data + low, data + high) with low <= 0 (negative strides).
struct Span {
  std::ptrdiff_t low = 0, high = 0;
  bool empty = false;
  bool overflow = false;  // only a hostile file can describe an array whose reach overflows
  std::size_t size() const { return static_cast<std::size_t>(high - low); }
};

Span span_of(int ndim, const npy_intp* shape, const npy_intp* strides, npy_intp itemsize) {
  Span span;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 0) span.empty = true;
    std::ptrdiff_t reach = 0;
    span.overflow |= __builtin_mul_overflow(strides[i], shape[i] - 1, &reach);
    span.overflow |=
        __builtin_add_overflow(reach < 0 ? span.low : span.high, reach, reach < 0 ? &span.low : &span.high);
  }
  if (span.empty) return {0, 0, true, span.overflow};
  span.overflow |= __builtin_add_overflow(span.high, itemsize, &span.high);
  std::ptrdiff_t size = 0;  // size() is high - low, which must be representable too
  span.overflow |= __builtin_sub_overflow(span.high, span.low, &size);
  return span;
}

// Bytes of an element that hold no value (x87 long double keeps 10 bytes in a 12- or 16-byte slot):
// NumPy leaves them uninitialized, so they are zeroed to keep files deterministic.
struct ValueBytes {
  npy_intp itemsize = 0, value = 0, parts = 1;  // `parts` halves for complex long double
  bool has_padding() const { return value < itemsize / parts; }
  void scrub(char* element) const {
    for (npy_intp part = 0; part < parts; ++part) {
      char* p = element + part * (itemsize / parts);
      std::memset(p + value, 0, static_cast<std::size_t>(itemsize / parts - value));
    }
  }
};

ValueBytes value_bytes(PyArray_Descr* descr) {
  ValueBytes v{PyDataType_ELSIZE(descr), PyDataType_ELSIZE(descr), 1};
  const bool native = PyArray_ISNBO(descr->byteorder);
  if (LDBL_MANT_DIG == 64 && native && descr->type_num == NPY_LONGDOUBLE) v.value = 10;
  if (LDBL_MANT_DIG == 64 && native && descr->type_num == NPY_CLONGDOUBLE) v.value = 10, v.parts = 2;
  return v;
}

// Calls f(address) for every element of a strided array in C order of its index (strides of any sign,
// zero included). The writer's gather fallback and object arrays' slots both walk arrays this way.
template <class F>
void for_each_element(char* at, int dim, int ndim, const npy_intp* shape, const npy_intp* strides, F&& f) {
  if (dim == ndim) return f(at);
  for (npy_intp i = 0; i < shape[dim]; ++i) for_each_element(at + i * strides[dim], dim + 1, ndim, shape, strides, f);
}

// Copies each element into a zeroed span-sized buffer so the gaps between strided elements are zero:
// the file never depends on memory the scenario did not write.
void gather(PyArrayObject* array, char* dst, const ValueBytes& bytes) {
  char* src = PyArray_BYTES(array);
  for_each_element(src, 0, PyArray_NDIM(array), PyArray_SHAPE(array), PyArray_STRIDES(array), [&](char* at) {
    char* to = dst + (at - src);
    std::memcpy(to, at, static_cast<std::size_t>(bytes.itemsize));
    if (bytes.has_padding()) bytes.scrub(to);
  });
}

// The index of element `flat` (C order) of an array of this shape, written as index_path writes it.
std::string index_path(std::int64_t flat, int ndim, const npy_intp* shape) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(ndim));
  for (int d = ndim - 1; d >= 0; --d) index[static_cast<std::size_t>(d)] = flat % shape[d], flat /= shape[d];
  return parity::index_path(index);
}

// [<>|=]?[a-zA-Z][0-9]*(\[[0-9]*[a-zA-Z]+\])?, e.g. "<f8", "|S3", "<M8[ns]": checked by hand, since
// std::regex recurses once per character and a long hostile string would overflow the stack.
bool plain_dtype_string(const std::string& s) {
  if (s.size() > 64) return false;
  std::size_t i = 0;
  const auto run = [&](int (*is)(int)) {
    const std::size_t start = i;
    while (i < s.size() && is(static_cast<unsigned char>(s[i]))) ++i;
    return i - start;
  };
  if (i < s.size() && std::strchr("<>|=", s[i])) ++i;
  if (i >= s.size() || !std::isalpha(static_cast<unsigned char>(s[i++]))) return false;
  run(isdigit);
  if (i == s.size()) return true;
  if (s[i++] != '[') return false;
  run(isdigit);
  if (run(isalpha) == 0) return false;
  return i + 1 == s.size() && s[i] == ']';
}

// -?0x[0-9a-f]+, how ints are written: hexadecimal has no digit limit in Python, unlike decimal (4300).
bool hex_integer(const std::string& s) {
  const std::size_t start = s.rfind("-0x", 0) == 0 ? 3 : s.rfind("0x", 0) == 0 ? 2 : std::string::npos;
  return start != std::string::npos && start < s.size() &&
         s.find_first_not_of("0123456789abcdef", start) == std::string::npos;
}

// The address of every element of an object array, in C order (strides of any sign, zero included).
std::vector<PyObject**> object_slots(PyArrayObject* array) {
  std::vector<PyObject**> slots;
  if (PyArray_SIZE(array) > 0)
    for_each_element(PyArray_BYTES(array), 0, PyArray_NDIM(array), PyArray_SHAPE(array), PyArray_STRIDES(array),
                     [&](char* at) { slots.push_back(reinterpret_cast<PyObject**>(at)); });
  return slots;
}

// ---------------------------------------------------------------------------------------------------------
// Writing

// The dimensions of a strided array in increasing address order: negative strides flipped, zero-stride
// and length-1 dimensions dropped (they repeat or add no element), largest stride first. Walking them in
// C order visits each distinct element once, at increasing addresses, when `ordered` holds.
struct MemoryOrder {
  const char* lowest = nullptr;                     // the element at the lowest address
  std::vector<std::pair<npy_intp, npy_intp>> dims;  // (length, stride > 0)
  bool ordered = true;  // false for layouts that overlap themselves, which are gathered whole instead
};

MemoryOrder memory_order(PyArrayObject* array) {
  MemoryOrder m;
  m.lowest = PyArray_BYTES(array);
  for (int d = 0; d < PyArray_NDIM(array); ++d) {
    const npy_intp n = PyArray_DIM(array, d), s = PyArray_STRIDE(array, d);
    if (n <= 1 || s == 0) continue;
    if (s < 0) m.lowest += s * (n - 1);
    m.dims.emplace_back(n, s < 0 ? -s : s);
  }
  std::sort(m.dims.begin(), m.dims.end(), [](auto a, auto b) { return a.second > b.second; });
  npy_intp inner = PyArray_ITEMSIZE(array);  // bytes an element with all inner indices reaches
  for (auto it = m.dims.rbegin(); it != m.dims.rend(); ++it) {
    m.ordered &= it->second >= inner;
    inner = it->second * (it->first - 1) + inner;
  }
  return m;
}

// Writes an array's span (gaps zeroed, unused long double bytes too) at increasing addresses through a
// fixed staging buffer, so writing a strided array of any size needs 4 MB, not a copy of its span.
class SpanWriter {
 public:
  SpanWriter(AtomicFile& out, const MemoryOrder& order, const ValueBytes& bytes)
      : out_(out), order_(order), bytes_(bytes) {
    staging_.reserve(kStaging);
  }
  void write(std::size_t span_size) {
    visit(order_.lowest, 0);
    zeros(span_size - position_);
    flush();
  }

 private:
  static constexpr std::size_t kStaging = 4 << 20;
  void visit(const char* at, std::size_t dim) {
    if (dim == order_.dims.size()) return element(at);
    const auto [n, stride] = order_.dims[dim];
    if (dim + 1 == order_.dims.size()) return row(at, n, stride);
    for (npy_intp i = 0; i < n; ++i) visit(at + i * stride, dim + 1);
  }
  // The innermost dimension in one go: its span zeroed in the staging buffer, then each element copied
  // into place by a tight loop (the per-element path costs ~12 ns an element; this runs near memory speed).
  void row(const char* at, npy_intp n, npy_intp stride) {
    const std::size_t item = static_cast<std::size_t>(bytes_.itemsize);
    const std::size_t extent = static_cast<std::size_t>(stride * (n - 1)) + item;
    if (extent > kStaging) {
      for (npy_intp i = 0; i < n; ++i) element(at + i * stride);
      return;
    }
    zeros(static_cast<std::size_t>(at - order_.lowest) - position_);
    if (staging_.size() + extent > kStaging) flush();
    const std::size_t start = staging_.size();
    staging_.resize(start + extent);  // zero-filled: the gaps between elements
    char* dst = staging_.data() + start;
    switch (item) {
      case 1:
        copy_strided<1>(dst, at, n, stride);
        break;
      case 2:
        copy_strided<2>(dst, at, n, stride);
        break;
      case 4:
        copy_strided<4>(dst, at, n, stride);
        break;
      case 8:
        copy_strided<8>(dst, at, n, stride);
        break;
      case 16:
        copy_strided<16>(dst, at, n, stride);
        break;
      default:
        for (npy_intp i = 0; i < n; ++i) std::memcpy(dst + i * stride, at + i * stride, item);
    }
    if (bytes_.has_padding())
      for (npy_intp i = 0; i < n; ++i) bytes_.scrub(dst + i * stride);
    position_ += extent;
  }
  template <std::size_t N>
  static void copy_strided(char* dst, const char* src, npy_intp n, npy_intp stride) {
    for (npy_intp i = 0; i < n; ++i) std::memcpy(dst + i * stride, src + i * stride, N);
  }
  void element(const char* at) {
    zeros(static_cast<std::size_t>(at - order_.lowest) - position_);
    const std::size_t n = static_cast<std::size_t>(bytes_.itemsize);
    if (staging_.size() + n > kStaging) flush();
    staging_.insert(staging_.end(), at, at + n);
    if (bytes_.has_padding()) bytes_.scrub(staging_.data() + staging_.size() - n);
    position_ += n;
  }
  void zeros(std::size_t n) {
    position_ += n;
    while (n > 0) {
      if (staging_.size() == kStaging) flush();
      const std::size_t k = std::min(n, kStaging - staging_.size());
      staging_.insert(staging_.end(), k, '\0');
      n -= k;
    }
  }
  void flush() {
    out_.write(staging_.data(), staging_.size());
    staging_.clear();
  }

  AtomicFile& out_;
  const MemoryOrder& order_;
  const ValueBytes bytes_;
  std::vector<char> staging_;
  std::size_t position_ = 0;  // bytes of the span written so far
};

struct Blob {
  py::object owner;  // keeps the array (or bytes) alive until written
  const char* data = nullptr;
  std::size_t size = 0;
  std::optional<MemoryOrder> stream;  // a strided array, written element by element (SpanWriter)
  ValueBytes bytes;
  std::vector<char> gathered;  // a layout that overlaps itself, gathered whole
};

class Encoder {
 public:
  json encode(py::handle obj, const std::string& path, int depth);
  std::vector<Blob>& blobs() { return blobs_; }

 private:
  json encode_dict(py::handle obj, const std::string& path, int depth, bool attributes = false);
  json encode_reduced(py::handle obj, const std::string& path, int depth);
  void encode_array_form(py::handle obj, json& node, const std::string& path, int depth);
  json encode_native(py::handle obj, const std::string& path, int depth);
  json encode_sequence(py::handle obj, const char* kind, const std::string& path, int depth);
  json encode_array(PyArrayObject* array, const char* kind, const std::string& type, const std::string& path,
                    int depth = 0);
  json encode_object_array(PyArrayObject* array, const std::string& type, const std::string& path, int depth);
  json encode_dtype(py::handle dtype, const std::string& path);
  std::size_t add_bytes(py::object owner, const char* data, std::size_t size);

  std::vector<Blob> blobs_;
  // Objects already written, by identity, with the path of their first occurrence. The owning references
  // keep each object alive, so no address is reused by a temporary while encoding.
  std::unordered_map<PyObject*, std::string> seen_;
  std::vector<py::object> keep_alive_;
};

std::size_t Encoder::add_bytes(py::object owner, const char* data, std::size_t size) {
  blobs_.push_back(Blob{std::move(owner), data, size, {}, {}, {}});
  return blobs_.size() - 1;
}

json Encoder::encode_dtype(py::handle dtype, const std::string& path) {
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
  if (PyDataType_HASFIELDS(descr)) {
    json fields = json::array();
    py::dict field_map = dtype.attr("fields");
    for (py::handle name : py::tuple(dtype.attr("names"))) {
      py::tuple entry = field_map[name];
      if (entry.size() > 2) throw UnsupportedOutput(path + ": structured dtype field titles are not supported yet");
      fields.push_back({{"name", name.cast<std::string>()},
                        {"dtype", encode_dtype(entry[0], path)},
                        {"offset", entry[1].cast<std::int64_t>()}});
    }
    return {{"fields", fields},
            {"itemsize", PyDataType_ELSIZE(descr)},
            {"aligned", dtype.attr("isalignedstruct").cast<bool>()}};
  }
  if (PyDataType_HASSUBARRAY(descr)) {
    py::tuple subdtype = dtype.attr("subdtype");
    return {{"subarray", encode_dtype(subdtype[0], path)}, {"shape", subdtype[1].cast<std::vector<std::int64_t>>()}};
  }
  return {{"str", dtype.attr("str").cast<std::string>()}};
}

// Object arrays: each element through the codec (at its index path); the layout as for any array.
json Encoder::encode_object_array(PyArrayObject* array, const std::string& type, const std::string& path, int depth) {
  const int ndim = PyArray_NDIM(array);
  const npy_intp *shape = PyArray_SHAPE(array), *strides = PyArray_STRIDES(array);
  const Span span = span_of(ndim, shape, strides, PyArray_ITEMSIZE(array));
  json elements = json::array();
  std::int64_t flat = 0;
  for (PyObject** slot : object_slots(array)) {
    py::handle element = *slot ? py::handle(*slot) : py::handle(Py_None);
    elements.push_back(encode(element, path + index_path(flat++, ndim, shape), depth + 1));
  }
  return {{"kind", "ndarray"},
          {"type", type},
          {"dtype", {{"str", "|O"}}},
          {"shape", std::vector<std::int64_t>(shape, shape + ndim)},
          {"strides", std::vector<std::int64_t>(strides, strides + ndim)},
          {"offset", -span.low},
          {"writeable", PyArray_ISWRITEABLE(array) != 0},
          {"elements", elements}};
}

json Encoder::encode_array(PyArrayObject* array, const char* kind, const std::string& type, const std::string& path,
                           int depth) {
  PyArray_Descr* descr = PyArray_DESCR(array);
  if (descr->type_num == NPY_OBJECT && kind == std::string("ndarray"))
    return encode_object_array(array, type, path, depth);
  if (PyDataType_REFCHK(descr))
    throw UnsupportedOutput(path + ": arrays of dtype " +
                            py::str(reinterpret_cast<PyObject*>(descr)).cast<std::string>() +
                            " hold Python objects, which this format version cannot carry");
  const int ndim = PyArray_NDIM(array);
  const npy_intp* shape = PyArray_SHAPE(array);
  const npy_intp* strides = PyArray_STRIDES(array);
  const npy_intp itemsize = PyArray_ITEMSIZE(array);
  const Span span = span_of(ndim, shape, strides, itemsize);
  const char* first = PyArray_BYTES(array) + span.low;

  Blob blob{py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(array)), first, span.size(), {}, {}, {}};
  blob.bytes = value_bytes(descr);
  // A dense array is written straight from its memory; any other is streamed, or gathered if it overlaps.
  if (!span.empty && (static_cast<npy_intp>(span.size()) != PyArray_NBYTES(array) || blob.bytes.has_padding())) {
    MemoryOrder order = memory_order(array);
    if (order.ordered) {
      blob.stream = std::move(order);
    } else {
      blob.gathered.assign(span.size(), 0);
      gather(array, blob.gathered.data() - span.low, blob.bytes);
      blob.data = blob.gathered.data();
    }
  }
  blobs_.push_back(std::move(blob));
  return {{"kind", kind},
          {"type", type},
          {"dtype", encode_dtype(py::handle(reinterpret_cast<PyObject*>(descr)), path)},
          {"shape", std::vector<std::int64_t>(shape, shape + ndim)},
          {"strides", std::vector<std::int64_t>(strides, strides + ndim)},
          {"blob", blobs_.size() - 1},
          {"offset", -span.low},
          {"misalign", reinterpret_cast<std::uintptr_t>(first) % kMisalignModulus},
          {"writeable", PyArray_ISWRITEABLE(array) != 0}};
}

// JSON holds only valid UTF-8, so a key with a lone surrogate cannot be recorded.
std::string utf8_key(py::handle key, const std::string& path) {
  try {
    return key.cast<std::string>();
  } catch (const std::exception&) {  // py::cast_error, with Python's UnicodeEncodeError pending
    PyErr_Clear();
    throw UnsupportedOutput(path + ": dict key " + py::repr(key).cast<std::string>() + " is not valid UTF-8");
  }
}

json Encoder::encode_dict(py::handle obj, const std::string& path, int depth, bool attributes) {
  json items = json::array();
  for (auto [key, value] : py::reinterpret_borrow<py::dict>(obj)) {
    if (!PyUnicode_Check(key.ptr()))
      throw UnsupportedOutput(path + ": dict key " + py::repr(key).cast<std::string>() + " of type " + type_name(key) +
                              " is not a str");
    const std::string k = utf8_key(key, path);
    items.push_back(json::array({k, encode(value, attributes ? state_path(path, k) : key_path(path, k), depth + 1)}));
  }
  return {{"kind", "dict"}, {"type", type_name(obj)}, {"items", items}};
}

json Encoder::encode_sequence(py::handle obj, const char* kind, const std::string& path, int depth) {
  json items = json::array();
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  for (std::size_t i = 0; i < seq.size(); ++i)
    items.push_back(encode(seq[i], path + "[" + std::to_string(i) + "]", depth + 1));
  return {{"kind", kind}, {"type", type_name(obj)}, {"items", items}};
}

// A type a backend maps numpy.ndarray to (TYPE_MAP) records the plain array it stands for as `array`, so that
// compare can check it against gold's array. Never memoized: it is a fresh array, part of its owner only.
void Encoder::encode_array_form(py::handle obj, json& node, const std::string& path, int depth) {
  py::object form;
  try {
    form = py::module_::import("parity.reducers").attr("array_form")(obj);
  } catch (py::error_already_set& e) {
    throw UnsupportedOutput(path + ": the array form of type " + type_name(obj) + " raised " + e.what());
  }
  if (form.is_none()) return;
  if (!PyArray_CheckExact(form.ptr()))
    throw UnsupportedOutput(path + ": the array form of type " + type_name(obj) + " is a " + type_name(form) +
                            ", not a numpy.ndarray");
  // An array of Python objects has no values of its own to check: compare reports the leaf `uncompared`.
  if (PyDataType_REFCHK(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(form.ptr())))) return;
  keep_alive_.push_back(form);
  node["array"] = encode_array(reinterpret_cast<PyArrayObject*>(form.ptr()), "ndarray", type_name(obj), path, depth);
}

// A reducer's state: a dict of attributes is written with attribute paths (outputs['m'].mask).
json Encoder::encode_reduced(py::handle obj, const std::string& path, int depth) {
  py::object reduced;
  try {
    reduced = py::module_::import("parity.reducers").attr("reduce")(obj);
  } catch (py::error_already_set& e) {
    throw UnsupportedOutput(path + ": the reducer for type " + type_name(obj) + " raised " + e.what());
  }
  if (reduced.is_none())
    throw UnsupportedOutput(path + ": cannot write an object of type " + type_name(obj) + own_name(obj) +
                            ". Return arrays, scalars, str, bytes, None, dict, list or tuple instead, convert it "
                            "in the backend's materialize(), or register a reducer with "
                            "parity.reducers.register()");
  py::tuple pair = reduced;
  json node;
  if (PyArray_Check(obj.ptr())) {
    auto values = py::reinterpret_steal<py::object>(
        PyArray_View(reinterpret_cast<PyArrayObject*>(obj.ptr()), nullptr, &PyArray_Type));
    if (!values) throw py::error_already_set();
    node = encode_array(reinterpret_cast<PyArrayObject*>(values.ptr()), "ndarray", type_name(obj), path, depth);
  } else {
    node = {{"kind", "object"}, {"type", type_name(obj)}};
    encode_array_form(obj, node, path, depth);
  }
  node["reducer"] = pair[0].cast<std::string>();
  py::handle state = pair[1];
  if (!state.is_none())
    node["state"] = PyDict_CheckExact(state.ptr()) ? encode_dict(state, path, depth + 1, true)
                                                   : encode(state, path + ".state", depth + 1);
  return node;
}

json Encoder::encode(py::handle obj, const std::string& path, int depth) {
  if (depth > kMaxDepth)
    throw UnsupportedOutput(path + ": nested deeper than " + std::to_string(kMaxDepth) +
                            " levels (a reference cycle?)");
  PyObject* o = obj.ptr();
  // Containers, arrays and reduced objects are memoized: a repeat becomes a reference to the first.
  const bool memo =
      !(o == Py_None || PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o) ||
        PyUnicode_CheckExact(o) || PyBytes_CheckExact(o) || PyArray_IsScalar(o, Generic));
  if (memo) {
    if (auto it = seen_.find(o); it != seen_.end()) return {{"kind", "ref"}, {"path", it->second}};
  }
  json node = encode_native(obj, path, depth);
  if (memo) {
    seen_.emplace(o, path);
    keep_alive_.push_back(py::reinterpret_borrow<py::object>(obj));
  }
  return node;
}

json Encoder::encode_native(py::handle obj, const std::string& path, int depth) {
  PyObject* o = obj.ptr();
  if (o == Py_None) return {{"kind", "none"}};
  if (PyArray_CheckExact(o))
    return encode_array(reinterpret_cast<PyArrayObject*>(o), "ndarray", type_name(obj), path, depth);
  if (PyArray_Check(o)) return encode_reduced(obj, path, depth);
  if (PyArray_IsScalar(o, Generic)) {
    auto array = py::reinterpret_steal<py::object>(PyArray_FromScalar(o, nullptr));
    if (!array) throw py::error_already_set();
    return encode_array(reinterpret_cast<PyArrayObject*>(array.ptr()), "scalar", type_name(obj), path);
  }
  if (PyBool_Check(o)) return {{"kind", "bool"}, {"value", o == Py_True}};
  if (PyLong_CheckExact(o))
    return {{"kind", "int"}, {"value", py::str(steal(PyNumber_ToBase(o, 16))).cast<std::string>()}};
  if (PyFloat_CheckExact(o)) return {{"kind", "float"}, {"bits", hex_bits(PyFloat_AS_DOUBLE(o))}};
  if (PyComplex_CheckExact(o))
    return {{"kind", "complex"}, {"bits", {hex_bits(PyComplex_RealAsDouble(o)), hex_bits(PyComplex_ImagAsDouble(o))}}};
  if (PyUnicode_CheckExact(o)) {
    auto utf8 = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(o, "utf-8", "surrogatepass"));
    if (!utf8) throw py::error_already_set();
    return {{"kind", "str"}, {"blob", add_bytes(utf8, PyBytes_AS_STRING(utf8.ptr()), PyBytes_GET_SIZE(utf8.ptr()))}};
  }
  if (PyBytes_CheckExact(o))
    return {{"kind", "bytes"},
            {"blob", add_bytes(py::reinterpret_borrow<py::object>(obj), PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o))}};
  if (PyDict_Check(o)) {
    // A dict subclass with a reducer of its own (scipy's dok sparse formats) is that object, not its items.
    if (!PyDict_CheckExact(o) && py::module_::import("parity.reducers").attr("has_reducer")(obj).cast<bool>())
      return encode_reduced(obj, path, depth);
    return encode_dict(obj, path, depth);
  }
  if (PyList_Check(o)) return encode_sequence(obj, "list", path, depth);
  if (PyTuple_Check(o)) return encode_sequence(obj, "tuple", path, depth);
  return encode_reduced(obj, path, depth);
}

void put_u32(char* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(char* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint64_t get_u64(const unsigned char* at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | at[i];
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Reading

class Decoder {
 public:
  Decoder(std::filesystem::path file, const ReadLimits& limits) : file_(std::move(file)), limits_(limits) {}
  /// Decodes the file open at `fd` (file_ names it in messages).
  Node read(int fd);

 private:
  [[noreturn]] void fail(const std::string& why) const { throw FormatError(file_.string() + ": " + why); }
  // An integer field of the file, as T. nlohmann converts a float, or an integer T cannot hold, without a check
  // (undefined behaviour for a float out of range): a file says 4.2e20 where a dimension goes.
  template <typename T>
  T integer(const json& value, const std::string& what) const {
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    bool fits = false;
    if (value.is_number_unsigned()) {
      fits = value.get<std::uint64_t>() <= max;
    } else if (value.is_number_integer()) {
      const std::int64_t v = value.get<std::int64_t>();
      fits = v >= 0
                 ? static_cast<std::uint64_t>(v) <= max
                 : std::numeric_limits<T>::is_signed && v >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
    }
    if (!fits) fail(what + " is not an integer in range: " + value.dump().substr(0, 64));
    return value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>())
                                      : static_cast<T>(value.get<std::int64_t>());
  }
  template <typename T>
  T integer_at(const json& node, const char* key, const std::string& path) const {
    return integer<T>(node.at(key), path + ": '" + key + "'");
  }
  template <typename T>
  std::vector<T> integers_at(const json& node, const char* key, const std::string& path) const {
    const json& list = node.at(key);
    if (!list.is_array()) fail(path + ": '" + key + "' is not a list");
    std::vector<T> out;
    for (const json& v : list) out.push_back(integer<T>(v, path + ": '" + key + "'"));
    return out;
  }
  Node decode(const json& node, const std::string& path, int depth);
  Node decode_kind(const json& node, const std::string& path, int depth);
  void decode_state(const json& node, Node& out, int depth);
  Node decode_array_form(const json& form, const std::string& path, int depth);
  Node decode_array(const json& node, Node::Kind kind, const std::string& path);
  Node decode_object_array(const json& node, const std::string& path, int depth);
  py::object decode_dtype(const json& dtype, const std::string& path, int depth);
  std::pair<std::uint64_t, std::uint64_t> blob(const json& node, const std::string& path) const;
  py::object copy_misaligned(std::uint64_t file_offset, std::uint64_t size, std::uint64_t misalign);
  void read_exact(char* into, std::uint64_t size, std::uint64_t offset) const;
  void map_file(int fd);
  void charge(std::uint64_t bytes, const std::string& path);

  std::filesystem::path file_;
  ReadLimits limits_;
  std::uint64_t charged_ = 0;  // bytes of copies made so far (charge)
  // Misaligned blobs copied once, by (file offset, size, misalignment): a file naming one blob from many
  // arrays costs one copy, not one per array.
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, py::object> misaligned_;
  std::uint64_t file_size_ = 0, data_start_ = 0;
  json blobs_;
  // The whole file, mapped privately: arrays view their blobs in place (copy-on-write when written to).
  // A uint8 array over the mapping is every such array's base; the mapping goes when the last one does.
  const char* map_ = nullptr;
  py::object mapping_;
};

void unmap_capsule(PyObject* capsule) {
  auto* size = static_cast<std::size_t*>(PyCapsule_GetContext(capsule));
  ::munmap(PyCapsule_GetPointer(capsule, "parity.mapping"), *size);
  delete size;
}

void Decoder::map_file(int fd) {
  void* at = ::mmap(nullptr, file_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (at == MAP_FAILED) fail(std::string("cannot map: ") + std::strerror(errno));
  auto capsule = py::reinterpret_steal<py::object>(PyCapsule_New(at, "parity.mapping", unmap_capsule));
  if (!capsule) {
    ::munmap(at, file_size_);
    throw py::error_already_set();
  }
  PyCapsule_SetContext(capsule.ptr(), new std::size_t(file_size_));
  npy_intp size = static_cast<npy_intp>(file_size_);
  PyObject* bytes = PyArray_New(&PyArray_Type, 1, &size, NPY_UINT8, nullptr, at, 0, NPY_ARRAY_CARRAY, nullptr);
  if (!bytes) throw py::error_already_set();
  mapping_ = py::reinterpret_steal<py::object>(bytes);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(bytes), capsule.release().ptr()) < 0)
    throw py::error_already_set();
  map_ = static_cast<const char*>(at);
}

// Callers have checked offset + size against the file size (blob(), the preamble checks).
void Decoder::read_exact(char* into, std::uint64_t size, std::uint64_t offset) const {
  if (offset > file_size_ || size > file_size_ - offset) fail("truncated");
  std::memcpy(into, map_ + offset, size);
}

// Every copy decoding makes counts against the limit, so a blob named by many nodes cannot multiply a small
// file into gigabytes; the one that passes it is refused before anything is allocated.
void Decoder::charge(std::uint64_t bytes, const std::string& path) {
  if (bytes > limits_.max_memory || charged_ > limits_.max_memory - bytes)
    fail(path + ": decoding the outputs would take more than " + std::to_string(limits_.max_memory) +
         " bytes of memory (values copied so far: " + std::to_string(charged_) +
         ", this one: " + std::to_string(bytes) + "; raise it with --max-result-memory)");
  charged_ += bytes;
}

std::pair<std::uint64_t, std::uint64_t> Decoder::blob(const json& node, const std::string& path) const {
  const auto index = integer_at<std::uint64_t>(node, "blob", path);
  if (index >= blobs_.size()) fail(path + ": blob " + std::to_string(index) + " does not exist");
  const auto offset = integer_at<std::uint64_t>(blobs_[index], "offset", path);
  const auto size = integer_at<std::uint64_t>(blobs_[index], "nbytes", path);
  if (offset > file_size_ - data_start_ || size > file_size_ - data_start_ - offset)
    fail(path + ": blob " + std::to_string(index) + " extends past the end of the file (truncated?)");
  return {data_start_ + offset, size};
}

py::object Decoder::decode_dtype(const json& dtype, const std::string& path, int depth) {
  if (depth > 32) fail(path + ": dtype nested too deeply");
  py::object spec;
  bool aligned = false;
  if (dtype.contains("str")) {
    // Only plain type strings such as "<f8", "|S3", "<M8[ns]": never anything the dtype parser would look up.
    const auto text = dtype.at("str").get<std::string>();
    if (!plain_dtype_string(text)) fail(path + ": invalid dtype string '" + text.substr(0, 64) + "'");
    spec = py::str(text);
  } else if (dtype.contains("fields")) {
    py::list names, formats, offsets;
    for (const json& field : dtype.at("fields")) {
      names.append(py::str(field.at("name").get<std::string>()));
      formats.append(decode_dtype(field.at("dtype"), path, depth + 1));
      offsets.append(integer_at<std::int64_t>(field, "offset", path));
    }
    py::dict d;
    d["names"] = names, d["formats"] = formats, d["offsets"] = offsets;
    d["itemsize"] = integer_at<std::int64_t>(dtype, "itemsize", path);
    spec = d;
    aligned = dtype.value("aligned", false);
  } else if (dtype.contains("subarray")) {
    spec = py::make_tuple(decode_dtype(dtype.at("subarray"), path, depth + 1),
                          py::tuple(py::cast(integers_at<std::int64_t>(dtype, "shape", path))));
  } else {
    fail(path + ": dtype description has none of str, fields, subarray");
  }
  PyArray_Descr* descr = nullptr;
  const int ok = aligned ? PyArray_DescrAlignConverter(spec.ptr(), &descr) : PyArray_DescrConverter(spec.ptr(), &descr);
  if (!ok) {
    std::string why = py::error_already_set().what();
    fail(path + ": invalid dtype: " + why);
  }
  auto result = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(descr));
  if (PyDataType_REFCHK(descr))
    fail(path + ": dtype " + py::str(result).cast<std::string>() + " holds Python objects; refused");
  return result;
}

// An object array is decoded filled with None, with its exact layout; its elements are nodes of their own,
// put in place by to_python, so reading runs no code for them either.
Node Decoder::decode_object_array(const json& node, const std::string& path, int depth) {
  const auto shape = integers_at<npy_intp>(node, "shape", path);
  const auto strides = integers_at<npy_intp>(node, "strides", path);
  if (shape.size() != strides.size() || shape.size() > NPY_MAXDIMS) fail(path + ": bad shape or strides");
  const json& elements = node.at("elements");
  std::uint64_t count = 1;
  for (npy_intp n : shape)
    if (n < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(n), &count)) fail(path + ": bad shape");
  if (count != elements.size()) fail(path + ": element count does not match the shape");
  const Span span = span_of(static_cast<int>(shape.size()), shape.data(), strides.data(), sizeof(PyObject*));
  const auto offset = integer_at<std::uint64_t>(node, "offset", path);
  if (span.overflow || (!span.empty && static_cast<std::uint64_t>(-span.low) != offset) ||
      span.size() % sizeof(PyObject*) != 0 || span.size() / sizeof(PyObject*) > 4 * count + 64)
    fail(path + ": shape and strides do not describe the elements");
  npy_intp slots = static_cast<npy_intp>(span.size() / sizeof(PyObject*)) + 1;
  auto buffer = py::reinterpret_steal<py::object>(PyArray_SimpleNew(1, &slots, NPY_OBJECT));
  if (!buffer || PyArray_FillWithScalar(reinterpret_cast<PyArrayObject*>(buffer.ptr()), Py_None) < 0)
    throw py::error_already_set();
  char* start = PyArray_BYTES(reinterpret_cast<PyArrayObject*>(buffer.ptr())) + offset;
  PyObject* raw = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(NPY_OBJECT), static_cast<int>(shape.size()),
                                       shape.data(), strides.data(), start, NPY_ARRAY_WRITEABLE, nullptr);
  if (!raw) throw py::error_already_set();
  Node out;
  out.array = py::reinterpret_steal<py::object>(raw);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(raw), buffer.release().ptr()) < 0)
    throw py::error_already_set();
  if (!node.at("writeable").get<bool>()) PyArray_CLEARFLAGS(reinterpret_cast<PyArrayObject*>(raw), NPY_ARRAY_WRITEABLE);
  out.kind = Node::Kind::Array;
  out.type = node.at("type").get<std::string>();
  std::int64_t flat = 0;
  for (const json& element : elements)
    out.items.push_back(
        decode(element, path + index_path(flat++, static_cast<int>(shape.size()), shape.data()), depth + 1));
  return out;
}

Node Decoder::decode_array(const json& node, Node::Kind kind, const std::string& path) {
  py::object dtype = decode_dtype(node.at("dtype"), path, 0);
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
  const auto shape = integers_at<npy_intp>(node, "shape", path);
  const auto strides = integers_at<npy_intp>(node, "strides", path);
  if (shape.size() != strides.size() || shape.size() > NPY_MAXDIMS) fail(path + ": bad shape or strides");
  for (npy_intp n : shape)
    if (n < 0) fail(path + ": negative dimension");
  const auto [file_offset, size] = blob(node, path);
  const auto offset = integer_at<std::uint64_t>(node, "offset", path);
  const auto misalign =
      (node.contains("misalign") ? integer_at<std::uint64_t>(node, "misalign", path) : 0) % kMisalignModulus;
  const Span span = span_of(static_cast<int>(shape.size()), shape.data(), strides.data(), PyDataType_ELSIZE(descr));
  if (span.overflow) fail(path + ": shape and strides reach beyond any possible buffer");
  if (!span.empty && (static_cast<std::uint64_t>(-span.low) != offset || span.size() != size))
    fail(path + ": shape, strides and dtype do not match the stored bytes");

  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  const int flags = node.at("writeable").get<bool>() ? NPY_ARRAY_WRITEABLE : 0;
  // In place when the mapping gives the original alignment (blobs start on 64-byte boundaries), else a
  // copy into a buffer with room to reproduce the misalignment; either way the array views its base.
  py::object base = mapping_;
  char* start = const_cast<char*>(map_) + file_offset;
  if (misalign != 0) {
    auto [cached, fresh] = misaligned_.try_emplace({file_offset, size, misalign});
    if (fresh) {
      charge(size + 2 * kAlign, path);
      cached->second = copy_misaligned(file_offset, size, misalign);
    }
    base = cached->second;
    start = PyArray_BYTES(reinterpret_cast<PyArrayObject*>(base.ptr())) + misalign;
  }
  PyObject* raw = PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(shape.size()), shape.data(),
                                       strides.data(), start + offset, flags, nullptr);
  if (!raw) throw py::error_already_set();
  auto array = py::reinterpret_steal<py::object>(raw);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(raw), base.release().ptr()) < 0)
    throw py::error_already_set();
  Node out;
  out.kind = kind;
  out.type = node.at("type").get<std::string>();
  out.array = std::move(array);
  return out;
}

// A 64-aligned buffer holding the blob `misalign` bytes past its start, which reproduces the address the
// array had modulo 16 (a deliberately misaligned array stays misaligned).
py::object Decoder::copy_misaligned(std::uint64_t file_offset, std::uint64_t size, std::uint64_t misalign) {
  npy_intp buffer_size = static_cast<npy_intp>(size + 2 * kAlign);
  PyObject* raw = PyArray_New(&PyArray_Type, 1, &buffer_size, NPY_UINT8, nullptr, nullptr, 0, 0, nullptr);
  if (!raw) throw py::error_already_set();
  auto buffer = py::reinterpret_steal<py::object>(raw);
  char* data = PyArray_BYTES(reinterpret_cast<PyArrayObject*>(raw));
  const std::size_t shift = (kAlign - reinterpret_cast<std::uintptr_t>(data) % kAlign) % kAlign;
  py::object aligned =
      buffer[py::slice(static_cast<py::ssize_t>(shift), static_cast<py::ssize_t>(shift + size + kAlign), 1)];
  char* start = PyArray_BYTES(reinterpret_cast<PyArrayObject*>(aligned.ptr())) + misalign;
  read_exact(start, size, file_offset);
  return aligned;
}

double from_bits(const json& bits) { return std::bit_cast<double>(std::stoull(bits.get<std::string>(), nullptr, 16)); }

// A reducer's state: a dict of attributes is read back with attribute paths, as it was written.
void Decoder::decode_state(const json& node, Node& out, int depth) {
  out.reducer = node.at("reducer").get<std::string>();
  if (!node.contains("state")) return;
  const json& state = node.at("state");
  if (state.at("kind") != "dict") return out.state.push_back(decode(state, out.path + ".state", depth + 1));
  Node attributes;
  attributes.kind = Node::Kind::Dict;
  attributes.type = "builtins.dict";
  // No path of its own: it is part of its owner, never the target of a reference.
  for (const json& item : state.at("items")) {
    attributes.keys.push_back(item.at(0).get<std::string>());
    attributes.items.push_back(decode(item.at(1), state_path(out.path, attributes.keys.back()), depth + 1));
  }
  out.state.push_back(std::move(attributes));
}

// An object's `array`: a plain array node only (no reference, reducer or object elements), at the object's path.
Node Decoder::decode_array_form(const json& form, const std::string& path, int depth) {
  if (!form.is_object() || form.value("kind", json()) != "ndarray" || form.contains("reducer") ||
      form.contains("elements"))
    fail(path + ": an object's 'array' is not a plain ndarray node");
  return decode(form, path, depth + 1);
}

Node Decoder::decode(const json& node, const std::string& path, int depth) {
  if (depth > kMaxDepth) fail(path + ": nested too deeply");
  if (node.at("kind") == "ref") {
    Node ref;
    ref.path = path;
    ref.ref = node.at("path").get<std::string>();
    return ref;
  }
  Node out = decode_kind(node, path, depth);
  out.path = path;
  if (node.contains("reducer")) decode_state(node, out, depth);
  return out;
}

Node Decoder::decode_kind(const json& node, const std::string& path, int depth) {
  const auto kind = node.at("kind").get<std::string>();
  Node out;
  out.type = node.value("type", "");
  auto container = [&](Node::Kind k, bool keyed) {
    out.kind = k;
    std::size_t i = 0;
    for (const json& item : node.at("items")) {
      if (keyed) out.keys.push_back(item.at(0).get<std::string>());
      const std::string sub = keyed ? key_path(path, out.keys.back()) : path + "[" + std::to_string(i++) + "]";
      out.items.push_back(decode(keyed ? item.at(1) : item, sub, depth + 1));
    }
    return out;
  };
  auto read_text = [&](Node::Kind k) {
    out.kind = k;
    const auto [offset, size] = blob(node, path);
    charge(size, path);
    out.text.resize(size);
    read_exact(out.text.data(), size, offset);
  };
  if (kind == "dict") return container(Node::Kind::Dict, true);
  if (kind == "list") return container(Node::Kind::List, false);
  if (kind == "tuple") return container(Node::Kind::Tuple, false);
  if (kind == "ndarray" && node.contains("elements")) return decode_object_array(node, path, depth);
  if (kind == "ndarray") return decode_array(node, Node::Kind::Array, path);
  if (kind == "scalar") return decode_array(node, Node::Kind::Scalar, path);
  if (kind == "str") {
    read_text(Node::Kind::Str);
    // The writer encodes with surrogatepass; anything else is no str it wrote.
    PyObject* decoded =
        PyUnicode_DecodeUTF8(out.text.data(), static_cast<Py_ssize_t>(out.text.size()), "surrogatepass");
    if (!decoded) {
      if (PyErr_ExceptionMatches(PyExc_MemoryError)) throw py::error_already_set();  // no fault of the file's
      PyErr_Clear();
      fail(path + ": str is not UTF-8");
    }
    Py_DECREF(decoded);
    return out.type = "builtins.str", out;
  }
  if (kind == "bytes") return read_text(Node::Kind::Bytes), out.type = "builtins.bytes", out;
  if (kind == "none") return out.type = "builtins.NoneType", out;
  if (kind == "object") {
    if (!node.contains("reducer")) fail(path + ": object without a reducer");
    if (node.contains("array")) out.array_form.push_back(decode_array_form(node.at("array"), path, depth));
    return out.kind = Node::Kind::Object, out;
  }
  out.type = "builtins." + kind;
  if (kind == "bool") return out.kind = Node::Kind::Bool, out.boolean = node.at("value").get<bool>(), out;
  if (kind == "int") {
    out.kind = Node::Kind::Int, out.text = node.at("value").get<std::string>();
    if (!hex_integer(out.text)) fail(path + ": int value is not a hexadecimal integer");
    return out;
  }
  if (kind == "float") return out.kind = Node::Kind::Float, out.number = {from_bits(node.at("bits")), 0.0}, out;
  if (kind == "complex")
    return out.kind = Node::Kind::Complex,
           out.number = {from_bits(node.at("bits").at(0)), from_bits(node.at("bits").at(1))}, out;
  fail(path + ": unknown kind '" + kind + "'");
}

// A reference may only point back to a node completed before it. References are not expanded (a hostile
// file could double its size with every level): users resolve them with NodeIndex.
void check_references(const Node& root) {
  std::unordered_set<std::string> finished;
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (!node.ref.empty()) {
      if (!finished.count(node.ref))
        throw FormatError(node.path + ": refers to " + node.ref + ", which is not an earlier output");
      return;
    }
    for (const Node& item : node.items) visit(item);
    for (const Node& state : node.state) visit(state);
    if (!node.path.empty()) finished.insert(node.path);
  };
  visit(root);
}

Node Decoder::read(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) fail(std::string("cannot seek: ") + std::strerror(errno));
  file_size_ = static_cast<std::uint64_t>(end);
  if (file_size_ < kPreamble) fail("too short to be a parity result file");
  map_file(fd);
  unsigned char pre[kPreamble];
  read_exact(reinterpret_cast<char*>(pre), kPreamble, 0);
  if (std::memcmp(pre, kMagic, sizeof kMagic) != 0) fail("not a parity result file (bad magic)");
  const auto major = get_u64(pre + 8, 4), minor = get_u64(pre + 12, 4), header_size = get_u64(pre + 16, 8);
  if (major > kFormatMajor)
    fail("written by result format " + std::to_string(major) + "." + std::to_string(minor) +
         ", newer than this parity reads (" + std::to_string(kFormatMajor) + ".x): upgrade parity");
  if (header_size > file_size_ - kPreamble) fail("header extends past the end of the file (truncated?)");
  charge(header_size, "the header");  // a sparse file can claim a header of gigabytes
  std::string header(header_size, '\0');
  read_exact(header.data(), header_size, kPreamble);
  data_start_ = align_up(kPreamble + header_size);
  if (data_start_ > file_size_) data_start_ = file_size_;
  try {
    const json doc = parse_json(header, "", 4 * kMaxDepth + 64);  // 4 levels or fewer per node
    blobs_ = doc.at("blobs");
    if (!blobs_.is_array()) fail("blobs is not a list");
    Node root = decode(doc.at("outputs"), "outputs", 0);
    try {
      check_references(root);
    } catch (const FormatError& e) {
      fail(e.what());
    }
    return root;
  } catch (const json::exception& e) {
    fail(std::string("malformed header: ") + e.what());
  } catch (const std::invalid_argument& e) {
    fail(std::string("malformed number: ") + e.what());
  } catch (const std::out_of_range& e) {
    fail(std::string("malformed number: ") + e.what());
  } catch (py::error_already_set& e) {        // NumPy refusing a description (e.g. "array is too big")
    if (e.matches(PyExc_MemoryError)) throw;  // the machine's limit, not the file's fault: compare says so
    fail(std::string("invalid array description: ") + e.what());
  }
}

}  // namespace

std::string key_path(const std::string& path, const std::string& key) {
  std::string quoted;
  for (char c : key) quoted += (c == '\'' || c == '\\') ? std::string{'\\', c} : std::string{c};
  return path + "['" + quoted + "']";
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

const char* kind_name(Node::Kind kind) {
  static constexpr const char* names[] = {"dict",    "list", "tuple", "none",    "bool",   "int",   "float",
                                          "complex", "str",  "bytes", "ndarray", "scalar", "object"};
  return names[static_cast<int>(kind)];
}

void write_result(const std::filesystem::path& file, py::handle outputs) {
  Encoder encoder;
  json doc = {{"outputs", encoder.encode(outputs, "outputs", 0)}};
  json blobs = json::array();
  std::size_t offset = 0;
  for (const Blob& b : encoder.blobs()) {
    blobs.push_back({{"offset", offset}, {"nbytes", b.size}});
    offset = align_up(offset + b.size);
  }
  doc["blobs"] = blobs;
  const std::string header = doc.dump();

  char pre[kPreamble];
  std::memcpy(pre, kMagic, sizeof kMagic);
  put_u32(pre + 8, kFormatMajor);
  put_u32(pre + 12, kFormatMinor);
  put_u64(pre + 16, header.size());
  AtomicFile out(file);
  out.write(pre, kPreamble);
  out.write(header);
  if (!encoder.blobs().empty()) out.pad(align_up(out.written()) - out.written());
  // No padding after the last blob: the file ends with data, so any truncation is detected.
  for (std::size_t i = 0; i < encoder.blobs().size(); ++i) {
    if (i > 0) out.pad(align_up(out.written()) - out.written());
    const Blob& blob = encoder.blobs()[i];
    if (blob.stream)
      SpanWriter(out, *blob.stream, blob.bytes).write(blob.size);
    else
      out.write(blob.data, blob.size);
  }
  out.commit();
}

namespace {
// Opens the file as safe_file.h does; a refusal is the file's FormatError, like any other unreadable file.
template <typename Open>
Node read_opened(const std::filesystem::path& shown, const ReadLimits& limits, Open open) {
  FileDescriptor fd;
  try {
    fd = open();
  } catch (const UnsafeFileError& e) {
    throw FormatError(e.what());
  } catch (const std::system_error& e) {
    throw FormatError(shown.string() + ": cannot open: " + e.code().message());
  }
  return Decoder(shown, limits).read(fd.get());
}
}  // namespace

Node read_result(const std::filesystem::path& file, const ReadLimits& limits) {
  return read_opened(file, limits, [&] { return open_regular_file(file); });
}

Node read_result(const std::filesystem::path& dir, const std::filesystem::path& relative, const ReadLimits& limits) {
  return read_opened(dir / relative, limits, [&] { return open_regular_file(dir, relative); });
}

namespace {

// Builds Python objects; `built` maps each object's path to what was built there, so a reference
// (written for an object seen twice) becomes that same object again.
class Rebuilder {
 public:
  py::object build(const Node& node) {
    if (!node.ref.empty()) return built_.at(node.ref);
    py::object obj;
    try {
      obj = build_node(node);
    } catch (py::error_already_set& e) {  // a reducer raising, a value Python refuses: the file is at fault
      throw FormatError(node.path + ": cannot rebuild " + (node.type.empty() ? kind_name(node.kind) : node.type) +
                        ": " + e.what());
    }
    if (!node.path.empty()) built_[node.path] = obj;
    return obj;
  }

 private:
  py::object build_node(const Node& node) {
    py::object obj = build_value(node);
    if (node.reducer.empty()) return obj;
    py::object state = node.state.empty() ? py::none() : build(node.state.front());
    try {
      return py::module_::import("parity.reducers")
          .attr("rebuild")(node.reducer, node.type, node.kind == Node::Kind::Array ? obj : py::none(), state);
    } catch (py::error_already_set& e) {
      if (!e.matches(py::module_::import("parity.reducers").attr("RebuildError"))) throw;
      throw FormatError(node.path + ": " + py::str(e.value()).cast<std::string>());  // names the allow-list
    }
  }

  py::object build_value(const Node& node) {
    switch (node.kind) {
      case Node::Kind::Dict: {
        py::dict d;
        for (std::size_t i = 0; i < node.keys.size(); ++i) d[py::str(node.keys[i])] = build(node.items[i]);
        return d;
      }
      case Node::Kind::List:
      case Node::Kind::Tuple: {
        py::list items;
        for (const Node& item : node.items) items.append(build(item));
        return node.kind == Node::Kind::List ? py::object(std::move(items)) : py::object(py::tuple(items));
      }
      case Node::Kind::None:
      case Node::Kind::Object:
        return py::none();
      case Node::Kind::Bool:
        return py::bool_(node.boolean);
      case Node::Kind::Int:
        return steal(PyLong_FromString(node.text.c_str(), nullptr, 16));
      case Node::Kind::Float:
        return py::float_(node.number.real());
      case Node::Kind::Complex:
        return steal(PyComplex_FromDoubles(node.number.real(), node.number.imag()));
      case Node::Kind::Str:
        return steal(
            PyUnicode_DecodeUTF8(node.text.data(), static_cast<Py_ssize_t>(node.text.size()), "surrogatepass"));
      case Node::Kind::Bytes:
        return py::bytes(node.text);
      case Node::Kind::Array:
        return node.items.empty() ? node.array : fill_object_array(node);
      case Node::Kind::Scalar:
        return node.array[py::tuple()];
    }
    return py::none();
  }

  // Puts each element (rebuilt) in its slot; the flag is lifted for that only, as the array is ours.
  py::object fill_object_array(const Node& node) {
    auto* array = reinterpret_cast<PyArrayObject*>(node.array.ptr());
    const bool writeable = PyArray_ISWRITEABLE(array);
    PyArray_ENABLEFLAGS(array, NPY_ARRAY_WRITEABLE);
    const std::vector<PyObject**> slots = object_slots(array);
    for (std::size_t i = 0; i < slots.size() && i < node.items.size(); ++i) {
      PyObject* element = build(node.items[i]).release().ptr();
      Py_XDECREF(*slots[i]);
      *slots[i] = element;
    }
    if (!writeable) PyArray_CLEARFLAGS(array, NPY_ARRAY_WRITEABLE);
    return node.array;
  }

  std::unordered_map<std::string, py::object> built_;
};

}  // namespace

py::object to_python(const Node& node) { return Rebuilder().build(node); }

NodeIndex::NodeIndex(const Node& root) {
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (!node.path.empty() && node.ref.empty()) by_path_.emplace(node.path, &node);
    for (const Node& item : node.items) visit(item);
    for (const Node& state : node.state) visit(state);
  };
  visit(root);
}

const Node& NodeIndex::resolve(const Node& node) const {
  if (node.ref.empty()) return node;
  const auto it = by_path_.find(node.ref);
  if (it == by_path_.end()) throw FormatError(node.path + ": refers to " + node.ref + ", which does not exist");
  return *it->second;
}

}  // namespace parity
