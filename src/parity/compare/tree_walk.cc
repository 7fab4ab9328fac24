// The leaf-by-leaf walk of two output trees (compare_outputs): structure, type, array and value checks.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

#include "compare.h"
#include "compare_internal.h"
#include "deadline.h"
#include "messages.h"
#include "numpy_api.h"
#include "pandas_policy.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// What one walk of two trees shares with the walks of their reducers' state: how many nodes it visited (a bound
// against hostile files), and which of the scenario's per-path tolerances it applied (one never applied is a
// misspelt path, reported rather than silently ignored).
struct WalkState {
  std::int64_t visits = 0;
  std::set<std::string> tolerance_paths_used;
  const DigestTaps* taps = nullptr;  // the fidelity digests' hashers the values kernel feeds
};

// A hostile file can make references expand exponentially; no real output needs this many visits.
constexpr std::int64_t kMaxVisits = 10'000'000;
// Nesting of a subtree on one side only, as deep as the decoder lets a file nest (codec_internal.h's kMaxDepth is 500).
constexpr int kMaxOneSidedDepth = 1000;

// One array leaf of one side: the array and the node it was decoded from (its type names a memmap, its state the
// subclass's attributes).
struct ArrayLeaf {
  py::handle array;
  const Node& node;
};

// The checks one leaf pair reached and whether one failed there: its coverage, and whether it is `uncompared`.
struct LeafFrame {
  std::set<std::string> checks;
  bool failed = false;
};

class TreeComparer {
 public:
  TreeComparer(const Policy& policy, const NodeIndex& gold, const NodeIndex& candidate, WalkState& state)
      : policy_(policy), gold_index_(gold), candidate_index_(candidate), state_(state) {}
  void walk(const Node& g, const Node& c, const std::string& path);
  CheckList result;

 private:
  void record(const std::string& check, bool failed) {
    if (frames_.empty()) return;
    frames_.back().checks.insert(check);
    frames_.back().failed |= failed;
  }
  void pass(const std::string& check) {
    result.pass(check);
    record(check, false);
  }
  void fail(const std::string& check, const std::string& path, std::string message, json details = json::object()) {
    record(check, true);
    result.failures.push_back({check, false, path, std::move(message), std::move(details)});
  }
  void expect(bool ok, const char* check, const std::string& path, const std::function<std::string()>& message,
              json details = json::object()) {
    ok ? pass(check) : fail(check, path, message(), std::move(details));
  }
  // A layout-class failure (shape, dtype, layout, strides, writeable) carries both sides' table. Its message and
  // details are made only for a failure: most checks pass, and each side's text is a call into Python.
  void expect_array(bool ok, const char* check, const ArrayLeaf& g, const ArrayLeaf& c, const std::string& path,
                    const std::function<std::string()>& message, const std::function<json()>& details);
  void compare_containers(const Node& g, const Node& c, const std::string& path);
  void compare_type(const Node& g, const Node& c, const std::string& path);
  void compare_arrays(const ArrayLeaf& g, const ArrayLeaf& c, bool layout_checks, const std::string& path);
  void compare_layout(const ArrayLeaf& g, const ArrayLeaf& c, const std::string& path);
  void compare_array_values(py::handle g, py::handle c, const std::string& path);
  void compare_field(py::handle g, py::handle c, py::handle name, const std::string& path);
  // The `order` policy (README "Policies"): whether a leaf is compared after sorting (sorted, a plain non-object
  // array of at least one dimension, not a part of a reduced object's state), and the note its failures then carry.
  bool sorts(const ArrayLeaf& leaf) const;
  void note_sorted(std::size_t first);
  bool compare_sorted_sequence(const Node& g, const Node& c, const std::string& path);
  void compare_leaf(const Node& g, const Node& c, const std::string& path);
  bool compare_leaf_checks(const Node& g, const Node& c, const std::string& path);
  bool compare_objects(const Node& g, const Node& c, const std::string& path);
  bool walk_elements(const Node& g, const Node& c, py::handle ga, py::handle ca, const std::string& path);
  bool states_comparable(const Node& g, const Node& c) const;
  void compare_state(const Node& g, const Node& c, const std::string& path);
  std::string uncompared_reason(const Node& g, const Node& c) const;
  void count_one_sided(const Node& node, const NodeIndex& index, int depth = 0);
  std::string sides(const std::string& gold, const std::string& candidate) const {
    return policy_.gold_name + " " + gold + ", " + policy_.candidate_name + " " + candidate;
  }

  const Policy& policy_;
  const NodeIndex &gold_index_, &candidate_index_;
  WalkState& state_;
  std::vector<LeafFrame> frames_;  // the leaves being compared, innermost last
  // Inside a reduced object's state, whose parts are never sorted one by one under order=sorted (a frame's columns
  // sorted apart would pair values of different rows).
  bool in_state_ = false;
};

