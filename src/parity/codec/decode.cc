// Reads result files without running code from them (see codec.h and docs/format.md).
#include <fcntl.h>
#include <pybind11/stl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_set>

#include "codec.h"
#include "codec_internal.h"
#include "json_input.h"
#include "safe_file.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
using namespace detail;
namespace {

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
  /// The file's bytes as read() read or mapped them.
  ResultBytes bytes() const { return {mapping_, map_, file_size_}; }

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
  // An array's layout as the header describes it.
  struct Layout {
    std::vector<npy_intp> shape, strides;
    std::uint64_t offset = 0;
  };
  // Format 1: a JSON header.
  Node read_json(std::uint64_t header_size);
  Node decode(const json& node, const std::string& path, int depth);
  Node decode_kind(const json& node, const std::string& path, int depth);
  void decode_state(const json& node, Node& out, int depth);
  Node decode_array_form(const json& form, const std::string& path, int depth);
  Node decode_array(const json& node, Node::Kind kind, const std::string& path);
  Node decode_object_array(const json& node, const std::string& path, int depth);
  py::object decode_dtype(const json& dtype, const std::string& path, int depth);
  std::pair<std::uint64_t, std::uint64_t> blob(const json& node, const std::string& path) const;
  Layout layout_at(const json& node, const std::string& path) const;
  // Format 2: a binary header, read in one pass from the mapping (docs/format.md).
  Node read_binary(std::uint64_t header_size);
  Node decode2(const std::string& path, int depth);
  void decode_items2(std::vector<Node>& items, std::vector<std::string>* keys, const std::string& path, int depth);
  Node decode_array2(Node::Kind kind, const std::string& path, int depth);
  Node decode_object2(const std::string& path, int depth);
  void decode_reduced2(std::uint8_t flags, Node& out, int depth);
  std::uint8_t byte2(const std::string& path);
  std::uint64_t varint2(const std::string& path);
  std::uint64_t count2(const std::string& path);
  std::uint64_t fixed64_2(const std::string& path);
  std::string_view text2(const std::string& path);
  const std::string& name2(const std::string& path);
  py::object dtype2(const std::string& path);
  Layout layout2(const std::string& path);
  std::pair<std::uint64_t, std::uint64_t> blob2(const std::string& path);
  // Shared by both formats: a checked layout over the file's bytes.
  void check_layout(const Layout& layout, const std::string& path) const;
  Node make_array(py::object dtype, const Layout& layout, std::pair<std::uint64_t, std::uint64_t> blob,
                  std::uint64_t misalign, bool writeable, Node::Kind kind, const std::string& path);
  Node::Array object_array(const Layout& layout, std::uint64_t count, bool writeable, const std::string& path);
  std::uint64_t element_count(const Layout& layout, const std::string& path) const;
  py::object copy_misaligned(std::uint64_t file_offset, std::uint64_t size, std::uint64_t misalign);
  void read_exact(char* into, std::uint64_t size, std::uint64_t offset) const;
  void map_file(int fd);
  void read_file(int fd);
  void charge(std::uint64_t bytes, const std::string& path);
  void charge_node(const std::string& path);

  std::filesystem::path file_;
  ReadLimits limits_;
  std::uint64_t charged_ = 0;  // bytes of copies made so far (charge)
  // Misaligned blobs copied once, by (file offset, size, misalignment): a file naming one blob from many
  // arrays costs one copy, not one per array.
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>, py::object> misaligned_;
  std::uint64_t file_size_ = 0, data_start_ = 0;
  json blobs_;
  const char* pos_ = nullptr;  // format 2: the next header byte to read, and the header's end
  const char* end_ = nullptr;
  std::vector<std::string> names_;  // format 2's tables (Table)
  std::vector<py::object> dtypes_;
  // The whole file, mapped privately (or, small, read into a buffer: read_file): arrays view their blobs in place
  // (copy-on-write when written to). A uint8 array over the bytes is every such array's base; the mapping goes when
  // the last one does.
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

// Files up to this size are read into a buffer rather than mapped: for the few kilobytes of a small scenario's
// results, a mapping's set-up, page faults and unmapping cost more than one read and a copy. Larger, a mapping
// spares the copy and the memory of whatever the comparison never touches.
constexpr std::uint64_t kReadWholeUpTo = 64 * 1024;

// read_file: the file in a buffer of its own, which starts 64-aligned as a mapping does (blobs start on kAlign
// boundaries, so each array has the address modulo 16 the mapping would give it).
void Decoder::read_file(int fd) {
  npy_intp size = static_cast<npy_intp>(file_size_ + kAlign);
  PyObject* raw = PyArray_New(&PyArray_Type, 1, &size, NPY_UINT8, nullptr, nullptr, 0, 0, nullptr);
  if (!raw) throw py::error_already_set();
  mapping_ = py::reinterpret_steal<py::object>(raw);
  char* data = PyArray_BYTES(reinterpret_cast<PyArrayObject*>(raw));
  data += (kAlign - reinterpret_cast<std::uintptr_t>(data) % kAlign) % kAlign;
  for (std::uint64_t done = 0; done < file_size_;) {
    const ssize_t n = ::pread(fd, data + done, file_size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) fail("truncated while being read");
    done += static_cast<std::uint64_t>(n);
  }
  map_ = data;
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
         " bytes of memory (taken so far: " + std::to_string(charged_) + ", this one: " + std::to_string(bytes) +
         "; raise it with --max-result-memory)");
  charged_ += bytes;
}

