// Writes result files: a scenario's outputs with their exact layout (see codec.h and docs/format.md).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cfloat>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "atomic_file.h"
#include "codec.h"
#include "codec_internal.h"
#include "deadline.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
using namespace detail;
namespace {

std::string type_name_of(py::handle type) {
  return py::str(type.attr("__module__")).cast<std::string>() + "." +
         py::str(type.attr("__qualname__")).cast<std::string>();
}

std::string type_name(py::handle obj) { return type_name_of(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()))); }

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

// Copies each element into a zeroed span-sized buffer so the gaps between strided elements are zero:
// the file never depends on memory the scenario did not write. A layout that overlaps itself can hold far more
// elements than its span has bytes (2**32 of them in 1 MB: ~20 s), so a stop signal is looked at as it goes
// (parity.write_result and compare_outputs install the handler: core_module.cc, interruptible).
void gather(PyArrayObject* array, char* dst, const ValueBytes& bytes) {
  constexpr std::size_t kCheckEvery = std::size_t{1} << 20;
  char* src = PyArray_BYTES(array);
  std::size_t visited = 0;
  for_each_element(src, 0, PyArray_NDIM(array), PyArray_SHAPE(array), PyArray_STRIDES(array), [&](char* at) {
    if (++visited % kCheckEvery == 0) check_interrupted();
    char* to = dst + (at - src);
    std::memcpy(to, at, static_cast<std::size_t>(bytes.itemsize));
    if (bytes.has_padding()) bytes.scrub(to);
  });
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

// The binary header of format 2 (docs/format.md), appended to one string: no tree is built and freed per node.
class HeaderWriter {
 public:
  void tag(Tag t) { out_.push_back(static_cast<char>(t)); }
  void byte(std::uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void varint(std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    out_.push_back(static_cast<char>(v));
  }
  void svarint(std::int64_t v) { varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63)); }
  void fixed64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void text(std::string_view s) {
    varint(s.size());
    out_.append(s);
  }
  // A string of table `table` written once: the first use writes 0 and the text, each later use its number (1-based).
  // `id` is the caller's slot for that string, 0 until it is written.
  void interned(Table table, std::uint64_t& id, std::string_view s) {
    if (id != 0) return varint(id);
    varint(0);
    text(s);
    id = ++counts_[static_cast<int>(table)];
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
  std::uint64_t counts_[2] = {0, 0};
};

class Encoder {
 public:
  void encode(py::handle obj, const std::string& path, int depth);
  std::vector<Blob>& blobs() { return blobs_; }
  const std::string& header() const { return header_.str(); }

 private:
  void encode_dict(py::handle obj, const std::string& path, int depth, bool attributes = false);
  void encode_reduced(py::handle obj, const std::string& path, int depth);
  py::object array_form(py::handle obj, const std::string& path);
  void encode_native(py::handle obj, const std::string& path, int depth);
  void encode_sequence(py::handle obj, Tag tag, const std::string& path, int depth);
  void encode_array(PyArrayObject* array, Tag tag, py::handle type, const std::string& path, int depth = 0,
                    std::uint8_t flags = 0);
  void encode_object_array(PyArrayObject* array, const std::string& path, int depth);
  void encode_dtype(PyArray_Descr* descr, const std::string& path);
  void put_type(py::handle type);
  void put_blob(Blob blob);

  HeaderWriter header_;
  std::vector<Blob> blobs_;
  std::size_t data_size_ = 0;  // the data section so far: where the next blob goes
  // Interned strings by what they name; each entry keeps its key alive, so no address is reused while encoding.
  struct Interned {
    py::object keep;
    std::uint64_t id = 0;
  };
  std::unordered_map<PyObject*, Interned> types_, dtypes_;
  std::unordered_map<std::string, std::uint64_t> reducers_;
  // Objects already written, by identity, with the path of their first occurrence. The owning references
  // keep each object alive, so no address is reused by a temporary while encoding.
  std::unordered_map<PyObject*, std::string> seen_;
  std::vector<py::object> keep_alive_;
};

// Blobs go one after another in the data section, each at a multiple of 64.
void Encoder::put_blob(Blob blob) {
  header_.varint(data_size_);
  header_.varint(blob.size);
  data_size_ = align_up(data_size_ + blob.size);
  blobs_.push_back(std::move(blob));
}

void Encoder::put_type(py::handle type) {
  auto [it, fresh] = types_.try_emplace(type.ptr());
  if (fresh) it->second.keep = py::reinterpret_borrow<py::object>(type);
  const std::uint64_t id = it->second.id;
  header_.interned(Table::Names, it->second.id, id ? std::string() : type_name_of(type));
}

// A dtype's description, as format 1 spelled it (JSON), once per distinct dtype. Only dtypes without fields are
// remembered by identity: they are immutable, while a structured dtype's names can be reassigned.
json dtype_json(py::handle dtype, const std::string& path) {
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
  if (PyDataType_HASFIELDS(descr)) {
    json fields = json::array();
    py::dict field_map = dtype.attr("fields");
    for (py::handle name : py::tuple(dtype.attr("names"))) {
      py::tuple entry = field_map[name];
      if (entry.size() > 2) throw UnsupportedOutput(path + ": structured dtype field titles are not supported yet");
      fields.push_back({{"name", name.cast<std::string>()},
                        {"dtype", dtype_json(entry[0], path)},
                        {"offset", entry[1].cast<std::int64_t>()}});
    }
    return {{"fields", fields},
            {"itemsize", PyDataType_ELSIZE(descr)},
            {"aligned", dtype.attr("isalignedstruct").cast<bool>()}};
  }
  if (PyDataType_HASSUBARRAY(descr)) {
    py::tuple subdtype = dtype.attr("subdtype");
    return {{"subarray", dtype_json(subdtype[0], path)}, {"shape", subdtype[1].cast<std::vector<std::int64_t>>()}};
  }
  return {{"str", dtype.attr("str").cast<std::string>()}};
}

void Encoder::encode_dtype(PyArray_Descr* descr, const std::string& path) {
  py::handle dtype(reinterpret_cast<PyObject*>(descr));
  if (PyDataType_HASFIELDS(descr)) {
    std::uint64_t fresh = 0;
    return header_.interned(Table::Dtypes, fresh, dtype_json(dtype, path).dump());
  }
  auto [it, fresh] = dtypes_.try_emplace(dtype.ptr());
  if (fresh) it->second.keep = py::reinterpret_borrow<py::object>(dtype);
  const std::uint64_t id = it->second.id;
  header_.interned(Table::Dtypes, it->second.id, id ? std::string() : dtype_json(dtype, path).dump());
}

void put_layout(HeaderWriter& header, int ndim, const npy_intp* shape, const npy_intp* strides, const Span& span) {
  header.varint(static_cast<std::uint64_t>(ndim));
  for (int d = 0; d < ndim; ++d) header.varint(static_cast<std::uint64_t>(shape[d]));
  for (int d = 0; d < ndim; ++d) header.svarint(strides[d]);
  header.varint(static_cast<std::uint64_t>(-span.low));
}

// Object arrays: each element through the codec (at its index path); the layout as for any array.
void Encoder::encode_object_array(PyArrayObject* array, const std::string& path, int depth) {
  const int ndim = PyArray_NDIM(array);
  const npy_intp *shape = PyArray_SHAPE(array), *strides = PyArray_STRIDES(array);
  put_layout(header_, ndim, shape, strides, span_of(ndim, shape, strides, PyArray_ITEMSIZE(array)));
  std::int64_t flat = 0;
  for (PyObject** slot : object_slots(array)) {
    py::handle element = *slot ? py::handle(*slot) : py::handle(Py_None);
    encode(element, path + index_path(flat++, ndim, shape), depth + 1);
  }
}

void Encoder::encode_array(PyArrayObject* array, Tag tag, py::handle type, const std::string& path, int depth,
                           std::uint8_t flags) {
  PyArray_Descr* descr = PyArray_DESCR(array);
  const bool objects = descr->type_num == NPY_OBJECT && tag == Tag::Array;
  if (!objects && PyDataType_REFCHK(descr))
    throw UnsupportedOutput(path + ": arrays of dtype " +
                            py::str(reinterpret_cast<PyObject*>(descr)).cast<std::string>() +
                            " hold Python objects, which this format version cannot carry");
  header_.tag(tag);
  put_type(type);
  header_.byte(flags | (PyArray_ISWRITEABLE(array) ? kWriteable : 0) | (objects ? kElements : 0));
  if (objects) return encode_object_array(array, path, depth);
  encode_dtype(descr, path);
  const int ndim = PyArray_NDIM(array);
  const npy_intp* shape = PyArray_SHAPE(array);
  const npy_intp* strides = PyArray_STRIDES(array);
  const npy_intp itemsize = PyArray_ITEMSIZE(array);
  const Span span = span_of(ndim, shape, strides, itemsize);
  const char* first = PyArray_BYTES(array) + span.low;
  put_layout(header_, ndim, shape, strides, span);
  header_.varint(reinterpret_cast<std::uintptr_t>(first) % kMisalignModulus);

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
  put_blob(std::move(blob));
}

// A header holds only valid UTF-8 keys, so a key with a lone surrogate cannot be recorded.
std::string_view utf8_key(py::handle key, const std::string& path) {
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(key.ptr(), &size);
  if (!utf8) {
    PyErr_Clear();
    throw UnsupportedOutput(path + ": dict key " + py::repr(key).cast<std::string>() + " is not valid UTF-8");
  }
  return {utf8, static_cast<std::size_t>(size)};
}

void Encoder::encode_dict(py::handle obj, const std::string& path, int depth, bool attributes) {
  header_.tag(Tag::Dict);
  put_type(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())));
  header_.varint(static_cast<std::uint64_t>(PyDict_Size(obj.ptr())));
  Py_ssize_t pos = 0, written = 0;
  PyObject *key = nullptr, *value = nullptr;
  while (PyDict_Next(obj.ptr(), &pos, &key, &value)) {
    if (!PyUnicode_Check(key))
      throw UnsupportedOutput(path + ": dict key " + py::repr(key).cast<std::string>() + " of type " + type_name(key) +
                              " is not a str");
    const std::string k(utf8_key(key, path));
    header_.text(k);
    encode(value, attributes ? state_path(path, k) : key_path(path, k), depth + 1);
    ++written;
  }
  if (written != PyDict_Size(obj.ptr())) throw UnsupportedOutput(path + ": dict changed size while being written");
}