void TreeComparer::expect_array(bool ok, const char* check, const ArrayLeaf& g, const ArrayLeaf& c,
                                const std::string& path, const std::function<std::string()>& message,
                                const std::function<json()>& details_of) {
  if (ok) return pass(check);
  json details = details_of();
  const json gf = array_facts(g.array, g.node), cf = array_facts(c.array, c.node);
  details["table"] = {{"gold", gf}, {"candidate", cf}};
  fail(check, path, message() + "\n" + facts_table(gf, cf, policy_.gold_name, policy_.candidate_name),
       std::move(details));
}

// Where a child is: the path the decoder recorded (attributes of reduced objects read `.name`), else `fallback`.
std::string child_path(const Node& child, const std::string& fallback) {
  return child.path.empty() ? fallback : child.path;
}

bool is_container(const Node& n) {
  return n.kind() == Node::Kind::Dict || n.kind() == Node::Kind::List || n.kind() == Node::Kind::Tuple;
}

// Python numbers become 0-d arrays so that one kernel decides every numeric comparison.
py::object as_array(const Node& n) {
  auto zero_d = [](py::object value) {
    return py::reinterpret_steal<py::object>(PyArray_FromAny(value.ptr(), nullptr, 0, 0, 0, nullptr));
  };
  switch (n.kind()) {
    case Node::Kind::Array:
    case Node::Kind::Scalar:
      return n.array();
    case Node::Kind::Float:
      return zero_d(py::float_(n.number().real()));
    case Node::Kind::Complex:
      return zero_d(py::reinterpret_steal<py::object>(PyComplex_FromDoubles(n.number().real(), n.number().imag())));
    case Node::Kind::Bool:
      return zero_d(py::bool_(n.boolean()));
    default:
      return py::object();
  }
}

// Whether the type named `name` derives from the one named `base`; only types whose modules are already
// imported are looked up (a name read from a file never makes parity import anything).
bool is_subclass(const std::string& name, const std::string& base) {
  return py::module_::import("parity.reducers").attr("is_subclass")(name, base).cast<bool>();
}

// A NumPy scalar on one side and a plain 0-d ndarray on the other: what the `scalar` policy 0d-ok lets stand for each
// other (their dtypes and values are still compared).
bool scalar_and_zero_d(const Node& g, const Node& c) {
  auto zero_d = [](const Node& n) {
    return n.kind() == Node::Kind::Array && n.type == "numpy.ndarray" &&
           PyArray_NDIM(reinterpret_cast<PyArrayObject*>(n.array().ptr())) == 0;
  };
  return (g.kind() == Node::Kind::Scalar && zero_d(c)) || (zero_d(g) && c.kind() == Node::Kind::Scalar);
}

void TreeComparer::compare_type(const Node& g, const Node& c, const std::string& path) {
  const std::string& mode = policy_.choice.type;
  if (mode == "ignore") return;
  const auto mapped = policy_.type_map.find(g.type);
  const std::string expected = mapped == policy_.type_map.end() ? g.type : mapped->second;
  const bool zero_d_pair = scalar_and_zero_d(g, c);
  // Inside a reduced object's state, the parts are what its reducer made (parity's library reducers make plain
  // arrays on both sides): the gold type itself is never a TYPE_MAP violation there.
  const bool ok = c.type == expected || (in_state_ && c.type == g.type) ||
                  (mode == "subclass-ok" && (is_subclass(c.type, expected) || is_subclass(c.type, g.type))) ||
                  (zero_d_pair && policy_.choice.scalar == "0d-ok");
  if (ok) return pass("type");  // every leaf's first check: its failure's details are made only when it fails
  std::string m = "type differs: " + sides(g.type, c.type);
  if (expected != g.type) m += " (expected " + expected + " through the candidate's TYPE_MAP)";
  if (mode == "subclass-ok") m += " (policy subclass-ok: " + c.type + " derives from neither)";
  if (zero_d_pair) m += " (a NumPy scalar against a 0-d array: the scalar policy 0d-ok would accept it)";
  fail("type", path, std::move(m), {{"gold", g.type}, {"candidate", c.type}, {"expected", expected}, {"policy", mode}});
}