// Each node decoded keeps its path (and its own size): a long key over many items had made a 20 KB file take ~100 MB
// that no limit counted (the path of every item repeats the key).
void Decoder::charge_node(const std::string& path) { charge(sizeof(Node) + path.size(), path); }

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

Decoder::Layout Decoder::layout_at(const json& node, const std::string& path) const {
  Layout layout{integers_at<npy_intp>(node, "shape", path), integers_at<npy_intp>(node, "strides", path), 0};
  check_layout(layout, path);
  layout.offset = integer_at<std::uint64_t>(node, "offset", path);
  return layout;
}

void Decoder::check_layout(const Layout& layout, const std::string& path) const {
  if (layout.shape.size() != layout.strides.size() || layout.shape.size() > NPY_MAXDIMS)
    fail(path + ": bad shape or strides");
}

std::uint64_t Decoder::element_count(const Layout& layout, const std::string& path) const {
  std::uint64_t count = 1;
  for (npy_intp n : layout.shape)
    if (n < 0 || __builtin_mul_overflow(count, static_cast<std::uint64_t>(n), &count)) fail(path + ": bad shape");
  return count;
}

// An object array is decoded filled with None, with its exact layout; its elements are nodes of their own,
// put in place by to_python, so reading runs no code for them either.
// Every slot of an object array holds a pointer: strides off a pointer's size would put slots at misaligned
// addresses (undefined behaviour when rebuilt; found by the decoder fuzzer), and NumPy never writes such an array.
static bool pointer_aligned(const std::vector<npy_intp>& strides) {
  return std::all_of(strides.begin(), strides.end(),
                     [](npy_intp s) { return s % static_cast<npy_intp>(sizeof(PyObject*)) == 0; });
}

Node::Array Decoder::object_array(const Layout& layout, std::uint64_t count, bool writeable, const std::string& path) {
  const auto& [shape, strides, offset] = layout;
  const Span span = span_of(static_cast<int>(shape.size()), shape.data(), strides.data(), sizeof(PyObject*));
  if (span.overflow || (!span.empty && static_cast<std::uint64_t>(-span.low) != offset) ||
      span.size() % sizeof(PyObject*) != 0 || span.size() / sizeof(PyObject*) > 4 * count + 64 ||
      !pointer_aligned(strides))
    fail(path + ": shape and strides do not describe the elements");
  npy_intp slots = static_cast<npy_intp>(span.size() / sizeof(PyObject*)) + 1;
  auto buffer = py::reinterpret_steal<py::object>(PyArray_SimpleNew(1, &slots, NPY_OBJECT));
  if (!buffer || PyArray_FillWithScalar(reinterpret_cast<PyArrayObject*>(buffer.ptr()), Py_None) < 0)
    throw py::error_already_set();
  char* start = PyArray_BYTES(reinterpret_cast<PyArrayObject*>(buffer.ptr())) + offset;
  PyObject* raw = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(NPY_OBJECT), static_cast<int>(shape.size()),
                                       shape.data(), strides.data(), start, NPY_ARRAY_WRITEABLE, nullptr);
  if (!raw) throw py::error_already_set();
  Node::Array array;
  array.array = py::reinterpret_steal<py::object>(raw);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(raw), buffer.release().ptr()) < 0)
    throw py::error_already_set();
  if (!writeable) PyArray_CLEARFLAGS(reinterpret_cast<PyArrayObject*>(raw), NPY_ARRAY_WRITEABLE);
  return array;
}

