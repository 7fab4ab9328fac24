// The pandas policies (see pandas_policy.h): the parts of a pandas reducer's state they relax.
#include "pandas_policy.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <array>
#include <span>
#include <string_view>
#include <vector>

namespace py = pybind11;

namespace parity {
namespace {

constexpr std::string_view kIndexType = "pandas.Index";
// The reducers of parity.library_reducers that write an index kind (a MultiIndex has levels, not values).
constexpr std::array<std::string_view, 7> kIndexReducers = {
    "pandas.Index",       "pandas.RangeIndex",       "pandas.DatetimeIndex", "pandas.TimedeltaIndex",
    "pandas.PeriodIndex", "pandas.CategoricalIndex", "pandas.IntervalIndex"};
constexpr std::array<std::string_view, 2> kNameParts = {"name", "names"};
// The state parts of pandas reducers that hold one entry per row (an index's values, a column's data and mask, a
// categorical's codes, a MultiIndex's codes per level, an interval's bounds).
constexpr std::array<std::string_view, 7> kRowParts = {"values", "data", "mask", "codes", "ordinals", "left", "right"};
// What a SparseArray written as its dense values keeps of its own parts.
constexpr std::array<std::string_view, 2> kSparseKept = {"fill_value", "kind"};
// Appended to the reducer name of a node pandas_normalized returned, so that it is normalized once.
constexpr std::string_view kNormalized = " (normalized)";

bool is_pandas(const Node& node) {
  return node.kind() == Node::Kind::Object && node.reducer.starts_with("pandas.") &&
         !node.reducer.ends_with(kNormalized) && !node.state.empty() && node.state.front().kind() == Node::Kind::Dict;
}

bool has_rows(const Node& node) { return node.reducer == "pandas.DataFrame" || node.reducer == "pandas.Series"; }

bool is_index(const Node& node) {
  return std::find(kIndexReducers.begin(), kIndexReducers.end(), node.reducer) != kIndexReducers.end();
}

bool has_key(const Node& dict, std::string_view key) {
  return std::find(dict.keys().begin(), dict.keys().end(), key) != dict.keys().end();
}

const Node& item(const Node& dict, std::string_view key) {
  const auto it = std::find(dict.keys().begin(), dict.keys().end(), key);
  if (it == dict.keys().end())
    throw FormatError(dict.path + ": the pandas state has no part '" + std::string(key) +
                      "' (written by another parity?)");
  return dict.items()[static_cast<std::size_t>(it - dict.keys().begin())];
}

Node* find_item(Node& dict, std::string_view key) {
  auto it = std::find(dict.keys().begin(), dict.keys().end(), key);
  return it == dict.keys().end() ? nullptr : &dict.items()[static_cast<std::size_t>(it - dict.keys().begin())];
}

bool names_relaxed(const Node& state, const PolicyChoice& choice) {
  return choice.names == "ignore" &&
         std::any_of(kNameParts.begin(), kNameParts.end(), [&](std::string_view k) { return has_key(state, k); });
}

bool index_relaxed(const Node& node, const PolicyChoice& choice) {
  return choice.index == "equivalent" && is_index(node) && (node.type != kIndexType || node.reducer != kIndexType);
}

// `node` (a pandas object) with its state replaced by `values`, a plain array at the path an Index's values have, and
// the parts of its old state named in `kept`.
Node with_values(const Node& node, py::object values, std::span<const std::string_view> kept) {
  Node part;
  part.value = Node::Array{std::move(values), {}};
  part.type = "numpy.ndarray";
  part.path = state_path(node.path, "values");
  Node out = node;
  const Node& old_state = node.state.front();
  auto& state = out.state.front().as<Node::Dict>();
  state = {};
  state.keys.push_back("values"), state.items.push_back(std::move(part));
  for (std::string_view key : kept)
    if (has_key(old_state, key)) state.keys.emplace_back(key), state.items.push_back(item(old_state, key));
  return out;
}

// `node` with every reference in it replaced by a copy of what it refers to, so that to_python can rebuild it alone
// (a reference may name a node outside it: an index shared by a frame and a column taken out of it).
Node without_references(const Node& node, const NodeIndex& references, int depth = 0) {
  if (depth > 500) throw FormatError(node.path + ": nested too deeply to sort (references in a cycle?)");
  Node out = references.resolve(node);
  out.path = node.path;
  for (Node& item : out.items()) item = without_references(item, references, depth + 1);
  for (Node& part : out.state) part = without_references(part, references, depth + 1);
  return out;
}

// A RangeIndex as the values it stands for, with its name parts: what a permutation can reorder and what an integer
// Index compares against (`index: equivalent`). Any other node, or a range already so written, as it is.
Node range_as_values(const Node& node) {
  if (node.reducer != "pandas.RangeIndex" || !has_key(node.state.front(), "start")) return node;
  const Node& state = node.state.front();
  py::object builtin_int = py::module_::import("builtins").attr("int");
  auto number = [&](std::string_view key) { return builtin_int(item(state, key).text(), 0); };  // "0x..." or decimal
  return with_values(node,
                     py::module_::import("numpy").attr("arange")(number("start"), number("stop"), number("step"),
                                                                 py::arg("dtype") = "int64"),
                     kNameParts);
}

// A SparseArray as its dense values (beside its fill value and kind): sp_values and indices name only the stored
// rows, so they cannot be put in another row order; the dense values can.
Node sparse_as_values(const Node& node, const NodeIndex& references) {
  if (node.reducer != "pandas.SparseArray" || !has_key(node.state.front(), "sp_values")) return node;
  return with_values(
      node, py::module_::import("numpy").attr("asarray")(to_python(without_references(node, references))), kSparseKept);
}

// `node` with its rows in the order `perm` gives (an intp array of its length): a 1-D array's elements (an object
// array's element nodes with them), a pandas part's per-row parts; anything else, or of another length, as it is.
Node permuted(const Node& original, py::handle perm, const NodeIndex& references) {
  Node node = references.resolve(original);
  node.path = original.path;
  const auto n = py::len(perm);
  if (node.kind() == Node::Kind::Array) {
    auto& array = node.as<Node::Array>();
    if (array.array.attr("ndim").cast<int>() != 1 || py::len(array.array) != n) return node;
    array.array = array.array[perm];
    if (array.elements.size() == n) {
      std::vector<Node> items;
      for (py::handle i : perm) {
        items.push_back(array.elements[i.cast<std::size_t>()]);
        items.back().path = node.path + "[" + std::to_string(items.size() - 1) + "]";
      }
      array.elements = std::move(items);
    }
    return node;
  }
  if (node.kind() == Node::Kind::List || node.kind() == Node::Kind::Tuple) {  // a MultiIndex's codes, one per level
    for (Node& level : node.items()) level = permuted(level, perm, references);
    return node;
  }
  if (!is_pandas(node)) return node;
  node = sparse_as_values(range_as_values(node), references);
  Node& state = node.state.front();
  for (std::size_t i = 0; i < state.keys().size(); ++i)
    if (std::find(kRowParts.begin(), kRowParts.end(), state.keys()[i]) != kRowParts.end())
      state.items()[i] = permuted(state.items()[i], perm, references);
  return node;
}

// The stable order of an index's labels (parity.library_reducers.sort_permutation over the rebuilt index).
py::object sort_order(const Node& index, const NodeIndex& references) {
  return py::module_::import("parity.library_reducers")
      .attr("sort_permutation")(to_python(without_references(index, references)));
}

// A DataFrame's or Series' rows in the order of their index labels, and a DataFrame's columns in the order of theirs
// (columns are parts by label, so only the columns Index holds their order).
void sort_rows(Node& node, const NodeIndex& references) {
  Node& state = node.state.front();
  Node* index = find_item(state, "index");
  if (index == nullptr) return;
  py::object perm = sort_order(*index, references);
  for (std::size_t i = 0; i < state.keys().size(); ++i) {
    const std::string& key = state.keys()[i];
    if (key == "index" || key == "values" || key.starts_with("[") || key.starts_with(".iloc"))
      state.items()[i] = permuted(state.items()[i], perm, references);
  }
  if (Node* columns = find_item(state, "columns"))
    *columns = permuted(*columns, sort_order(*columns, references), references);
}

}  // namespace

bool pandas_relaxed(const Node& node, const PolicyChoice& choice) {
  return is_pandas(node) && (names_relaxed(node.state.front(), choice) || index_relaxed(node, choice) ||
                             (choice.order == "sorted" && has_rows(node)));
}

Node pandas_normalized(const Node& node, const PolicyChoice& choice, const NodeIndex& references) {
  if (!pandas_relaxed(node, choice)) return node;
  Node out = node;
  if (choice.order == "sorted" && has_rows(node)) sort_rows(out, references);
  Node& state = out.state.front();
  if (index_relaxed(node, choice)) {
    state = range_as_values(out).state.front();
    out.type = out.reducer = kIndexType;
  }
  if (choice.names == "ignore") {
    Node::Dict kept;
    for (std::size_t i = 0; i < state.keys().size(); ++i) {
      if (std::find(kNameParts.begin(), kNameParts.end(), state.keys()[i]) != kNameParts.end()) continue;
      kept.keys.push_back(state.keys()[i]), kept.items.push_back(state.items()[i]);
    }
    state.value = std::move(kept);
  }
  out.reducer += kNormalized;
  return out;
}

}  // namespace parity