void TreeComparer::compare_containers(const Node& g, const Node& c, const std::string& path) {
  if (g.kind() != Node::Kind::Dict) {
    expect(g.items().size() == c.items().size(), "structure", path,
           [&] {
             return std::string(kind_name(g.kind())) +
                    " length differs: " + sides(std::to_string(g.items().size()), std::to_string(c.items().size()));
           },
           {{"gold_length", g.items().size()}, {"candidate_length", c.items().size()}});
    if (compare_sorted_sequence(g, c, path)) return;
    for (std::size_t i = 0; i < std::min(g.items().size(), c.items().size()); ++i)
      walk(g.items()[i], c.items()[i], child_path(g.items()[i], path + "[" + std::to_string(i) + "]"));
    for (const Node* longer : {&g, &c})
      for (std::size_t i = std::min(g.items().size(), c.items().size()); i < longer->items().size(); ++i)
        count_one_sided(longer->items()[i], longer == &g ? gold_index_ : candidate_index_);
    return;
  }
  std::map<std::string, std::size_t> cand_keys;
  for (std::size_t i = 0; i < c.keys().size(); ++i) cand_keys[c.keys()[i]] = i;
  std::vector<std::string> only_gold, only_cand;
  for (std::size_t i = 0; i < g.keys().size(); ++i) {
    auto it = cand_keys.find(g.keys()[i]);
    if (it == cand_keys.end()) {
      only_gold.push_back(g.keys()[i]);
      count_one_sided(g.items()[i], gold_index_);
      continue;
    }
    walk(g.items()[i], c.items()[it->second], child_path(g.items()[i], key_path(path, g.keys()[i])));
    cand_keys.erase(it);
  }
  for (const auto& [key, i] : cand_keys) {
    only_cand.push_back(key);
    count_one_sided(c.items()[i], candidate_index_);
  }
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (const auto& k : keys) {
      // A reducer's path-suffix key (a frame's column "['a']") reads as it is, not quoted again.
      const bool suffix = !k.empty() && (k.front() == '[' || k.front() == '.');
      s += (s.empty() ? "" : ", ") + (suffix ? k : "'" + k + "'");
    }
    return s.empty() ? "none" : s;
  };
  expect(only_gold.empty() && only_cand.empty(), "structure", path,
         [&] {
           return "dict keys differ: only in " + policy_.gold_name + ": " + quoted(only_gold) + "; only in " +
                  policy_.candidate_name + ": " + quoted(only_cand);
         },
         {{"only_gold", only_gold}, {"only_candidate", only_cand}});
}

bool is_scalar_leaf(const Node& n) {
  switch (n.kind()) {
    case Node::Kind::Bool:
    case Node::Kind::Int:
    case Node::Kind::Float:
    case Node::Kind::Complex:
    case Node::Kind::Str:
    case Node::Kind::Bytes:
    case Node::Kind::Scalar:
      return true;
    default:
      return false;
  }
}

// A list or tuple of scalars under order=sorted: its elements compared pairwise in sorted order (NaN last), each side
// sorted its own way. Returns false, having compared nothing, when the policy does not apply or the elements have
// no common order (they are then compared as produced).
bool TreeComparer::compare_sorted_sequence(const Node& g, const Node& c, const std::string& path) {
  if (policy_.choice.order != "sorted" || in_state_) return false;
  py::object order = py::module_::import("parity.ordering").attr("sequence_order");
  auto permutation = [&order](const Node& n, const NodeIndex& index) -> py::object {
    py::list values;
    for (const Node& item : n.items()) {
      const Node& element = index.resolve(item);
      if (!is_scalar_leaf(element)) return py::none();
      values.append(to_python(element));
    }
    return order(values);
  };
  const py::object gp = permutation(g, gold_index_), cp = permutation(c, candidate_index_);
  if (gp.is_none() || cp.is_none()) return false;
  const auto gi = gp.cast<std::vector<std::size_t>>(), ci = cp.cast<std::vector<std::size_t>>();
  const std::size_t first = result.failures.size();
  for (std::size_t k = 0; k < std::min(gi.size(), ci.size()); ++k)
    walk(g.items()[gi[k]], c.items()[ci[k]], path + "[" + std::to_string(k) + "]");
  note_sorted(first);
  return true;
}

// Both sides' views without the axes along which both repeat one element (stride 0: np.broadcast_to, or a
// hostile file describing 10^12 elements over 8 bytes), and how many elements each one left stands for.
struct DistinctElements {
  py::object gold, candidate;
  std::int64_t repeats = 1;
};