// An exception a scenario's own code raised while being written (a sequence's protocol, a reducer, an array-form
// hook) is that output's error: `what` and the exception. A MemoryError or a KeyboardInterrupt is not: it goes on
// as it is, for after a MemoryError the worker retires (a crash, README) and an interrupt ends the run.
[[noreturn]] void output_error(py::error_already_set& e, const std::string& what) {
  if (e.matches(PyExc_MemoryError) || e.matches(PyExc_KeyboardInterrupt)) throw;
  throw UnsupportedOutput(what + " raised " + e.what());
}

void Encoder::encode_sequence(py::handle obj, Tag tag, const std::string& path, int depth) {
  header_.tag(tag);
  put_type(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())));
  // The items are read through the sequence protocol, as a subclass may define them (named tuples do not); a
  // subclass whose protocol raises or lies (a __len__ past its items) is its output's error, at its path.
  py::sequence seq = py::reinterpret_borrow<py::sequence>(obj);
  auto read = [&](auto get) {
    try {
      return get();
    } catch (py::error_already_set& e) {
      output_error(e, path + ": reading the items of a " + type_name(obj));
    }
  };
  const std::size_t n = read([&] { return seq.size(); });
  header_.varint(n);
  for (std::size_t i = 0; i < n; ++i) encode(read([&] { return py::object(seq[i]); }), item_path(path, i), depth + 1);
}

