// Result files: a scenario's outputs written with their exact layout and read back in another process.
// The format is specified in docs/format.md.
#pragma once

#include <complex>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "atomic_file.h"
#include "pybind11_fwd.h"

namespace parity {

inline constexpr std::uint32_t kFormatMajor = 2;  ///< a reader refuses files of a newer major version
inline constexpr std::uint32_t kFormatMinor = 0;  ///< minor versions only add fields that old readers may ignore

/// An output that the codec cannot write; the message names its path inside the outputs.
struct UnsupportedOutput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A result file that is corrupt, truncated, hostile or too new; the message names the file.
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One decoded output value: a container, a Python scalar, a NumPy array or scalar, or an object written
/// through a reducer (parity.reducers). Decoding never rebuilds reduced types: to_python does, on request.
/// What a node holds depends on its kind: `value` is one of the per-kind structs below. The accessors read any
/// node and answer empty (no keys, no items, no text, a null array) where its kind has no such part, so that a
/// walk over the tree needs no case per kind.
struct Node {
  enum class Kind { Dict, List, Tuple, None, Bool, Int, Float, Complex, Str, Bytes, Array, Scalar, Object };

  struct Dict {
    std::vector<std::string> keys;  ///< in insertion order, parallel to `items`
    std::vector<Node> items;
  };
  struct List {
    std::vector<Node> items;
  };
  struct Tuple {
    std::vector<Node> items;
  };
  struct None {};
  struct Bool {
    bool value = false;
  };
  struct Int {
    std::string hex;  ///< hexadecimal digits, as the format writes them
  };
  struct Float {
    double value = 0.0;  ///< bit for bit
  };
  struct Complex {
    std::complex<double> value;  ///< bit for bit
  };
  struct Str {
    std::string utf8;
  };
  struct Bytes {
    std::string bytes;
  };
  /// A plain numpy.ndarray. An object array's elements are nodes of their own (`elements`, in C order), which
  /// to_python puts in place: the array itself is decoded filled with None.
  struct Array {
    pybind11::object array;
    std::vector<Node> elements;
  };
  /// A NumPy scalar, as a 0-d array.
  struct Scalar {
    pybind11::object array;
  };
  /// An object written through a reducer. `array_form`: the plain ndarray it stands for (one Array node at the
  /// object's path, its type the object's), when its type is one a backend maps numpy.ndarray to and it has an
  /// array form (parity.reducers.array_form); else empty.
  struct Object {
    std::vector<Node> array_form;
  };
  /// The same object as the node at path `target`, written once there (see NodeIndex).
  struct Ref {
    std::string target;
  };
  /// The alternatives in the order of Kind (a Ref last), so that kind() is the index.
  using Value =
      std::variant<Dict, List, Tuple, None, Bool, Int, Float, Complex, Str, Bytes, Array, Scalar, Object, Ref>;

  Value value = None{};
  std::string type;         ///< qualified Python type name, e.g. "numpy.ndarray", "builtins.dict"
  std::string path;         ///< where it is in the outputs, e.g. "outputs['a'][0]"
  std::string reducer;      ///< Object, and Array of a subclass: the reducer that wrote it
  std::vector<Node> state;  ///< what the reducer recorded (one node), or empty for none