DistinctElements distinct_elements(py::handle g, py::handle c) {
  auto* ga = reinterpret_cast<PyArrayObject*>(g.ptr());
  auto* ca = reinterpret_cast<PyArrayObject*>(c.ptr());
  DistinctElements out{py::reinterpret_borrow<py::object>(g), py::reinterpret_borrow<py::object>(c)};
  if (PyArray_SIZE(ga) == 0) return out;
  py::tuple key(PyArray_NDIM(ga));
  for (int d = 0; d < PyArray_NDIM(ga); ++d) {
    const bool repeated = PyArray_DIM(ga, d) > 1 && PyArray_STRIDE(ga, d) == 0 && PyArray_STRIDE(ca, d) == 0;
    if (repeated) out.repeats *= PyArray_DIM(ga, d);
    key[static_cast<std::size_t>(d)] = repeated ? py::slice(0, 1, 1) : py::slice(py::none(), py::none(), py::none());
  }
  if (out.repeats > 1) out.gold = g[key], out.candidate = c[key];
  return out;
}

// A report on the distinct elements, scaled back to the whole arrays: counts multiplied, the first mismatches
// kept (index 0 along a repeated axis is the first in C order), the map dropped (it was of the smaller shape).
void scale_report(ValueReport& r, std::int64_t repeats, std::int64_t total) {
  if (repeats == 1) return;
  r.total = total;
  for (std::int64_t* n : {&r.mismatched, &r.nan_mismatched, &r.inf_mismatched, &r.signed_zero_mismatched})
    *n *= repeats;
  r.map = MismatchMap{};
}

// Their shapes equal as tuples, without making the tuples.
bool same_shape(py::handle g, py::handle c) {
  auto* ga = reinterpret_cast<PyArrayObject*>(g.ptr());
  auto* ca = reinterpret_cast<PyArrayObject*>(c.ptr());
  return PyArray_NDIM(ga) == PyArray_NDIM(ca) &&
         std::equal(PyArray_DIMS(ga), PyArray_DIMS(ga) + PyArray_NDIM(ga), PyArray_DIMS(ca));
}

// One field of two structured arrays of one shape. Fields whose elements are subarrays of different shapes (which
// the kind policy lets through its dtype check) have no values to compare pairwise: said, not broadcast.
void TreeComparer::compare_field(py::handle g, py::handle c, py::handle name, const std::string& path) {
  py::object gf = g[name], cf = c[name];
  if (same_shape(gf, cf)) return compare_array_values(gf, cf, path);
  auto element_shape = [&](py::handle a) {
    return py_str(a.attr("dtype").attr("fields")[name].cast<py::tuple>()[0].attr("shape"));
  };
  fail("values", path,
       "values not compared: the field's elements are subarrays of different shapes (" +
           sides(element_shape(g), element_shape(c)) + ")");
}

void TreeComparer::compare_array_values(py::handle g, py::handle c, const std::string& path) {
  if (PyDataType_REFCHK(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(g.ptr())))) return;  // walked by compare_leaf
  py::object names = g.attr("dtype").attr("names");
  if (!names.is_none()) {
    // Structured: each field by its own rule, at its own path.
    py::object cand_names = c.attr("dtype").attr("names");
    if (cand_names.is_none() || !py::bool_(names.equal(cand_names))) return;  // the dtype check reports it
    if (py::len(names) == 0) return pass("values");                           // np.dtype([]) holds no value
    for (py::handle name : names) compare_field(g, c, name, path + ".field('" + py_str(name) + "')");
    return;
  }
  std::string tolerance_path;
  const Tolerance tol = policy_.tolerance_for(path, g.attr("dtype"), c.attr("dtype"), &tolerance_path);
  if (!tolerance_path.empty()) state_.tolerance_paths_used.insert(tolerance_path);
  const DistinctElements distinct = distinct_elements(g, c);
  ValueReport r = compare_values(distinct.gold, distinct.candidate, tol, state_.taps);
  scale_report(r, distinct.repeats, PyArray_SIZE(reinterpret_cast<PyArrayObject*>(g.ptr())));
  if (r.ok()) return pass("values");
  if (!r.not_comparable.empty())
    return fail("values", path,
                "values not compared: " + r.not_comparable + " (" + sides(dtype_text(g), dtype_text(c)) + ")");
  fail("values", path, values_message(r, tol, policy_), values_details(r, tol));
}

bool dtype_matches(py::handle g, py::handle c, const std::string& mode) {
  auto* gd = reinterpret_cast<PyArray_Descr*>(g.ptr());
  auto* cd = reinterpret_cast<PyArray_Descr*>(c.ptr());
  if (PyArray_EquivTypes(gd, cd)) return true;
  if (mode == "native-order-ok") return py::bool_(g.attr("newbyteorder")("=").equal(c.attr("newbyteorder")("=")));
  if (mode == "kind") return gd->kind == cd->kind && py::bool_(g.attr("names").equal(c.attr("names")));
  return false;
}