Node Decoder::decode_object_array(const json& node, const std::string& path, int depth) {
  const Layout layout = layout_at(node, path);
  const json& elements = node.at("elements");
  if (element_count(layout, path) != elements.size()) fail(path + ": element count does not match the shape");
  Node::Array array = object_array(layout, elements.size(), node.at("writeable").get<bool>(), path);
  Node out;
  out.type = node.at("type").get<std::string>();
  std::int64_t flat = 0;
  const int ndim = static_cast<int>(layout.shape.size());
  for (const json& element : elements)
    array.elements.push_back(decode(element, path + index_path(flat++, ndim, layout.shape.data()), depth + 1));
  out.value = std::move(array);
  return out;
}

Node Decoder::decode_array(const json& node, Node::Kind kind, const std::string& path) {
  py::object dtype = decode_dtype(node.at("dtype"), path, 0);
  const Layout layout = layout_at(node, path);
  const auto stored = blob(node, path);
  const auto misalign = node.contains("misalign") ? integer_at<std::uint64_t>(node, "misalign", path) : 0;
  Node out = make_array(std::move(dtype), layout, stored, misalign, node.at("writeable").get<bool>(), kind, path);
  out.type = node.at("type").get<std::string>();
  return out;
}

// An array of `dtype` over `blob` (its file offset and size), checked against the layout.
Node Decoder::make_array(py::object dtype, const Layout& layout, std::pair<std::uint64_t, std::uint64_t> blob,
                         std::uint64_t misalign, bool writeable, Node::Kind kind, const std::string& path) {
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
  const auto& [shape, strides, offset] = layout;
  for (npy_intp n : shape)
    if (n < 0) fail(path + ": negative dimension");
  const auto [file_offset, size] = blob;
  misalign %= kMisalignModulus;
  const Span span = span_of(static_cast<int>(shape.size()), shape.data(), strides.data(), PyDataType_ELSIZE(descr));
  if (span.overflow) fail(path + ": shape and strides reach beyond any possible buffer");
  if (!span.empty && (static_cast<std::uint64_t>(-span.low) != offset || span.size() != size))
    fail(path + ": shape, strides and dtype do not match the stored bytes");

  Py_INCREF(descr);  // PyArray_NewFromDescr steals it
  const int flags = writeable ? NPY_ARRAY_WRITEABLE : 0;
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
  if (kind == Node::Kind::Scalar)
    out.value = Node::Scalar{std::move(array)};
  else
    out.value = Node::Array{std::move(array), {}};
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
  attributes.type = "builtins.dict";
  // No path of its own: it is part of its owner, never the target of a reference.
  auto& dict = attributes.value.emplace<Node::Dict>();
  for (const json& item : state.at("items")) {
    dict.keys.push_back(item.at(0).get<std::string>());
    dict.items.push_back(decode(item.at(1), state_path(out.path, dict.keys.back()), depth + 1));
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
  charge_node(path);
  if (node.at("kind") == "ref") {
    Node ref;
    ref.path = path;
    // A reference to "" names no node: it reads as an empty None, as it did when `ref` was a plain field.
    if (auto target = node.at("path").get<std::string>(); !target.empty()) ref.value = Node::Ref{std::move(target)};
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
  const auto with = [&](Node::Value value) {
    out.value = std::move(value);
    return std::move(out);
  };
  // A dict's values (its keys into `keys`) or a list's or tuple's elements, each at its path.
  const auto read_items = [&](std::vector<std::string>* keys) {
    std::vector<Node> items;
    std::size_t i = 0;
    for (const json& item : node.at("items")) {
      if (keys) keys->push_back(item.at(0).get<std::string>());
      const std::string sub = keys ? key_path(path, keys->back()) : item_path(path, i++);
      items.push_back(decode(keys ? item.at(1) : item, sub, depth + 1));
    }
    return items;
  };
  const auto read_text = [&] {
    const auto [offset, size] = blob(node, path);
    charge(size, path);
    std::string text(size, '\0');
    read_exact(text.data(), size, offset);
    return text;
  };
  if (kind == "dict") {
    Node::Dict dict;
    dict.items = read_items(&dict.keys);
    return with(std::move(dict));
  }
  if (kind == "list") return with(Node::List{read_items(nullptr)});
  if (kind == "tuple") return with(Node::Tuple{read_items(nullptr)});
  if (kind == "ndarray" && node.contains("elements")) return decode_object_array(node, path, depth);
  if (kind == "ndarray") return decode_array(node, Node::Kind::Array, path);
  if (kind == "scalar") return decode_array(node, Node::Kind::Scalar, path);
  if (kind == "str") {
    Node::Str str{read_text()};
    // The writer encodes with surrogatepass; anything else is no str it wrote.
    PyObject* decoded =
        PyUnicode_DecodeUTF8(str.utf8.data(), static_cast<Py_ssize_t>(str.utf8.size()), "surrogatepass");
    if (!decoded) {
      if (PyErr_ExceptionMatches(PyExc_MemoryError)) throw py::error_already_set();  // no fault of the file's
      PyErr_Clear();
      fail(path + ": str is not UTF-8");
    }
    Py_DECREF(decoded);
    out.type = "builtins.str";
    return with(std::move(str));
  }
  if (kind == "bytes") {
    Node::Bytes bytes{read_text()};
    out.type = "builtins.bytes";
    return with(std::move(bytes));
  }
  if (kind == "none") {
    out.type = "builtins.NoneType";
    return with(Node::None{});
  }
  if (kind == "object") {
    if (!node.contains("reducer")) fail(path + ": object without a reducer");
    Node::Object object;
    if (node.contains("array")) object.array_form.push_back(decode_array_form(node.at("array"), path, depth));
    return with(std::move(object));
  }
  out.type = "builtins." + kind;
  if (kind == "bool") return with(Node::Bool{node.at("value").get<bool>()});
  if (kind == "int") {
    Node::Int integer{node.at("value").get<std::string>()};
    if (!hex_integer(integer.hex)) fail(path + ": int value is not a hexadecimal integer");
    return with(std::move(integer));
  }
  if (kind == "float") return with(Node::Float{from_bits(node.at("bits"))});
  if (kind == "complex")
    return with(Node::Complex{{from_bits(node.at("bits").at(0)), from_bits(node.at("bits").at(1))}});
  fail(path + ": unknown kind '" + kind + "'");
}

// A reference may only point back to a node completed before it. References are not expanded (a hostile
// file could double its size with every level): users resolve them with NodeIndex.
void check_references(const Node& root) {
  const std::unordered_set<std::string> targets = ref_targets(root);
  if (targets.empty()) return;
  std::unordered_set<std::string> finished;  // of the targets only: most trees have few
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (node.is_ref()) {
      if (!finished.count(node.ref()))
        throw FormatError(node.path + ": refers to " + node.ref() + ", which is not an earlier output");
      return;
    }
    for (const Node& item : node.items()) visit(item);
    for (const Node& state : node.state) visit(state);
    if (!node.path.empty() && targets.count(node.path)) finished.insert(node.path);
  };
  visit(root);
}

Node Decoder::read(int fd) {
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) fail(std::string("cannot seek: ") + std::strerror(errno));
  file_size_ = static_cast<std::uint64_t>(end);
  if (file_size_ < kPreamble) fail("too short to be a parity result file");
  if (file_size_ <= kReadWholeUpTo)
    read_file(fd);
  else
    map_file(fd);
  unsigned char pre[kPreamble];
  read_exact(reinterpret_cast<char*>(pre), kPreamble, 0);
  if (std::memcmp(pre, kMagic, sizeof kMagic) != 0) fail("not a parity result file (bad magic)");
  const auto major = get_u64(pre + 8, 4), minor = get_u64(pre + 12, 4), header_size = get_u64(pre + 16, 8);
  if (major > kFormatMajor)
    fail("written by result format " + std::to_string(major) + "." + std::to_string(minor) +
         ", newer than this parity reads (" + std::to_string(kFormatMajor) + ".x): upgrade parity");
  if (header_size > file_size_ - kPreamble) fail("header extends past the end of the file (truncated?)");
  data_start_ = align_up(kPreamble + header_size);
  if (data_start_ > file_size_) data_start_ = file_size_;
  try {
    Node root = major >= 2 ? read_binary(header_size) : read_json(header_size);
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

Node Decoder::read_json(std::uint64_t header_size) {
  charge(header_size, "the header");  // a sparse file can claim a header of gigabytes
  std::string header(header_size, '\0');
  read_exact(header.data(), header_size, kPreamble);
  const json doc = parse_json(header, "", 4 * kMaxDepth + 64);  // 4 levels or fewer per node
  blobs_ = doc.at("blobs");
  if (!blobs_.is_array()) fail("blobs is not a list");
  return decode(doc.at("outputs"), "outputs", 0);
}

// ---------------------------------------------------------------------------------------------------------
// Format 2: every read is checked against the header's end; a malformed header names the path it was reading.

Node Decoder::read_binary(std::uint64_t header_size) {
  pos_ = map_ + kPreamble;
  end_ = pos_ + header_size;
  Node root = decode2("outputs", 0);
  if (pos_ != end_) fail("malformed header: " + std::to_string(end_ - pos_) + " bytes after the outputs");
  return root;
}

std::uint8_t Decoder::byte2(const std::string& path) {
  if (pos_ == end_) fail(path + ": malformed header: it ends early (truncated?)");
  return static_cast<std::uint8_t>(*pos_++);
}

std::uint64_t Decoder::varint2(const std::string& path) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const std::uint8_t b = byte2(path);
    if (shift == 63 && b > 1) break;
    value |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return value;
  }
  fail(path + ": malformed header: a number longer than 64 bits");
}