// A type a backend maps numpy.ndarray to (TYPE_MAP) records the plain array it stands for, so that compare can
// check it against gold's array: the array, or None. Never memoized: it is a fresh array, part of its owner only.
py::object Encoder::array_form(py::handle obj, const std::string& path) {
  py::object form;
  try {
    form = py::module_::import("parity.reducers").attr("array_form")(obj);
  } catch (py::error_already_set& e) {
    output_error(e, path + ": the array form of type " + type_name(obj));
  }
  if (form.is_none()) return form;
  if (!PyArray_CheckExact(form.ptr()))
    throw UnsupportedOutput(path + ": the array form of type " + type_name(obj) + " is a " + type_name(form) +
                            ", not a numpy.ndarray");
  // An array of Python objects has no values of its own to check: compare reports the leaf `uncompared`.
  if (PyDataType_REFCHK(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(form.ptr())))) return py::none();
  keep_alive_.push_back(form);
  return form;
}

// A reducer's state: a dict of attributes is written with attribute paths (outputs['m'].mask).
void Encoder::encode_reduced(py::handle obj, const std::string& path, int depth) {
  py::object reduced;
  try {
    reduced = py::module_::import("parity.reducers").attr("reduce")(obj);
  } catch (py::error_already_set& e) {
    output_error(e, path + ": the reducer for type " + type_name(obj));
  }
  if (reduced.is_none())
    throw UnsupportedOutput(path + ": cannot write an object of type " + type_name(obj) + own_name(obj) +
                            ". Return arrays, scalars, str, bytes, None, dict, list or tuple instead, convert it "
                            "in the backend's materialize(), or register a reducer with "
                            "parity.reducers.register()");
  py::tuple pair = reduced;
  const std::string reducer = pair[0].cast<std::string>();
  py::handle state = pair[1];
  py::handle type(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())));
  const std::uint8_t flags = kReduced | (state.is_none() ? 0 : kState);
  if (PyArray_Check(obj.ptr())) {
    auto values = py::reinterpret_steal<py::object>(
        PyArray_View(reinterpret_cast<PyArrayObject*>(obj.ptr()), nullptr, &PyArray_Type));
    if (!values) throw py::error_already_set();
    encode_array(reinterpret_cast<PyArrayObject*>(values.ptr()), Tag::Array, type, path, depth, flags);
  } else {
    py::object form = array_form(obj, path);
    header_.tag(Tag::Object);
    put_type(type);
    header_.byte(flags | (form.is_none() ? 0 : kArrayForm));
    if (!form.is_none()) encode_array(reinterpret_cast<PyArrayObject*>(form.ptr()), Tag::Array, type, path, depth);
  }
  header_.interned(Table::Names, reducers_[reducer], reducer);
  if (!state.is_none()) {
    if (PyDict_CheckExact(state.ptr()))
      encode_dict(state, path, depth + 1, true);
    else
      encode(state, path + ".state", depth + 1);
  }
}