// Strides along an axis of length 0 or 1 locate no second element, so they are not compared (nor are the
// strides of an empty array).
bool same_strides(py::handle g, py::handle c) {
  auto* ga = reinterpret_cast<PyArrayObject*>(g.ptr());
  auto* ca = reinterpret_cast<PyArrayObject*>(c.ptr());
  if (PyArray_SIZE(ga) == 0) return true;
  for (int d = 0; d < PyArray_NDIM(ga); ++d)
    if (PyArray_DIM(ga, d) > 1 && PyArray_STRIDE(ga, d) != PyArray_STRIDE(ca, d)) return false;
  return true;
}

void TreeComparer::compare_layout(const ArrayLeaf& g, const ArrayLeaf& c, const std::string& path) {
  const std::string& mode = policy_.choice.layout;
  if (mode == "ignore") return;
  auto* ga = reinterpret_cast<PyArrayObject*>(g.array.ptr());
  auto* ca = reinterpret_cast<PyArrayObject*>(c.array.ptr());
  const bool same_layout = PyArray_IS_C_CONTIGUOUS(ga) == PyArray_IS_C_CONTIGUOUS(ca) &&
                           PyArray_IS_F_CONTIGUOUS(ga) == PyArray_IS_F_CONTIGUOUS(ca);  // its flags c_ and f_contiguous
  expect_array(
      same_layout, "layout", g, c, path,
      [&] { return "layout differs: " + sides(layout_text(g.array), layout_text(c.array)); },
      [&] {
        return json{{"gold", layout_text(g.array)}, {"candidate", layout_text(c.array)}};
      });
  if (mode != "strides") return;
  expect_array(
      same_strides(g.array, c.array), "strides", g, c, path,
      [&] {
        return "strides differ (policy strides): " +
               sides(py_str(g.array.attr("strides")), py_str(c.array.attr("strides")));
      },
      [&] {
        return json{{"gold", py_str(g.array.attr("strides"))}, {"candidate", py_str(c.array.attr("strides"))}};
      });
}

void TreeComparer::compare_arrays(const ArrayLeaf& g, const ArrayLeaf& c, bool layout_checks, const std::string& path) {
  auto* ga = reinterpret_cast<PyArrayObject*>(g.array.ptr());
  auto* ca = reinterpret_cast<PyArrayObject*>(c.array.ptr());
  const bool shapes_equal = same_shape(g.array, c.array);
  if (layout_checks)
    expect_array(
        shapes_equal, "shape", g, c, path,
        [&] { return "shape differs: " + sides(shape_text(g.array), shape_text(c.array)); },
        [&] {
          return json{{"gold", py_str(g.array.attr("shape"))}, {"candidate", py_str(c.array.attr("shape"))}};
        });
  const std::string& dtype_mode = policy_.choice.dtype;
  py::object gd = g.array.attr("dtype"), cd = c.array.attr("dtype");
  expect_array(
      dtype_matches(gd, cd, dtype_mode), "dtype", g, c, path,
      [&] {
        return "dtype differs" + (dtype_mode == "exact" ? std::string() : " (policy " + dtype_mode + ")") + ": " +
               sides(dtype_text(g.array), dtype_text(c.array));
      },
      [&] {
        return json{{"gold", py_str(gd.attr("str"))}, {"candidate", py_str(cd.attr("str"))}, {"policy", dtype_mode}};
      });
  if (layout_checks && shapes_equal) compare_layout(g, c, path);
  if (layout_checks && policy_.choice.writeable != "ignore") {
    const bool gw = PyArray_ISWRITEABLE(ga), cw = PyArray_ISWRITEABLE(ca);  // flags.writeable
    auto word = [](bool w) { return std::string(w ? "writeable" : "read-only"); };
    expect_array(
        gw == cw, "writeable", g, c, path, [&] { return "writeable flag differs: " + sides(word(gw), word(cw)); },
        [&] {
          return json{{"gold", gw}, {"candidate", cw}};
        });
  }
  if (!shapes_equal) return;
  if (!sorts(g) || !sorts(c)) return compare_array_values(g.array, c.array, path);
  // Each side sorted its own way; the layout checks above looked at the arrays as produced.
  py::object sort = py::module_::import("parity.ordering").attr("sorted_array");
  py::object gs = sort(g.array), cs = sort(c.array);
  if (gs.is_none() || cs.is_none()) return compare_array_values(g.array, c.array, path);  // no order: as produced
  const std::size_t first = result.failures.size();
  compare_array_values(gs, cs, path);
  note_sorted(first);
}

bool TreeComparer::sorts(const ArrayLeaf& leaf) const {
  auto* array = reinterpret_cast<PyArrayObject*>(leaf.array.ptr());
  return policy_.choice.order == "sorted" && !in_state_ && leaf.node.state.empty() && PyArray_NDIM(array) > 0 &&
         !PyDataType_REFCHK(PyArray_DESCR(array));
}