// A number of things that follow, each taking at least one byte: never more than the bytes left.
std::uint64_t Decoder::count2(const std::string& path) {
  const std::uint64_t n = varint2(path);
  if (n > static_cast<std::uint64_t>(end_ - pos_))
    fail(path + ": malformed header: " + std::to_string(n) + " items cannot fit in what is left of it");
  return n;
}

std::uint64_t Decoder::fixed64_2(const std::string& path) {
  if (end_ - pos_ < 8) fail(path + ": malformed header: it ends early (truncated?)");
  const std::uint64_t v = get_u64(reinterpret_cast<const unsigned char*>(pos_), 8);
  pos_ += 8;
  return v;
}

std::string_view Decoder::text2(const std::string& path) {
  const std::uint64_t n = varint2(path);
  if (n > static_cast<std::uint64_t>(end_ - pos_)) fail(path + ": malformed header: a string runs past its end");
  const std::string_view text(pos_, n);
  pos_ += n;
  return text;
}

// Table entries: 0 and the text the first time, then its number.
const std::string& Decoder::name2(const std::string& path) {
  const std::uint64_t id = varint2(path);
  if (id == 0) return names_.emplace_back(text2(path));
  if (id > names_.size()) fail(path + ": malformed header: name " + std::to_string(id) + " names no earlier one");
  return names_[id - 1];
}

