// What the codec's encoder, decoder and rebuilder share: the file's constants and the walk over an array's memory.
// Private to src/parity/codec: only its own sources include it (codec.h is the codec's public header).
#pragma once

#include <pybind11/pytypes.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "codec.h"
#include "numpy_api.h"

namespace parity::detail {

namespace py = pybind11;

inline constexpr char kMagic[8] = {'P', 'A', 'R', 'I', 'T', 'Y', 'R', '\n'};
inline constexpr std::size_t kPreamble = 24;  // magic, u32 major, u32 minor, u64 header length
inline constexpr std::size_t kAlign = 64;     // blobs start on 64-byte boundaries so a mapping can be used in place
inline constexpr std::size_t kMisalignModulus = 16;
inline constexpr int kMaxDepth = 500;

// Format 2's binary header (docs/format.md): each node starts with one tag byte.
enum class Tag : std::uint8_t {
  Dict,
  List,
  Tuple,
  None,
  False,
  True,
  Int,
  Float,
  Complex,
  Str,
  Bytes,
  Array,
  Scalar,
  Object,
  Ref
};
inline constexpr std::uint8_t kLastTag = static_cast<std::uint8_t>(Tag::Ref);
// The flags byte of an array, scalar or object node.
inline constexpr std::uint8_t kWriteable = 1;   // the array is writeable
inline constexpr std::uint8_t kElements = 2;    // an object array: its elements follow as nodes, no dtype, no blob
inline constexpr std::uint8_t kReduced = 4;     // written through a reducer: its name follows the node's body
inline constexpr std::uint8_t kState = 8;       // ... and then its state, one node
inline constexpr std::uint8_t kArrayForm = 16;  // an object's plain array form, an array node, follows its flags
inline constexpr std::uint8_t kKnownFlags = 31;
// The header's tables of strings written once and then named by number: type and reducer names, dtype descriptions.
enum class Table { Names, Dtypes };

inline py::object steal(PyObject* obj) {
  if (!obj) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(obj);
}

inline std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The memory an array's elements occupy: [data + low, data + high) with low <= 0 (negative strides).
struct Span {
  std::ptrdiff_t low = 0, high = 0;
  bool empty = false;
  bool overflow = false;  // only a hostile file can describe an array whose reach overflows
  std::size_t size() const { return static_cast<std::size_t>(high - low); }
};

Span span_of(int ndim, const npy_intp* shape, const npy_intp* strides, npy_intp itemsize);

// Calls f(address) for every element of a strided array in C order of its index (strides of any sign,
// zero included). The writer's gather fallback and object arrays' slots both walk arrays this way.
template <class F>
void for_each_element(char* at, int dim, int ndim, const npy_intp* shape, const npy_intp* strides, F&& f) {
  if (dim == ndim) return f(at);
  for (npy_intp i = 0; i < shape[dim]; ++i) for_each_element(at + i * strides[dim], dim + 1, ndim, shape, strides, f);
}

// The index of element `flat` (C order) of an array of this shape, written as index_path writes it.
std::string index_path(std::int64_t flat, int ndim, const npy_intp* shape);

// The paths that references in the tree under `root` name (few, usually none).
std::unordered_set<std::string> ref_targets(const Node& root);

// The address of every element of an object array, in C order (strides of any sign, zero included).
std::vector<PyObject**> object_slots(PyArrayObject* array);

}  // namespace parity::detail