void TreeComparer::note_sorted(std::size_t first) {
  for (std::size_t i = first; i < result.failures.size(); ++i) {
    Check& failure = result.failures[i];
    failure.message += "\n(compared after sorting (policy order: sorted); indices are positions in the sorted order)";
    failure.details["order"] = "sorted";
  }
}

// State entries whose values legitimately differ between two runs (a memmap's file name: each run writes its own
// file); only whether both sides have one is compared. Reducers declare them (parity.reducers.register).
std::vector<std::string> volatile_keys(const std::string& reducer) {
  return py::module_::import("parity.reducers").attr("volatile_keys")(reducer).cast<std::vector<std::string>>();
}

// `node` without the entries named in `keys`; the removed entries' None-ness goes to `present`.
Node without_keys(const Node& node, const std::vector<std::string>& keys, std::map<std::string, bool>& present) {
  Node out = node;
  Node::Dict kept;
  for (std::size_t i = 0; i < node.keys().size(); ++i) {
    if (std::find(keys.begin(), keys.end(), node.keys()[i]) == keys.end()) {
      kept.keys.push_back(node.keys()[i]), kept.items.push_back(node.items()[i]);
    } else {
      present[node.keys()[i]] = node.items()[i].kind() != Node::Kind::None;
    }
  }
  out.value = std::move(kept);
  return out;
}

// Two reduced objects whose states are compared part by part: of one type, or a library type and the candidate's
// TYPE_MAP proxy of it (a modin frame whose reducer records a pandas frame's state).
bool TreeComparer::states_comparable(const Node& g, const Node& c) const {
  if (g.type == c.type) return true;
  const auto mapped = policy_.type_map.find(g.type);
  return g.kind() == Node::Kind::Object && c.kind() == Node::Kind::Object && mapped != policy_.type_map.end() &&
         mapped->second == c.type;
}

// For leaves of one type, what their reducer recorded is compared with the same checks. For an array subclass it is
// what the subclass adds (a mask, a fill value, a memmap's mode and offset, instance attributes): any failure there
// is an `attrs` failure naming the inner check. For any other object it is the object's value. Leaves of different
// types (a TYPE_MAP proxy against a plain array) share no state: their values are compared through array forms
// (compare_objects), and the backend's REQUIRED_ATTRS are checked on the rebuilt candidate (run_probes).
void TreeComparer::compare_state(const Node& g, const Node& c, const std::string& path) {
  if (!states_comparable(g, c) || (g.state.empty() && c.state.empty())) return;
  if (g.state.empty() != c.state.empty())
    return fail("attrs", path,
                "subclass state recorded only for " + (g.state.empty() ? policy_.candidate_name : policy_.gold_name));
  const Node *gs = &g.state.front(), *cs = &c.state.front();
  Node gtrim, ctrim;
  if (gs->kind() == Node::Kind::Dict && cs->kind() == Node::Kind::Dict && g.reducer == c.reducer) {
    const auto keys = volatile_keys(g.reducer);
    std::map<std::string, bool> gp, cp;
    gtrim = without_keys(*gs, keys, gp), ctrim = without_keys(*cs, keys, cp);
    gs = &gtrim, cs = &ctrim;
    for (const auto& [key, has] : gp) {
      if (!cp.count(key) || cp[key] == has) continue;
      auto word = [](bool h) { return std::string(h ? "set" : "None"); };
      fail("attrs", child_path(*gs, path) + "['" + key + "']",
           "'" + key + "' is " + word(has) + " for " + policy_.gold_name + " but " + word(cp[key]) + " for " +
               policy_.candidate_name + " (its value is not compared: it differs from run to run)",
           {{"attribute", key}, {"gold", has}, {"candidate", cp[key]}});
    }
  }
  // A reduced object that is no array is its state (a Quantity's magnitude and units, a frame's columns): its parts
  // are compared with the ordinary checks, each at its own path (outputs['q'].magnitude).
  if (g.kind() == Node::Kind::Object) {
    const bool outer = std::exchange(in_state_, true);
    walk(*gs, *cs, child_path(*gs, path));
    in_state_ = outer;
    return;
  }
  TreeComparer inner(policy_, gold_index_, candidate_index_, state_);
  inner.in_state_ = true;
  inner.walk(*gs, *cs, child_path(*gs, path));
  if (inner.result.failures.empty()) return pass("attrs");
  for (Check& f : inner.result.failures) {
    f.details["inner_check"] = f.check;
    f.message = "[" + f.check + "] " + f.message;
    f.check = "attrs";
    record("attrs", true);
    result.failures.push_back(std::move(f));
  }
}