// A dtype's description is format 1's JSON, parsed and checked once per distinct dtype.
py::object Decoder::dtype2(const std::string& path) {
  const std::uint64_t id = varint2(path);
  if (id == 0) return dtypes_.emplace_back(decode_dtype(parse_json(text2(path), "", 64), path, 0));
  if (id > dtypes_.size()) fail(path + ": malformed header: dtype " + std::to_string(id) + " names no earlier one");
  return dtypes_[id - 1];
}

Decoder::Layout Decoder::layout2(const std::string& path) {
  const std::uint64_t ndim = varint2(path);
  if (ndim > NPY_MAXDIMS) fail(path + ": bad shape or strides");
  Layout layout;
  for (std::uint64_t d = 0; d < ndim; ++d) {
    const std::uint64_t n = varint2(path);
    if (n > static_cast<std::uint64_t>(NPY_MAX_INTP)) fail(path + ": 'shape' is not an integer in range");
    layout.shape.push_back(static_cast<npy_intp>(n));
  }
  for (std::uint64_t d = 0; d < ndim; ++d) {
    const std::uint64_t z = varint2(path);
    layout.strides.push_back(static_cast<npy_intp>((z >> 1) ^ (0 - (z & 1))));
  }
  layout.offset = varint2(path);
  return layout;
}

std::pair<std::uint64_t, std::uint64_t> Decoder::blob2(const std::string& path) {
  const std::uint64_t offset = varint2(path), size = varint2(path);
  if (offset > file_size_ - data_start_ || size > file_size_ - data_start_ - offset)
    fail(path + ": a blob at " + std::to_string(offset) + " extends past the end of the file (truncated?)");
  return {data_start_ + offset, size};
}