void Encoder::encode(py::handle obj, const std::string& path, int depth) {
  if (depth > kMaxDepth)
    throw UnsupportedOutput(path + ": nested deeper than " + std::to_string(kMaxDepth) +
                            " levels (a reference cycle?)");
  PyObject* o = obj.ptr();
  // Containers, arrays and reduced objects are memoized: a repeat becomes a reference to the first.
  const bool memo =
      !(o == Py_None || PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o) ||
        PyUnicode_CheckExact(o) || PyBytes_CheckExact(o) || PyArray_IsScalar(o, Generic));
  if (memo) {
    if (auto it = seen_.find(o); it != seen_.end()) {
      header_.tag(Tag::Ref);
      return header_.text(it->second);
    }
  }
  encode_native(obj, path, depth);
  if (memo) {
    seen_.emplace(o, path);
    keep_alive_.push_back(py::reinterpret_borrow<py::object>(obj));
  }
}

// An int as format 1 wrote it, -?0x[0-9a-f]+: those that fit 64 bits without a call into Python.
std::string hex_int(PyObject* o) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow != 0) return py::str(steal(PyNumber_ToBase(o, 16))).cast<std::string>();
  char buf[24];
  const unsigned long long magnitude = v < 0 ? 0ull - static_cast<unsigned long long>(v) : v;
  std::snprintf(buf, sizeof buf, "%s0x%llx", v < 0 ? "-" : "", magnitude);
  return buf;
}