// The array a leaf stands for: an array's own node, or a mapped object's array form; nullptr when it has none.
const Node* array_of(const Node& n) {
  if (n.kind() == Node::Kind::Array) return &n;
  if (n.kind() == Node::Kind::Object && n.array_form()) return n.array_form();
  return nullptr;
}

bool holds_objects(py::handle array) {
  return PyDataType_REFCHK(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(array.ptr())));
}

// Object arrays of one shape: the elements, pairwise in C order, with the same checks as any output. Returns
// whether they were walked (the elements are then the leaves, not the array).
bool TreeComparer::walk_elements(const Node& g, const Node& c, py::handle ga, py::handle ca, const std::string& path) {
  if (!holds_objects(ga) || !holds_objects(ca) || g.items().size() != c.items().size() ||
      !py::bool_(ga.attr("shape").equal(ca.attr("shape"))))
    return false;
  for (std::size_t i = 0; i < g.items().size(); ++i) walk(g.items()[i], c.items()[i], child_path(g.items()[i], path));
  return true;
}

// A reduced object against anything. Against one of its own type: part by part, each part a leaf of its own.
// Across TYPE_MAP (gold's array, the candidate's mapped wrapper; two mapped types): their arrays, with every array
// check. A stateless object is its type. Anything else has nothing common to compare: compare_leaf reports it.
// Returns whether the pair is a leaf (false: its parts were).
bool TreeComparer::compare_objects(const Node& g, const Node& c, const std::string& path) {
  const bool same_type = g.kind() == c.kind() && g.type == c.type;
  if (g.kind() == c.kind() && states_comparable(g, c) && !(g.state.empty() && c.state.empty())) {
    compare_state(g, c, path);
    return false;
  }
  const Node *ga = array_of(g), *ca = array_of(c);
  if (ga && ca) {
    compare_arrays({ga->array(), *ga}, {ca->array(), *ca}, true, path);
    return true;
  }
  // A NumPy scalar against a mapped wrapper (a reduction of a proxy may give a 0-d proxy): dtype and values, as for
  // a scalar against an array; a scalar has no layout to check.
  const Node* gs = ga ? ga : g.kind() == Node::Kind::Scalar ? &g : nullptr;
  const Node* cs = ca ? ca : c.kind() == Node::Kind::Scalar ? &c : nullptr;
  if (gs && cs) {
    compare_arrays({gs->array(), *gs}, {cs->array(), *cs}, false, path);
    return true;
  }
  if (same_type) pass("values");  // no state: the type is the whole value, and it is the same
  return true;
}

// The checks of one leaf pair; returns false when its parts were compared as leaves of their own instead.
bool TreeComparer::compare_leaf_checks(const Node& g, const Node& c, const std::string& path) {
  compare_type(g, c, path);
  if (g.kind() == Node::Kind::Object || c.kind() == Node::Kind::Object) return compare_objects(g, c, path);
  py::object ga = as_array(g), ca = as_array(c);
  if (ga && ca) {
    const bool arrays = g.kind() == Node::Kind::Array && c.kind() == Node::Kind::Array;
    compare_arrays({ga, g}, {ca, c}, arrays, path);
    const bool elements = arrays && walk_elements(g, c, ga, ca, path);
    compare_state(g, c, path);
    return !elements;
  }
  if (g.kind() != c.kind()) return true;  // no common value: the type check says why, or `uncompared` does
  const bool equal = g.kind() == Node::Kind::None || g.text() == c.text();
  expect(equal, "values", path,
         [&] {
           // Python's repr of at most 200 characters: valid UTF-8 whatever bytes or surrogates it holds.
           auto show = [](const Node& n) {
             try {
               py::object value = to_python(n);
               if (n.kind() != Node::Kind::Int) value = value[py::slice(0, 200, 1)];
               return py::repr(value).cast<std::string>();
             } catch (py::error_already_set&) {  // an int past Python's 4300-digit repr limit
               return n.text().substr(0, 200);
             }
           };
           return std::string("Not equal (exact comparison of ") + kind_name(g.kind()) +
                  "): " + sides(show(g), show(c));
         },
         {{"criterion", "exact"}});
  return true;
}

std::string TreeComparer::uncompared_reason(const Node& g, const Node& c) const {
  for (const auto& [n, other, name] :
       {std::tuple{&c, &g, policy_.candidate_name}, std::tuple{&g, &c, policy_.gold_name}}) {
    if (n->kind() == Node::Kind::Object && !n->array_form() && (array_of(*other) || other->kind() != n->kind()))
      return "the " + name + "'s " + n->type +
             " has no array form: give the backend a to_numpy(obj) hook or the type an __array__ (the backend's "
             "TYPE_MAP must name the type)";
  }
  if (g.kind() == Node::Kind::Object && c.kind() == Node::Kind::Object)
    return "objects of different types, neither part by part nor through array forms comparable";
  if (g.kind() != c.kind())
    return std::string("a ") + kind_name(g.kind()) + " against a " + kind_name(c.kind()) +
           " has no common value, and no failed check says so (type policy " + policy_.choice.type + ")";
  return "their shapes differ (" + shape_text(as_array(g)) + " and " + shape_text(as_array(c)) +
         ") and no shape check applies between these kinds";
}