void Decoder::decode_items2(std::vector<Node>& items, std::vector<std::string>* keys, const std::string& path,
                            int depth) {
  const std::uint64_t n = count2(path);
  items.reserve(n);
  if (keys) keys->reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (keys) keys->emplace_back(text2(path));
    items.push_back(decode2(keys ? key_path(path, keys->back()) : item_path(path, i), depth + 1));
  }
}

Node Decoder::decode_array2(Node::Kind kind, const std::string& path, int depth) {
  const std::string type = name2(path);
  const std::uint8_t flags = byte2(path);
  const int allowed = kind == Node::Kind::Scalar ? kWriteable : kWriteable | kElements | kReduced | kState;
  if ((flags & ~allowed) != 0 || ((flags & kState) && !(flags & kReduced)))
    fail(path + ": malformed header: flags " + std::to_string(flags) + " of an array");
  Node out;
  if (flags & kElements) {
    const Layout layout = layout2(path);
    check_layout(layout, path);
    const std::uint64_t count = element_count(layout, path);
    if (count > static_cast<std::uint64_t>(end_ - pos_)) fail(path + ": element count does not match the shape");
    Node::Array array = object_array(layout, count, flags & kWriteable, path);
    const int ndim = static_cast<int>(layout.shape.size());
    array.elements.reserve(count);
    for (std::uint64_t flat = 0; flat < count; ++flat)
      array.elements.push_back(
          decode2(path + index_path(static_cast<std::int64_t>(flat), ndim, layout.shape.data()), depth + 1));
    out.value = std::move(array);
  } else {
    py::object dtype = dtype2(path);
    const Layout layout = layout2(path);
    check_layout(layout, path);
    const std::uint64_t misalign = varint2(path);
    out = make_array(std::move(dtype), layout, blob2(path), misalign, flags & kWriteable, kind, path);
  }
  out.type = type;
  out.path = path;
  decode_reduced2(flags, out, depth);
  return out;
}

Node Decoder::decode_object2(const std::string& path, int depth) {
  Node out;
  out.type = name2(path);
  out.path = path;
  const std::uint8_t flags = byte2(path);
  if ((flags & ~(kReduced | kState | kArrayForm)) != 0 || ((flags & kState) && !(flags & kReduced)))
    fail(path + ": malformed header: flags " + std::to_string(flags) + " of an object");
  if (!(flags & kReduced)) fail(path + ": object without a reducer");
  Node::Object object;
  if (flags & kArrayForm) {
    // A plain array only (no reference, reducer or object elements), at the object's path.
    if (pos_ == end_ || static_cast<Tag>(static_cast<std::uint8_t>(*pos_)) != Tag::Array)
      fail(path + ": an object's 'array' is not a plain ndarray node");
    ++pos_;
    object.array_form.push_back(decode_array2(Node::Kind::Array, path, depth + 1));
    const Node& form = object.array_form.back();
    if (!form.reducer.empty() ||
        PyArray_DESCR(reinterpret_cast<PyArrayObject*>(form.array().ptr()))->type_num == NPY_OBJECT)
      fail(path + ": an object's 'array' is not a plain ndarray node");
  }
  out.value = std::move(object);
  decode_reduced2(flags, out, depth);
  return out;
}

// A reducer's name and state: a dict of attributes is read back with attribute paths, as it was written.
void Decoder::decode_reduced2(std::uint8_t flags, Node& out, int depth) {
  if (!(flags & kReduced)) return;
  out.reducer = name2(out.path);
  if (!(flags & kState)) return;
  if (pos_ == end_ || static_cast<Tag>(static_cast<std::uint8_t>(*pos_)) != Tag::Dict)
    return out.state.push_back(decode2(out.path + ".state", depth + 1));
  ++pos_;
  name2(out.path);
  Node attributes;
  attributes.type = "builtins.dict";
  // No path of its own: it is part of its owner, never the target of a reference.
  auto& dict = attributes.value.emplace<Node::Dict>();
  const std::uint64_t n = count2(out.path);
  for (std::uint64_t i = 0; i < n; ++i) {
    dict.keys.emplace_back(text2(out.path));
    dict.items.push_back(decode2(state_path(out.path, dict.keys.back()), depth + 1));
  }
  out.state.push_back(std::move(attributes));
}