void Encoder::encode_native(py::handle obj, const std::string& path, int depth) {
  PyObject* o = obj.ptr();
  py::handle type(reinterpret_cast<PyObject*>(Py_TYPE(o)));
  if (o == Py_None) return header_.tag(Tag::None);
  if (PyArray_CheckExact(o)) return encode_array(reinterpret_cast<PyArrayObject*>(o), Tag::Array, type, path, depth);
  if (PyArray_Check(o)) return encode_reduced(obj, path, depth);
  if (PyArray_IsScalar(o, Generic)) {
    auto array = py::reinterpret_steal<py::object>(PyArray_FromScalar(o, nullptr));
    if (!array) throw py::error_already_set();
    return encode_array(reinterpret_cast<PyArrayObject*>(array.ptr()), Tag::Scalar, type, path);
  }
  if (PyBool_Check(o)) return header_.tag(o == Py_True ? Tag::True : Tag::False);
  if (PyLong_CheckExact(o)) {
    header_.tag(Tag::Int);
    return header_.text(hex_int(o));
  }
  if (PyFloat_CheckExact(o)) {
    header_.tag(Tag::Float);
    return header_.fixed64(std::bit_cast<std::uint64_t>(PyFloat_AS_DOUBLE(o)));
  }
  if (PyComplex_CheckExact(o)) {
    header_.tag(Tag::Complex);
    header_.fixed64(std::bit_cast<std::uint64_t>(PyComplex_RealAsDouble(o)));
    return header_.fixed64(std::bit_cast<std::uint64_t>(PyComplex_ImagAsDouble(o)));
  }
  if (PyUnicode_CheckExact(o)) {
    header_.tag(Tag::Str);
    Py_ssize_t size = 0;
    if (const char* utf8 = PyUnicode_AsUTF8AndSize(o, &size))
      return header_.text({utf8, static_cast<std::size_t>(size)});
    PyErr_Clear();  // lone surrogates: encoded as UTF-8 would encode their code points
    auto utf8 = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(o, "utf-8", "surrogatepass"));
    if (!utf8) throw py::error_already_set();
    return header_.text({PyBytes_AS_STRING(utf8.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(utf8.ptr()))});
  }
  if (PyBytes_CheckExact(o)) {
    header_.tag(Tag::Bytes);
    return header_.text({PyBytes_AS_STRING(o), static_cast<std::size_t>(PyBytes_GET_SIZE(o))});
  }
  if (PyDict_Check(o)) {
    // A dict subclass with a reducer of its own (scipy's dok sparse formats) is that object, not its items.
    if (!PyDict_CheckExact(o) && py::module_::import("parity.reducers").attr("has_reducer")(obj).cast<bool>())
      return encode_reduced(obj, path, depth);
    return encode_dict(obj, path, depth);
  }
  if (PyList_Check(o)) return encode_sequence(obj, Tag::List, path, depth);
  if (PyTuple_Check(o)) return encode_sequence(obj, Tag::Tuple, path, depth);
  return encode_reduced(obj, path, depth);
}

void put_u32(char* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(char* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Small writes gathered into one buffer: 50,000 small arrays are a few system calls, not 100,000.
class BufferedOut {
 public:
  explicit BufferedOut(AtomicFile& out) : out_(out) {}
  void write(const char* data, std::size_t size) {
    if (buffer_.size() + size > kBuffer) flush();
    if (size >= kBuffer) return out_.write(data, size);
    buffer_.append(data, size);
  }
  void pad(std::size_t count) {
    if (buffer_.size() + count > kBuffer) flush();
    if (count >= kBuffer) return out_.pad(count);
    buffer_.append(count, '\0');
  }
  std::size_t written() const { return out_.written() + buffer_.size(); }
  AtomicFile& flush() {
    out_.write(buffer_.data(), buffer_.size());
    buffer_.clear();
    return out_;
  }

 private:
  static constexpr std::size_t kBuffer = 1 << 20;
  AtomicFile& out_;
  std::string buffer_;
};

}  // namespace

void write_result(const std::filesystem::path& file, py::handle outputs, Publish publish,
                  const std::function<void(const AtomicFile&)>& before_commit) {
  Encoder encoder;
  encoder.encode(outputs, "outputs", 0);
  const std::string& header = encoder.header();

  char pre[kPreamble];
  std::memcpy(pre, kMagic, sizeof kMagic);
  put_u32(pre + 8, kFormatMajor);
  put_u32(pre + 12, kFormatMinor);
  put_u64(pre + 16, header.size());
  AtomicFile file_out(file, publish);  // after encoding: an output the format cannot carry leaves no file
  BufferedOut out(file_out);
  out.write(pre, kPreamble);
  out.write(header.data(), header.size());
  if (!encoder.blobs().empty()) out.pad(align_up(out.written()) - out.written());
  // No padding after the last blob: the file ends with data, so any truncation is detected.
  for (std::size_t i = 0; i < encoder.blobs().size(); ++i) {
    if (i > 0) out.pad(align_up(out.written()) - out.written());
    const Blob& blob = encoder.blobs()[i];
    if (blob.stream)
      SpanWriter(out.flush(), *blob.stream, blob.bytes).write(blob.size);
    else
      out.write(blob.data, blob.size);
  }
  out.flush();
  if (before_commit) before_commit(file_out);
  file_out.commit();
}

}  // namespace parity