// Every leaf pair reaches a values comparison or a failed check that says why not; anything else would pass
// silently, so it fails `uncompared`, naming both types and the reason.
void TreeComparer::compare_leaf(const Node& g, const Node& c, const std::string& path) {
  // The pandas policies relax an object by comparing both sides as they see them (pandas_policy.h).
  if (pandas_relaxed(g, policy_.choice) || pandas_relaxed(c, policy_.choice))
    return compare_leaf(pandas_normalized(g, policy_.choice, gold_index_),
                        pandas_normalized(c, policy_.choice, candidate_index_), path);
  frames_.emplace_back();
  const bool leaf = compare_leaf_checks(g, c, path);
  const LeafFrame frame = std::move(frames_.back());
  frames_.pop_back();
  if (!leaf) return;
  ++result.coverage.leaves;
  for (const std::string& check : frame.checks) ++result.coverage.checks[check];
  if (frame.checks.count("values") || frame.failed) return;
  ++result.coverage.checks["uncompared"];
  const std::string reason = uncompared_reason(g, c);
  result.failures.push_back({"uncompared",
                             false,
                             path,
                             "not compared: " + sides(g.type, c.type) + ": " + reason,
                             {{"gold", g.type},
                              {"candidate", c.type},
                              {"gold_kind", kind_name(g.kind())},
                              {"candidate_kind", kind_name(c.kind())},
                              {"reason", reason}}});
}

// A subtree present on one side only: its leaves count (Coverage), though no check but `structure` reaches them.
void TreeComparer::count_one_sided(const Node& node, const NodeIndex& index, int depth) {
  if (++state_.visits > kMaxVisits || depth > kMaxOneSidedDepth)
    throw FormatError(node.path + ": too many or too deeply nested nodes to count (references expanding?)");
  const Node& n = index.resolve(node);
  const std::vector<Node>* parts = is_container(n)                                       ? &n.items()
                                   : n.kind() == Node::Kind::Object && !n.state.empty()  ? &n.state
                                   : n.kind() == Node::Kind::Array && !n.items().empty() ? &n.items()
                                                                                         : nullptr;
  if (!parts) return void(++result.coverage.leaves);
  for (const Node& part : *parts) count_one_sided(part, index, depth + 1);
}

void TreeComparer::walk(const Node& gold_node, const Node& candidate_node, const std::string& path) {
  check_deadline(path.c_str());
  if (++state_.visits > kMaxVisits)
    throw FormatError(path + ": more than " + std::to_string(kMaxVisits) + " nodes to compare (references expanding?)");
  // The same earlier object on both sides has been compared where it first appeared.
  if (gold_node.is_ref() && gold_node.ref() == candidate_node.ref()) return;
  const Node& g = gold_index_.resolve(gold_node);
  const Node& c = candidate_index_.resolve(candidate_node);
  if (is_container(g) || is_container(c)) {
    if (g.kind() != c.kind()) {
      count_one_sided(g, gold_index_);
      count_one_sided(c, candidate_index_);
      return fail("structure", path,
                  std::string("container kind differs: ") + sides(kind_name(g.kind()), kind_name(c.kind())),
                  {{"gold", kind_name(g.kind())}, {"candidate", kind_name(c.kind())}});
    }
    pass("structure");
    compare_type(g, c, path);
    return compare_containers(g, c, path);
  }
  compare_leaf(g, c, path);
}

}  // namespace

CheckList compare_outputs(const Node& gold, const Node& candidate, const Policy& policy, const DigestTaps* taps) {
  const NodeIndex gold_index(gold), candidate_index(candidate);
  WalkState state;
  state.taps = taps;
  TreeComparer comparer(policy, gold_index, candidate_index, state);
  comparer.walk(gold, candidate, "outputs");
  for (const auto& [path, _] : policy.by_path) {
    if (state.tolerance_paths_used.count(path)) continue;
    comparer.result.failures.push_back(
        {"error",
         false,
         path,
         "the scenario's tolerances name " + path +
             ", but no values compared are at or under that path (paths read like outputs['x'][0] or "
             "outputs['r'].field('a'))",
         {{"tolerances_path", path}}});
  }
  return std::move(comparer.result);
}

}  // namespace parity