Node Decoder::decode2(const std::string& path, int depth) {
  if (depth > kMaxDepth) fail(path + ": nested too deeply");
  charge_node(path);
  const std::uint8_t tag = byte2(path);
  if (tag > kLastTag) fail(path + ": unknown kind (tag " + std::to_string(tag) + ")");
  Node out;
  out.path = path;
  const auto with = [&](const char* type, Node::Value value) {
    out.type = type;
    out.value = std::move(value);
    return std::move(out);
  };
  switch (static_cast<Tag>(tag)) {
    case Tag::Dict: {
      out.type = name2(path);
      auto& dict = out.value.emplace<Node::Dict>();
      decode_items2(dict.items, &dict.keys, path, depth);
      return out;
    }
    case Tag::List:
    case Tag::Tuple: {
      out.type = name2(path);
      auto& items = static_cast<Tag>(tag) == Tag::List ? out.value.emplace<Node::List>().items
                                                       : out.value.emplace<Node::Tuple>().items;
      decode_items2(items, nullptr, path, depth);
      return out;
    }
    case Tag::None:
      return with("builtins.NoneType", Node::None{});
    case Tag::False:
    case Tag::True:
      return with("builtins.bool", Node::Bool{static_cast<Tag>(tag) == Tag::True});
    case Tag::Int: {
      Node::Int integer{std::string(text2(path))};
      if (!hex_integer(integer.hex)) fail(path + ": int value is not a hexadecimal integer");
      return with("builtins.int", std::move(integer));
    }
    case Tag::Float:
      return with("builtins.float", Node::Float{std::bit_cast<double>(fixed64_2(path))});
    case Tag::Complex: {
      const double real = std::bit_cast<double>(fixed64_2(path));
      return with("builtins.complex", Node::Complex{{real, std::bit_cast<double>(fixed64_2(path))}});
    }
    case Tag::Str: {
      const std::string_view text = text2(path);
      charge(text.size(), path);
      // The writer encodes with surrogatepass; anything else is no str it wrote.
      PyObject* decoded = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "surrogatepass");
      if (!decoded) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) throw py::error_already_set();  // no fault of the file's
        PyErr_Clear();
        fail(path + ": str is not UTF-8");
      }
      Py_DECREF(decoded);
      return with("builtins.str", Node::Str{std::string(text)});
    }
    case Tag::Bytes: {
      const std::string_view bytes = text2(path);
      charge(bytes.size(), path);
      return with("builtins.bytes", Node::Bytes{std::string(bytes)});
    }
    case Tag::Array:
      return decode_array2(Node::Kind::Array, path, depth);
    case Tag::Scalar:
      return decode_array2(Node::Kind::Scalar, path, depth);
    case Tag::Object:
      return decode_object2(path, depth);
    case Tag::Ref:
      // A reference to "" names no node: it reads as an empty None, as in format 1.
      if (auto target = text2(path); !target.empty()) out.value = Node::Ref{std::string(target)};
      return out;
  }
  fail(path + ": unknown kind (tag " + std::to_string(tag) + ")");
}

}  // namespace

namespace {
// Opens the file as safe_file.h does; a refusal is the file's FormatError, like any other unreadable file.
template <typename Open>
Node read_opened(const std::filesystem::path& shown, const ReadLimits& limits, Open open,
                 ResultBytes* bytes = nullptr) {
  FileDescriptor fd;
  try {
    fd = open();
  } catch (const UnsafeFileError& e) {
    throw FormatError(e.what());
  } catch (const std::system_error& e) {
    throw FormatError(shown.string() + ": cannot open: " + e.code().message());
  }
  Decoder decoder(shown, limits);
  Node root = decoder.read(fd.get());
  if (bytes) *bytes = decoder.bytes();
  return root;
}
}  // namespace

Node read_result(const std::filesystem::path& file, const ReadLimits& limits) {
  return read_opened(file, limits, [&] { return open_regular_file(file); });
}

Node read_result(const std::filesystem::path& dir, const std::filesystem::path& relative, const ReadLimits& limits,
                 ResultBytes* bytes) {
  return read_opened(
      dir / relative, limits, [&] { return open_regular_file(dir, relative); }, bytes);
}

}  // namespace parity