  /// The kind; a reference reads as None (its other parts are empty).
  Kind kind() const;
  bool is_ref() const { return std::holds_alternative<Ref>(value); }
  /// The path a reference refers to; empty for any other node.
  const std::string& ref() const;
  /// Dict keys, parallel to items(); empty for other kinds.
  const std::vector<std::string>& keys() const;
  /// Dict values, List and Tuple elements, an object array's elements; empty for other kinds.
  const std::vector<Node>& items() const;
  std::span<Node> items();
  /// Int: hexadecimal digits; Str: UTF-8; Bytes: the raw bytes; empty for other kinds.
  const std::string& text() const;
  /// Bool's value; false for other kinds.
  bool boolean() const;
  /// Float (imaginary part 0) and Complex, bit for bit; 0 for other kinds.
  std::complex<double> number() const;
  /// Array and Scalar: the array; a null object for other kinds.
  const pybind11::object& array() const;
  /// Object: the plain ndarray it stands for, or nullptr.
  const Node* array_form() const;
  /// The part of kind T, which the node must hold (std::bad_variant_access otherwise).
  template <class T>
  T& as() {
    return std::get<T>(value);
  }
  template <class T>
  const T& as() const {
    return std::get<T>(value);
  }
};

/// "dict", "ndarray", ... as the format and messages spell them.
const char* kind_name(Node::Kind kind);

/// Writes `outputs` to `file` atomically (`publish`: atomic_file.h; a run's worker writes in place). Objects without a
/// native form go through parity.reducers; an object seen twice is written once and later as a reference. Throws
/// UnsupportedOutput (naming the path, e.g. "outputs['f'][2]") for values the format cannot carry, std::runtime_error
/// for I/O errors. `before_commit`, when given, is called with the file written and still open, for what its caller
/// adds after the codec's data (a run's worker: the pickle probe's payload, worker.cc); the file is committed after it
/// returns, and removed if it throws.
void write_result(const std::filesystem::path& file, pybind11::handle outputs, Publish publish = Publish::by_rename,
                  const std::function<void(const AtomicFile&)>& before_commit = {});

/// The memory one result file may expand to beyond its mapping, by default (`compare --max-result-memory`).
inline constexpr std::uint64_t kDefaultMaxResultMemory = std::uint64_t{2} << 30;

/// Bounds on decoding one result file. A file is bounded by its size, but its nodes may name one blob many
/// times: every copy decoding makes (str and bytes values, misaligned arrays) is counted against `max_memory`.
struct ReadLimits {
  std::uint64_t max_memory = kDefaultMaxResultMemory;
};

/// Reads a file written by write_result. Never executes code from the file: dtypes are rebuilt from
/// plain descriptions and object dtypes are refused. Throws FormatError naming the file (and the path inside
/// the outputs when decoding would pass `limits`).
Node read_result(const std::filesystem::path& file, const ReadLimits& limits = {});
/// A result file's bytes as read_result read or mapped them, the memory its decoded arrays view: `data` stays valid
/// while `owner` lives. A reader that wants more of the file (compare: the pickle at its end) takes it from here rather
/// than opening and reading the file again.
struct ResultBytes {
  pybind11::object owner;
  const char* data = nullptr;
  std::uint64_t size = 0;
  std::string_view view() const { return {data, static_cast<std::size_t>(size)}; }
};
/// read_result of `relative` inside the results directory `dir`: a regular file reached without following
/// a symbolic link (safe_file.h); anything else is a FormatError naming it. `bytes`, when given, is set to the
/// file's bytes.
Node read_result(const std::filesystem::path& dir, const std::filesystem::path& relative, const ReadLimits& limits = {},
                 ResultBytes* bytes = nullptr);

/// Finds the node a reference stands for (references are not expanded when read). Built once per decoded
/// tree; valid while the tree lives.
class NodeIndex {
 public:
  explicit NodeIndex(const Node& root);
  /// `node` itself, or for a reference the node it refers to. Throws FormatError for a dangling one.
  const Node& resolve(const Node& node) const;

 private:
  std::unordered_map<std::string, const Node*> by_path_;
};

/// An element's index as a path suffix, as Python writes it: [2, 0], [5], or [()] for a 0-d array.
std::string index_path(const std::vector<std::int64_t>& index);

/// The path of a dict entry inside the outputs, as Python would index it: outputs['a']['it\'s'].
std::string key_path(const std::string& path, const std::string& key);

/// The path of element `i` of a list or tuple inside the outputs: outputs['a'][2].
std::string item_path(const std::string& path, std::size_t i);

/// The path of entry `key` of a reducer's dict state: `path.key` (outputs['m'].mask), or `path` followed by the key
/// itself when it starts with '[' or '.', so that a reducer can name its parts as Python indexes the object
/// (outputs['df']['a'] for a DataFrame column, outputs['s'].iloc[3]).
std::string state_path(const std::string& path, const std::string& key);

/// Defines the four path functions above on `module`, under their names (index_path takes a tuple of ints), so that
/// Python (parity.paths, for the fidelity digests) spells paths with this code: parity._core and the parity
/// program's builtin module _parity_paths (src/parity/api/builtin_modules.cc) are both made with it.
void define_path_functions(pybind11::module_& module);

/// Rebuilds Python objects from a decoded tree: containers as plain dict/list/tuple (their recorded type
/// stays in Node::type), arrays and NumPy scalars as read, reduced objects through their reducer (the
/// generic ndarray-subclass reducer only for modules on parity.reducers' allow-list), and references as
/// the one object they refer to. Throws FormatError (with the path) for a type that may not be rebuilt.
pybind11::object to_python(const Node& node);

}  // namespace parity
