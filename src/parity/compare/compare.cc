// Leaf-by-leaf checks and scenario verdicts (see compare.h); messages follow numpy.testing's layout.
#include "compare.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "deadline.h"
#include "json_input.h"
#include "numpy_api.h"
#include "pandas_policy.h"
#include "record_check.h"
#include "resources.h"
#include "safe_file.h"
#include "text.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

std::string fmt_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string py_str(py::handle obj) { return py::str(obj).cast<std::string>(); }

// A JSON value as the Python object json.loads makes of it.
py::object to_py(const json& value) { return py::module_::import("json").attr("loads")(value.dump()); }

// A JSON-able Python object (an error record, a failure's details, DIFFERENCES) as JSON, through Python's own json
// module (parity._scenario.json_text, which keeps lone surrogates from making invalid UTF-8).
json from_py(py::handle value) {
  return parse_json(py::module_::import("parity._scenario").attr("json_text")(value).cast<std::string>(), "");
}

std::string shape_text(py::handle array) { return py_str(array.attr("shape")); }

std::string dtype_text(py::handle array) {
  py::object dtype = array.attr("dtype");
  const std::string str = dtype.attr("str").cast<std::string>();
  const char order = str.empty() ? '|' : str[0];
  const char* endian = order == '>' ? "big-endian " : order == '<' ? "little-endian " : "";
  return str + " (" + endian + dtype.attr("name").cast<std::string>() + ")";
}

std::string layout_text(py::handle array) {
  py::object flags = array.attr("flags");
  const bool c = flags.attr("c_contiguous").cast<bool>(), f = flags.attr("f_contiguous").cast<bool>();
  const std::string kind = c && f ? "C- and F-contiguous" : c ? "C-contiguous" : f ? "F-contiguous" : "non-contiguous";
  return kind + ", strides " + py_str(array.attr("strides"));
}

// What the layout-class checks look at, for one side: the side-by-side table of their failures.
// The names a subclass's reducer recorded (its attributes), "none" for a plain array.
std::string attribute_names(const Node& node) {
  if (node.state.empty() || node.state.front().kind != Node::Kind::Dict) return "none";
  std::string names;
  for (const std::string& key : node.state.front().keys) names += (names.empty() ? "" : ", ") + key;
  return names.empty() ? "none" : names;
}

json array_facts(py::handle array, const Node& node) {
  const std::string& type = node.type;
  py::object flags = array.attr("flags");
  return {{"dtype", array.attr("dtype").attr("str").cast<std::string>()},
          {"shape", py_str(array.attr("shape"))},
          {"strides", py_str(array.attr("strides"))},
          {"c_contiguous", flags.attr("c_contiguous").cast<bool>()},
          {"f_contiguous", flags.attr("f_contiguous").cast<bool>()},
          {"writeable", flags.attr("writeable").cast<bool>()},
          {"aligned", flags.attr("aligned").cast<bool>()},
          {"type", type},
          {"memmap", type == "numpy.memmap"},
          {"attributes", attribute_names(node)}};
}

std::string facts_table(const json& gold, const json& candidate, const std::string& gold_name,
                        const std::string& candidate_name) {
  auto cell = [](const json& v) {
    if (v.is_boolean()) return std::string(v.get<bool>() ? "yes" : "no");
    return v.get<std::string>();
  };
  static const char* const kRows[] = {"dtype",     "shape",   "strides", "c_contiguous", "f_contiguous",
                                      "writeable", "aligned", "type",    "memmap",       "attributes"};
  std::size_t width = gold_name.size();
  for (const char* key : kRows) width = std::max(width, cell(gold.at(key)).size());
  auto row = [&](const std::string& label, const std::string& g, const std::string& c) {
    std::string line = "  " + label;
    line.resize(16, ' ');
    std::string left = g;
    left.resize(width + 2, ' ');
    return line + left + c + "\n";
  };
  std::string text = row("", gold_name, candidate_name);
  for (const char* key : kRows) text += row(key, cell(gold.at(key)), cell(candidate.at(key)));
  return text;
}

// What one walk of two trees shares with the walks of their reducers' state: how many nodes it visited (a bound
// against hostile files), and which of the scenario's per-path tolerances it applied (one never applied is a
// misspelt path, reported rather than silently ignored).
struct WalkState {
  std::int64_t visits = 0;
  std::set<std::string> tolerance_paths_used;
};

// A hostile file can make references expand exponentially; no real output needs this many visits.
constexpr std::int64_t kMaxVisits = 10'000'000;
// Nesting of a subtree on one side only, as deep as the decoder lets a file nest (codec.cc's kMaxDepth is 500).
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
  // A layout-class failure (shape, dtype, layout, strides, writeable) carries both sides' table.
  void expect_array(bool ok, const char* check, const ArrayLeaf& g, const ArrayLeaf& c, const std::string& path,
                    const std::function<std::string()>& message, json details);
  void compare_containers(const Node& g, const Node& c, const std::string& path);
  void compare_type(const Node& g, const Node& c, const std::string& path);
  void compare_arrays(const ArrayLeaf& g, const ArrayLeaf& c, bool layout_checks, const std::string& path);
  void compare_layout(const ArrayLeaf& g, const ArrayLeaf& c, const std::string& path);
  void compare_array_values(py::handle g, py::handle c, const std::string& path);
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
                                const std::string& path, const std::function<std::string()>& message, json details) {
  if (ok) return pass(check);
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
  return n.kind == Node::Kind::Dict || n.kind == Node::Kind::List || n.kind == Node::Kind::Tuple;
}

// Python numbers become 0-d arrays so that one kernel decides every numeric comparison.
py::object as_array(const Node& n) {
  auto zero_d = [](py::object value) {
    return py::reinterpret_steal<py::object>(PyArray_FromAny(value.ptr(), nullptr, 0, 0, 0, nullptr));
  };
  switch (n.kind) {
    case Node::Kind::Array:
    case Node::Kind::Scalar:
      return n.array;
    case Node::Kind::Float:
      return zero_d(py::float_(n.number.real()));
    case Node::Kind::Complex:
      return zero_d(py::reinterpret_steal<py::object>(PyComplex_FromDoubles(n.number.real(), n.number.imag())));
    case Node::Kind::Bool:
      return zero_d(py::bool_(n.boolean));
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
    return n.kind == Node::Kind::Array && n.type == "numpy.ndarray" &&
           PyArray_NDIM(reinterpret_cast<PyArrayObject*>(n.array.ptr())) == 0;
  };
  return (g.kind == Node::Kind::Scalar && zero_d(c)) || (zero_d(g) && c.kind == Node::Kind::Scalar);
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
  expect(ok, "type", path,
         [&] {
           std::string m = "type differs: " + sides(g.type, c.type);
           if (expected != g.type) m += " (expected " + expected + " through the candidate's TYPE_MAP)";
           if (mode == "subclass-ok") m += " (policy subclass-ok: " + c.type + " derives from neither)";
           if (zero_d_pair) m += " (a NumPy scalar against a 0-d array: the scalar policy 0d-ok would accept it)";
           return m;
         },
         {{"gold", g.type}, {"candidate", c.type}, {"expected", expected}, {"policy", mode}});
}

void TreeComparer::compare_containers(const Node& g, const Node& c, const std::string& path) {
  if (g.kind != Node::Kind::Dict) {
    expect(g.items.size() == c.items.size(), "structure", path,
           [&] {
             return std::string(kind_name(g.kind)) +
                    " length differs: " + sides(std::to_string(g.items.size()), std::to_string(c.items.size()));
           },
           {{"gold_length", g.items.size()}, {"candidate_length", c.items.size()}});
    if (compare_sorted_sequence(g, c, path)) return;
    for (std::size_t i = 0; i < std::min(g.items.size(), c.items.size()); ++i)
      walk(g.items[i], c.items[i], child_path(g.items[i], path + "[" + std::to_string(i) + "]"));
    for (const Node* longer : {&g, &c})
      for (std::size_t i = std::min(g.items.size(), c.items.size()); i < longer->items.size(); ++i)
        count_one_sided(longer->items[i], longer == &g ? gold_index_ : candidate_index_);
    return;
  }
  std::map<std::string, std::size_t> cand_keys;
  for (std::size_t i = 0; i < c.keys.size(); ++i) cand_keys[c.keys[i]] = i;
  std::vector<std::string> only_gold, only_cand;
  for (std::size_t i = 0; i < g.keys.size(); ++i) {
    auto it = cand_keys.find(g.keys[i]);
    if (it == cand_keys.end()) {
      only_gold.push_back(g.keys[i]);
      count_one_sided(g.items[i], gold_index_);
      continue;
    }
    walk(g.items[i], c.items[it->second], child_path(g.items[i], key_path(path, g.keys[i])));
    cand_keys.erase(it);
  }
  for (const auto& [key, i] : cand_keys) {
    only_cand.push_back(key);
    count_one_sided(c.items[i], candidate_index_);
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
  switch (n.kind) {
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
    for (const Node& item : n.items) {
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
    walk(g.items[gi[k]], c.items[ci[k]], path + "[" + std::to_string(k) + "]");
  note_sorted(first);
  return true;
}

std::string index_text(const std::vector<std::int64_t>& index) { return index_path(index); }

json mismatch_list(const std::vector<Mismatch>& list) {
  json out = json::array();
  for (const Mismatch& m : list)
    out.push_back(
        {{"index", m.index}, {"gold", m.gold}, {"candidate", m.candidate}, {"kind", mismatch_kind_name(m.kind)}});
  return out;
}

void print_mismatches(std::ostringstream& m, const std::vector<Mismatch>& list) {
  for (const Mismatch& mm : list) m << "  " << index_text(mm.index) << ": " << mm.gold << " | " << mm.candidate << "\n";
}

double percent(std::int64_t part, std::int64_t total) {
  return total ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0.0;
}

// numpy.testing's layout, plus what it leaves out: NaN/inf locations apart, and where the largest differences are.
std::string values_message(const ValueReport& r, const Tolerance& t, const Policy& p) {
  std::ostringstream m;
  if (r.criterion == "allclose")
    m << "Not equal to tolerance rtol=" << fmt_g(t.rtol) << ", atol=" << fmt_g(t.atol)
      << " (|candidate - gold| <= atol + rtol * |gold|, NaN == NaN, signed zeros "
      << (t.signed_zeros ? "distinct" : "equal") << ", compared as " << r.compared_as << ")\n";
  else
    m << "Not equal (exact comparison, compared as " << r.compared_as << ")\n";
  m << "Mismatched elements: " << r.mismatched << " / " << r.total << " (" << fmt_g(percent(r.mismatched, r.total))
    << "%)\n";
  if (r.nan_mismatched + r.inf_mismatched) {
    m << "NaN/inf locations differ at " << r.nan_mismatched + r.inf_mismatched
      << " (NaN on one side only: " << r.nan_mismatched << ", infinity differs: " << r.inf_mismatched
      << "); first (index: " << p.gold_name << " | " << p.candidate_name << "):\n";
    print_mismatches(m, r.first_nonfinite);
  }
  if (r.signed_zero_mismatched) m << "Signed zeros differ at " << r.signed_zero_mismatched << "\n";
  m << "First mismatches (index: " << p.gold_name << " | " << p.candidate_name << "):\n";
  print_mismatches(m, r.first);
  if (r.max_abs.found)
    m << "Max absolute difference among violations: " << fmt_g(r.max_abs.value) << " at " << index_text(r.max_abs.index)
      << "\n";
  if (r.max_rel.found)
    m << "Max relative difference among violations: " << fmt_g(r.max_rel.value) << " at " << index_text(r.max_rel.index)
      << "\n";
  std::string text = m.str();
  text.pop_back();
  return text;
}

json values_details(const ValueReport& r, const Tolerance& t) {
  json d = {{"criterion", r.criterion},
            {"compared_as", r.compared_as},
            {"rtol", t.rtol},
            {"atol", t.atol},
            {"signed_zeros", t.signed_zeros},
            {"mismatched", r.mismatched},
            {"total", r.total},
            {"percent", percent(r.mismatched, r.total)},
            {"nan_mismatched", r.nan_mismatched},
            {"inf_mismatched", r.inf_mismatched},
            {"signed_zero_mismatched", r.signed_zero_mismatched},
            {"first", mismatch_list(r.first)},
            {"first_nonfinite", mismatch_list(r.first_nonfinite)}};
  if (r.max_abs.found) d["max_abs_diff"] = r.max_abs.value, d["max_abs_index"] = r.max_abs.index;
  if (r.max_rel.found) d["max_rel_diff"] = r.max_rel.value, d["max_rel_index"] = r.max_rel.index;
  if (!r.map.empty())
    d["map"] = {{"shape", r.map.shape}, {"grid", r.map.grid}, {"counts", r.map.counts}, {"sizes", r.map.sizes}};
  return d;
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

void TreeComparer::compare_array_values(py::handle g, py::handle c, const std::string& path) {
  if (PyDataType_REFCHK(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(g.ptr())))) return;  // walked by compare_leaf
  py::object names = g.attr("dtype").attr("names");
  if (!names.is_none()) {
    // Structured: each field by its own rule, at its own path.
    py::object cand_names = c.attr("dtype").attr("names");
    if (cand_names.is_none() || !py::bool_(names.equal(cand_names))) return;  // the dtype check reports it
    for (py::handle name : names) compare_array_values(g[name], c[name], path + ".field('" + py_str(name) + "')");
    return;
  }
  std::string tolerance_path;
  const Tolerance tol = policy_.tolerance_for(path, g.attr("dtype"), c.attr("dtype"), &tolerance_path);
  if (!tolerance_path.empty()) state_.tolerance_paths_used.insert(tolerance_path);
  const DistinctElements distinct = distinct_elements(g, c);
  ValueReport r = compare_values(distinct.gold, distinct.candidate, tol);
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
  py::object gf = g.array.attr("flags"), cf = c.array.attr("flags");
  const bool same_layout =
      gf.attr("c_contiguous").equal(cf.attr("c_contiguous")) && gf.attr("f_contiguous").equal(cf.attr("f_contiguous"));
  expect_array(same_layout, "layout", g, c, path,
               [&] { return "layout differs: " + sides(layout_text(g.array), layout_text(c.array)); },
               {{"gold", layout_text(g.array)}, {"candidate", layout_text(c.array)}});
  if (mode != "strides") return;
  expect_array(same_strides(g.array, c.array), "strides", g, c, path,
               [&] {
                 return "strides differ (policy strides): " +
                        sides(py_str(g.array.attr("strides")), py_str(c.array.attr("strides")));
               },
               {{"gold", py_str(g.array.attr("strides"))}, {"candidate", py_str(c.array.attr("strides"))}});
}

void TreeComparer::compare_arrays(const ArrayLeaf& g, const ArrayLeaf& c, bool layout_checks, const std::string& path) {
  const bool same_shape = py::bool_(g.array.attr("shape").equal(c.array.attr("shape")));
  if (layout_checks)
    expect_array(same_shape, "shape", g, c, path,
                 [&] { return "shape differs: " + sides(shape_text(g.array), shape_text(c.array)); },
                 {{"gold", py_str(g.array.attr("shape"))}, {"candidate", py_str(c.array.attr("shape"))}});
  const std::string& dtype_mode = policy_.choice.dtype;
  py::object gd = g.array.attr("dtype"), cd = c.array.attr("dtype");
  expect_array(dtype_matches(gd, cd, dtype_mode), "dtype", g, c, path,
               [&] {
                 return "dtype differs" + (dtype_mode == "exact" ? std::string() : " (policy " + dtype_mode + ")") +
                        ": " + sides(dtype_text(g.array), dtype_text(c.array));
               },
               {{"gold", py_str(gd.attr("str"))}, {"candidate", py_str(cd.attr("str"))}, {"policy", dtype_mode}});
  if (layout_checks && same_shape) compare_layout(g, c, path);
  if (layout_checks && policy_.choice.writeable != "ignore") {
    const bool gw = g.array.attr("flags").attr("writeable").cast<bool>();
    const bool cw = c.array.attr("flags").attr("writeable").cast<bool>();
    auto word = [](bool w) { return std::string(w ? "writeable" : "read-only"); };
    expect_array(gw == cw, "writeable", g, c, path,
                 [&] { return "writeable flag differs: " + sides(word(gw), word(cw)); },
                 {{"gold", gw}, {"candidate", cw}});
  }
  if (!same_shape) return;
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
  out.keys.clear(), out.items.clear();
  for (std::size_t i = 0; i < node.keys.size(); ++i) {
    if (std::find(keys.begin(), keys.end(), node.keys[i]) == keys.end()) {
      out.keys.push_back(node.keys[i]), out.items.push_back(node.items[i]);
    } else {
      present[node.keys[i]] = node.items[i].kind != Node::Kind::None;
    }
  }
  return out;
}

// Two reduced objects whose states are compared part by part: of one type, or a library type and the candidate's
// TYPE_MAP proxy of it (a modin frame whose reducer records a pandas frame's state).
bool TreeComparer::states_comparable(const Node& g, const Node& c) const {
  if (g.type == c.type) return true;
  const auto mapped = policy_.type_map.find(g.type);
  return g.kind == Node::Kind::Object && c.kind == Node::Kind::Object && mapped != policy_.type_map.end() &&
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
  if (gs->kind == Node::Kind::Dict && cs->kind == Node::Kind::Dict && g.reducer == c.reducer) {
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
  if (g.kind == Node::Kind::Object) {
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
  if (n.kind == Node::Kind::Array) return &n;
  if (n.kind == Node::Kind::Object && !n.array_form.empty()) return &n.array_form.front();
  return nullptr;
}

bool holds_objects(py::handle array) {
  return PyDataType_REFCHK(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(array.ptr())));
}

// Object arrays of one shape: the elements, pairwise in C order, with the same checks as any output. Returns
// whether they were walked (the elements are then the leaves, not the array).
bool TreeComparer::walk_elements(const Node& g, const Node& c, py::handle ga, py::handle ca, const std::string& path) {
  if (!holds_objects(ga) || !holds_objects(ca) || g.items.size() != c.items.size() ||
      !py::bool_(ga.attr("shape").equal(ca.attr("shape"))))
    return false;
  for (std::size_t i = 0; i < g.items.size(); ++i) walk(g.items[i], c.items[i], child_path(g.items[i], path));
  return true;
}

// A reduced object against anything. Against one of its own type: part by part, each part a leaf of its own.
// Across TYPE_MAP (gold's array, the candidate's mapped wrapper; two mapped types): their arrays, with every array
// check. A stateless object is its type. Anything else has nothing common to compare: compare_leaf reports it.
// Returns whether the pair is a leaf (false: its parts were).
bool TreeComparer::compare_objects(const Node& g, const Node& c, const std::string& path) {
  const bool same_type = g.kind == c.kind && g.type == c.type;
  if (g.kind == c.kind && states_comparable(g, c) && !(g.state.empty() && c.state.empty())) {
    compare_state(g, c, path);
    return false;
  }
  const Node *ga = array_of(g), *ca = array_of(c);
  if (ga && ca) {
    compare_arrays({ga->array, *ga}, {ca->array, *ca}, true, path);
    return true;
  }
  // A NumPy scalar against a mapped wrapper (a reduction of a proxy may give a 0-d proxy): dtype and values, as for
  // a scalar against an array; a scalar has no layout to check.
  const Node* gs = ga ? ga : g.kind == Node::Kind::Scalar ? &g : nullptr;
  const Node* cs = ca ? ca : c.kind == Node::Kind::Scalar ? &c : nullptr;
  if (gs && cs) {
    compare_arrays({gs->array, *gs}, {cs->array, *cs}, false, path);
    return true;
  }
  if (same_type) pass("values");  // no state: the type is the whole value, and it is the same
  return true;
}

// The checks of one leaf pair; returns false when its parts were compared as leaves of their own instead.
bool TreeComparer::compare_leaf_checks(const Node& g, const Node& c, const std::string& path) {
  compare_type(g, c, path);
  if (g.kind == Node::Kind::Object || c.kind == Node::Kind::Object) return compare_objects(g, c, path);
  py::object ga = as_array(g), ca = as_array(c);
  if (ga && ca) {
    const bool arrays = g.kind == Node::Kind::Array && c.kind == Node::Kind::Array;
    compare_arrays({ga, g}, {ca, c}, arrays, path);
    const bool elements = arrays && walk_elements(g, c, ga, ca, path);
    compare_state(g, c, path);
    return !elements;
  }
  if (g.kind != c.kind) return true;  // no common value: the type check says why, or `uncompared` does
  const bool equal = g.kind == Node::Kind::None || g.text == c.text;
  expect(equal, "values", path,
         [&] {
           // Python's repr of at most 200 characters: valid UTF-8 whatever bytes or surrogates it holds.
           auto show = [](const Node& n) {
             try {
               py::object value = to_python(n);
               if (n.kind != Node::Kind::Int) value = value[py::slice(0, 200, 1)];
               return py::repr(value).cast<std::string>();
             } catch (py::error_already_set&) {  // an int past Python's 4300-digit repr limit
               return n.text.substr(0, 200);
             }
           };
           return std::string("Not equal (exact comparison of ") + kind_name(g.kind) + "): " + sides(show(g), show(c));
         },
         {{"criterion", "exact"}});
  return true;
}

std::string TreeComparer::uncompared_reason(const Node& g, const Node& c) const {
  for (const auto& [n, other, name] :
       {std::tuple{&c, &g, policy_.candidate_name}, std::tuple{&g, &c, policy_.gold_name}}) {
    if (n->kind == Node::Kind::Object && n->array_form.empty() && (array_of(*other) || other->kind != n->kind))
      return "the " + name + "'s " + n->type +
             " has no array form: give the backend a to_numpy(obj) hook or the type an __array__ (the backend's "
             "TYPE_MAP must name the type)";
  }
  if (g.kind == Node::Kind::Object && c.kind == Node::Kind::Object)
    return "objects of different types, neither part by part nor through array forms comparable";
  if (g.kind != c.kind)
    return std::string("a ") + kind_name(g.kind) + " against a " + kind_name(c.kind) +
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
                              {"gold_kind", kind_name(g.kind)},
                              {"candidate_kind", kind_name(c.kind)},
                              {"reason", reason}}});
}

// A subtree present on one side only: its leaves count (Coverage), though no check but `structure` reaches them.
void TreeComparer::count_one_sided(const Node& node, const NodeIndex& index, int depth) {
  if (++state_.visits > kMaxVisits || depth > kMaxOneSidedDepth)
    throw FormatError(node.path + ": too many or too deeply nested nodes to count (references expanding?)");
  const Node& n = index.resolve(node);
  const std::vector<Node>* parts = is_container(n)                                    ? &n.items
                                   : n.kind == Node::Kind::Object && !n.state.empty() ? &n.state
                                   : n.kind == Node::Kind::Array && !n.items.empty()  ? &n.items
                                                                                      : nullptr;
  if (!parts) return void(++result.coverage.leaves);
  for (const Node& part : *parts) count_one_sided(part, index, depth + 1);
}

void TreeComparer::walk(const Node& gold_node, const Node& candidate_node, const std::string& path) {
  check_deadline(path.c_str());
  if (++state_.visits > kMaxVisits)
    throw FormatError(path + ": more than " + std::to_string(kMaxVisits) + " nodes to compare (references expanding?)");
  // The same earlier object on both sides has been compared where it first appeared.
  if (!gold_node.ref.empty() && gold_node.ref == candidate_node.ref) return;
  const Node& g = gold_index_.resolve(gold_node);
  const Node& c = candidate_index_.resolve(candidate_node);
  if (is_container(g) || is_container(c)) {
    if (g.kind != c.kind) {
      count_one_sided(g, gold_index_);
      count_one_sided(c, candidate_index_);
      return fail("structure", path,
                  std::string("container kind differs: ") + sides(kind_name(g.kind), kind_name(c.kind)),
                  {{"gold", kind_name(g.kind)}, {"candidate", kind_name(c.kind)}});
    }
    pass("structure");
    compare_type(g, c, path);
    return compare_containers(g, c, path);
  }
  compare_leaf(g, c, path);
}

// Each run's records by id, built once: a search per scenario made compare quadratic in the number of scenarios.
class RecordIndex {
 public:
  explicit RecordIndex(const Manifest& m) {
    by_id_.reserve(m.scenarios.size());
    for (const auto& s : m.scenarios) by_id_.emplace(s.id, &s);  // the first of a repeated id, as a search found
  }
  const ScenarioRecord* find(const std::string& id) const {
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string_view, const ScenarioRecord*> by_id_;
};

std::string error_summary(const json& error) { return error.value("type", "?") + ": " + error.value("message", ""); }

std::string error_text(const std::string& side, const ScenarioRecord& r) {
  const char* what = r.status == "crash"     ? " run crashed: "
                     : r.status == "timeout" ? " run timed out: "
                                             : " run raised ";
  std::string m = "the " + side + what + error_summary(r.error);
  const std::string tb = r.error.value("traceback", "");
  return tb.empty() ? m : m + "\n" + tb;
}

std::optional<double> optional_number(const json& meta, const char* key) {
  const auto it = meta.find(key);
  if (it == meta.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

// Whether the run chose policy `spec`: its flag was given, or its value is not the default (set by a caller).
bool run_chose(const PolicyChoice& policy, const std::set<std::string>& given, const PolicySpec& spec) {
  return given.count(spec.name) || policy.*spec.member != PolicyChoice{}.*spec.member;
}

// Sets each {name: value} of `policies`, read from a manifest; throws std::invalid_argument naming `what` when it is
// malformed or names a policy or value parity does not know.
void set_policies(PolicyChoice& choice, const json& policies, const std::string& what) {
  if (!policies.is_object()) throw std::invalid_argument(what + " is not an object of policy names to values");
  for (const auto& [name, value] : policies.items()) {
    if (!value.is_string()) throw std::invalid_argument(what + "['" + name + "'] is not a string");
    choice.set(name, value.get<std::string>());
  }
}

// The scenario's policies (README "Policies"): the defaults, under the candidate backend's POLICY, under the run's
// --NAME-policy flags that were given (or differ from the default), under the scenario's own policy=. Throws
// std::invalid_argument for a value parity does not know (a hand-edited or newer manifest).
Policy policy_for(const Manifest& gold, const Manifest& candidate, const json& meta, const CompareOptions& options) {
  Policy p;
  p.tolerance = {optional_number(meta, "rtol"), optional_number(meta, "atol")};
  const json tolerances = meta.value("tolerances", json::object()), choice = meta.value("policy", json::object());
  for (const auto& [path, tol] : tolerances.items())
    p.by_path[path] = {optional_number(tol, "rtol"), optional_number(tol, "atol")};
  p.signed_zeros = meta.value("signed_zeros", false);
  set_policies(p.choice, candidate.backend.value("policy", json::object()), "the candidate backend's POLICY");
  for (const PolicySpec& spec : policy_specs())
    if (run_chose(options.policy, options.policies_given, spec)) p.choice.*spec.member = options.policy.*spec.member;
  set_policies(p.choice, choice, "the scenario's policy");
  p.type_map = candidate.backend.value("type_map", std::map<std::string, std::string>{});
  p.gold_name = gold.backend.value("name", "gold");
  p.candidate_name = candidate.backend.value("name", "candidate");
  if (p.gold_name == p.candidate_name) p.gold_name += " (gold)", p.candidate_name += " (candidate)";
  return p;
}

// Loads both result files and checks them; file problems become this scenario's error.
// One side of a scenario, for the probes: its record and its outputs rebuilt as Python objects.
struct Side {
  std::string name;
  const Manifest& manifest;
  const ScenarioRecord& record;
  py::object outputs;
};

// What a fidelity failure says changed at one path: both values when the run recorded the written one's short
// description (fidelity_values) and it differs from the reloaded one's, else the two digests.
std::string fidelity_change(const json& written_value, const std::string& reloaded_value, const std::string& written,
                            const std::string& reloaded) {
  const std::string digests = "digest " + written + ", reloaded " + reloaded;
  if (!written_value.is_string()) return digests;
  const std::string was = written_value.get<std::string>();
  if (reloaded_value.empty() || was == reloaded_value) return was + "; " + digests;
  return "written " + was + ", reloaded " + reloaded_value;
}

// fidelity: the reloaded outputs must digest exactly as the scenario's outputs did before writing. An object with a
// reducer digests part by part at its state's paths, so a failure names the part its rebuild changed.
void check_fidelity(const Side& side, CheckList& list) {
  if (!side.record.fidelity.is_object()) return;
  py::dict shown;
  py::dict recomputed = py::module_::import("parity.probe").attr("digests")(side.outputs, "outputs", shown);
  const json& values = side.record.fidelity_values.is_object() ? side.record.fidelity_values : json::object();
  std::size_t failures = 0;
  for (const auto& [path, digest] : side.record.fidelity.items()) {
    const py::str key(path);
    const std::string now = recomputed.contains(key) ? recomputed[key].cast<std::string>() : "absent";
    if (now == digest.get<std::string>()) continue;
    ++failures;
    const std::string reloaded_value = shown.contains(key) ? shown[key].cast<std::string>() : "";
    const json written_value = values.value(path, json());
    json details = {{"side", side.name}, {"written", digest}, {"reloaded", now}};
    if (written_value.is_string()) details["written_value"] = written_value;
    if (!reloaded_value.empty()) details["reloaded_value"] = reloaded_value;
    list.failures.push_back(
        {"fidelity", false, path,
         "the " + side.name + " output reloaded from " + (side.manifest.dir / side.record.file).string() +
             " differs here from what the scenario produced (" +
             fidelity_change(written_value, reloaded_value, digest.get<std::string>(), now) +
             "): parity's codec, or the backend's reducer for this type, changed it; please report this file",
         std::move(details)});
  }
  if (failures == 0) list.pass("fidelity");
}

py::tuple unpickle(const Side& side) {
  py::object blob = py::bytes(read_regular_file(side.manifest.dir, side.record.pickle_file));
  return py::module_::import("parity.probe").attr("unpickle")(blob);
}

// Whether both sides' pickles verify with the user's key; a side whose does not gets the probe skipped, saying why.
bool pickles_verified(const Side& gold, const py::tuple& g, const Side& cand, const py::tuple& c, CheckList& list) {
  bool verified = true;
  for (const auto& [side, t] : {std::pair{&gold, &g}, std::pair{&cand, &c}}) {
    if ((*t)[2].is_none()) continue;
    verified = false;
    list.skipped.push_back({"pickle", side == &gold ? "gold" : "candidate", "unverified-pickle",
                            (*t)[2].cast<std::string>()});
  }
  return verified;
}

// pickle, from the runs' records alone (no output rebuilt): the candidate's outputs refused to be pickled where
// gold's did not. Returns whether that is so.
bool pickle_refused(const ScenarioRecord& g, const ScenarioRecord& c, const std::string& gold_name,
                    const std::string& cand_name, CheckList& list) {
  const json &gerr = g.pickle_error, &cerr = c.pickle_error;
  if (!cerr.is_object() || gerr.is_object()) return false;
  list.failures.push_back({"pickle", false, cerr.value("path", "outputs"),
                           "pickle (protocol 5) cannot pickle the " + cand_name + " output: " + error_summary(cerr) +
                               "; " + gold_name + "'s output pickles",
                           cerr});
  return true;
}

// pickle: what the candidate's own pickling loses, judged against what plain NumPy (gold) loses too.
void check_pickle(const Side& gold, const Side& cand, CheckList& list) {
  if (pickle_refused(gold.record, cand.record, gold.name, cand.name, list)) return;
  if (gold.record.pickle_file.empty() || cand.record.pickle_file.empty()) return;
  py::tuple g = unpickle(gold), c = unpickle(cand);
  if (!pickles_verified(gold, g, cand, c, list)) return;
  if (!c[1].is_none() && g[1].is_none()) {
    json err = from_py(c[1]);
    return list.failures.push_back(
        {"pickle", false, "outputs",
         "unpickling the " + cand.name + " outputs raised " + error_summary(err) + "\n" + err.value("traceback", ""),
         err});
  }
  if (!c[1].is_none() || !g[1].is_none()) return;
  py::object losses = py::module_::import("parity.probe").attr("losses");
  std::set<std::pair<std::string, std::string>> gold_losses;
  for (py::handle l : losses(gold.outputs, g[0]))
    gold_losses.emplace(l["path"].cast<std::string>(), l["aspect"].cast<std::string>());
  std::size_t failures = 0;
  for (py::handle l : losses(cand.outputs, c[0])) {
    const auto path = l["path"].cast<std::string>(), aspect = l["aspect"].cast<std::string>();
    if (gold_losses.count({path, aspect})) continue;  // plain NumPy loses it too: not the candidate's fault
    ++failures;
    const auto faithful = l["faithful"].cast<std::string>(), unpickled = l["unpickled"].cast<std::string>();
    list.failures.push_back({"pickle",
                             false,
                             path,
                             "pickle (protocol 5) round trip of the " + cand.name + " output loses its " + aspect +
                                 ": " + faithful + " before, " + unpickled + " after; " + gold.name + " keeps it",
                             {{"aspect", aspect}, {"faithful", faithful}, {"unpickled", unpickled}}});
  }
  if (failures == 0) list.pass("pickle");
}

// attrs, for TYPE_MAP proxies: the attributes the candidate backend declares required (REQUIRED_ATTRS) must exist
// on its outputs rebuilt here, in a process that never ran the scenario (cuDF's lost `_fsproxy_wrapped`).
void check_required_attrs(const Side& cand, const json& required, CheckList& list) {
  if (!required.is_object() || required.empty()) return;
  py::object missing = py::module_::import("parity.probe").attr("missing_attributes")(cand.outputs, to_py(required));
  std::size_t failures = 0;
  for (py::handle m : missing) {
    ++failures;
    const auto path = m["path"].cast<std::string>(), type = m["type"].cast<std::string>(),
               attribute = m["attribute"].cast<std::string>();
    list.failures.push_back({"attrs",
                             false,
                             path,
                             "the " + cand.name + " output (" + type + ") has no attribute '" + attribute +
                                 "' after the reload, though the backend declares it required (REQUIRED_ATTRS)",
                             {{"type", type}, {"attribute", attribute}, {"required", true}}});
  }
  if (failures == 0) list.pass("attrs");
}

// The probes that would have run, recorded as skipped for each side compare does not trust (side -> why), as `kind`.
void skip_probes(bool digests, bool pickles, bool attrs, const std::map<std::string, std::string>& untrusted,
                 const std::string& kind, CheckList& list) {
  for (const auto& [side, reason] : untrusted) {
    for (const auto& [check, would_run] :
         {std::pair{"fidelity", digests}, std::pair{"attrs", attrs}, std::pair{"pickle", pickles}})
      if (would_run) list.skipped.push_back({check, side, kind, reason});
  }
}

// Imports the trusted scenario directory holding the scenario's module, for the reducers it registers (parity.trust),
// when a rebuild failed for want of a reducer or type (parity.reducers.RebuildError, which the codec's message
// carries). Returns why it is not trusted, "" when it is imported or the failure is of another kind.
std::string load_scenario_reducers(const FormatError& e, const json& meta, const CompareOptions& options) {
  const std::string_view what = e.what();
  if (what.find("no reducer named") == std::string_view::npos && what.find("is not rebuilt") == std::string_view::npos)
    return "";
  return py::module_::import("parity.trust")
      .attr("load_scenario_reducers")(to_py(meta), py::cast(options.trusted_scenarios), resources().scenarios)
      .cast<std::optional<std::string>>()
      .value_or("");
}

// The outputs rebuilt as Python objects, for the checks that need them (the probes, assert_eq): rebuilt at most once
// per scenario, when the first of them asks. A reducer the scenario's own module registers is loaded only when the
// rebuild needs it, from a trusted directory.
class Rebuilt {
 public:
  Rebuilt(const Node& gold, const Node& candidate, const json& meta, const CompareOptions& options)
      : gold_node_(gold), candidate_node_(candidate), meta_(meta), options_(options) {}
  const py::object& gold() { return rebuild().gold_; }
  const py::object& candidate() { return rebuild().candidate_; }
  /// The codec's message when the outputs cannot be rebuilt, "" when they are.
  const std::string& error() { return rebuild().error_; }
  /// Why the scenario's directory is not trusted, when its reducers were needed ("" otherwise).
  const std::string& scenarios_why() { return rebuild().scenarios_why_; }

 private:
  Rebuilt& rebuild() {
    if (done_) return *this;
    done_ = true;
    for (bool first = true;; first = false) {
      try {
        gold_ = to_python(gold_node_);
        candidate_ = to_python(candidate_node_);
        return *this;
      } catch (const FormatError& e) {
        scenarios_why_ = load_scenario_reducers(e, meta_, options_);
        if (first && scenarios_why_.empty()) continue;  // its directory is trusted and imported now: rebuild again
        error_ = e.what();
        return *this;
      }
    }
  }
  const Node &gold_node_, &candidate_node_;
  const json& meta_;
  const CompareOptions& options_;
  bool done_ = false;
  py::object gold_, candidate_;
  std::string error_, scenarios_why_;
};

void run_probes(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                Rebuilt& rebuilt, const CompareOptions& options, CheckList& list) {
  const bool digests = g.fidelity.is_object() || c.fidelity.is_object();
  const bool pickles = options.pickle_probe && (c.pickle_error.is_object() || !c.pickle_file.empty());
  const json required = candidate.backend.value("required_attrs", json::object());
  if (!digests && !pickles && required.empty()) return;  // nothing to rebuild the outputs for
  if (!rebuilt.error().empty()) {
    const std::string& scenarios_why = rebuilt.scenarios_why();
    if (options.untrusted.empty() && scenarios_why.empty())
      return list.failures.push_back(
          {"fidelity", false, "outputs", "cannot rebuild the outputs to check them: " + rebuilt.error()});
    // Reducers of an untrusted backend or scenario module were never loaded: its own types cannot be rebuilt, and
    // that is no failure. A pickling error the run recorded needs no rebuilt output: it is still judged.
    const bool refused = pickles && pickle_refused(g, c, gold.backend.value("name", "gold"),
                                                   candidate.backend.value("name", "candidate"), list);
    skip_probes(digests, pickles && !refused, !required.empty(), options.untrusted, "untrusted-backend", list);
    if (scenarios_why.empty()) return;
    skip_probes(digests, false, false, {{"gold", scenarios_why}}, "untrusted-scenarios", list);
    return skip_probes(digests, pickles && !refused, !required.empty(), {{"candidate", scenarios_why}},
                       "untrusted-scenarios", list);
  }
  const Side gs{gold.backend.value("name", "gold"), gold, g, rebuilt.gold()},
      cs{candidate.backend.value("name", "candidate"), candidate, c, rebuilt.candidate()};
  check_fidelity(gs, list);
  check_fidelity(cs, list);
  check_required_attrs(cs, required, list);
  if (options.pickle_probe) check_pickle(gs, cs, list);
}

// A failure parity.asserters describes ({criterion, message, details}) as an assert_eq check.
void fail_assert_eq(py::handle failure, CheckList& list) {
  list.failures.push_back(
      {"assert_eq", false, "outputs", failure["message"].cast<std::string>(), from_py(failure["details"])});
}

// assert_eq: the asserter a pytest test's mark names (its run records the name), read from the test in a trusted
// suite and called on both outputs as rebuilt here (parity.asserters). Any reason it cannot run fails the check.
void check_assert_eq(const std::string& id, const json& meta, Rebuilt& rebuilt, const CompareOptions& options,
                     CheckList& list) {
  if (meta.value("kind", "") != "pytest" || !meta.contains("assert_eq") || !meta.at("assert_eq").is_string()) return;
  py::module_ asserters = py::module_::import("parity.asserters");
  const py::tuple found =
      asserters.attr("find")(to_py(meta), id, py::cast(options.trusted_scenarios), resources().scenarios);
  if (!found[2].is_none()) return fail_assert_eq(found[2], list);
  if (!rebuilt.error().empty()) {
    std::string why = rebuilt.scenarios_why().empty() ? rebuilt.error() : rebuilt.scenarios_why();
    for (const auto& [side, reason] : options.untrusted) why += "; " + reason;
    return list.failures.push_back({"assert_eq",
                                    false,
                                    "outputs",
                                    "the asserter " + found[1].cast<std::string>() +
                                        " was not run: the outputs cannot be rebuilt to call it with: " + why,
                                    {{"criterion", found[1].cast<std::string>()}}});
  }
  const py::object failure = asserters.attr("call")(found[0], found[1], rebuilt.gold(), rebuilt.candidate());
  if (!failure.is_none()) return fail_assert_eq(failure, list);
  list.pass("assert_eq");
}

// A Python error that is no bug: the probes' time limit (parity.probe.DeadlineExceeded), or MemoryError.
bool out_of_time_or_memory(py::error_already_set& e) {
  return e.matches(PyExc_MemoryError) || e.matches(py::module_::import("parity.probe").attr("DeadlineExceeded"));
}

void compare_files(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                   const CompareOptions& options, ScenarioOutcome& out) {
  for (const auto* side : {&g, &c}) {
    // symlink_status: a dangling symbolic link is there, and refused as one when read.
    if (side->file.empty() ||
        !std::filesystem::exists(std::filesystem::symlink_status((side == &g ? gold : candidate).dir / side->file))) {
      out.status = "fail";
      out.checks.push_back({"missing", false, "outputs",
                            "the " + std::string(side == &g ? "gold" : "candidate") + " result file '" + side->file +
                                "' is missing from " + (side == &g ? gold : candidate).dir.string()});
    }
  }
  if (!out.checks.empty()) return;
  Node gn, cn;
  try {
    gn = read_result(gold.dir, g.file, options.limits);
    cn = read_result(candidate.dir, c.file, options.limits);
  } catch (const FormatError& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("cannot read result file: ") + e.what()});
    return;
  }
  CheckList list;
  try {
    const Policy policy = policy_for(gold, candidate, out.meta, options);
    out.policy = policy.choice.to_json();
    out.policy["signed_zeros"] = policy.signed_zeros;
    list = compare_outputs(gn, cn, policy);
    Rebuilt rebuilt(gn, cn, g.meta, options);
    run_probes(gold, candidate, g, c, rebuilt, options, list);
    check_assert_eq(out.id, out.meta, rebuilt, options, list);
  } catch (const std::invalid_argument& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("invalid comparison policy: ") + e.what()});
    return;
  } catch (const FormatError& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("cannot compare the result files: ") + e.what()});
    return;
  } catch (py::error_already_set& e) {    // parity's own bug, reported where it happened; the run goes on
    if (out_of_time_or_memory(e)) throw;  // compare_files_within_limits says which
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("internal error while comparing: ") + e.what()});
    return;
  }
  out.status = list.failures.empty() ? "pass" : "fail";
  out.coverage = list.coverage;
  out.checks = std::move(list.failures);
  out.skipped = std::move(list.skipped);
  for (const auto& [check, n] : list.passed) out.checks.push_back({check, true, "outputs", "", {{"leaves", n}}});
}

// compare_files, with what a hostile pair can exhaust (time, memory) ending this scenario only: past
// options.timeout it is a timeout, out of memory an error, and the rest of the run is compared.
void compare_files_within_limits(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g,
                                 const ScenarioRecord& c, const CompareOptions& options, ScenarioOutcome& out) {
  auto stop = [&](const char* status, const std::string& message, const char* check = "error") {
    out.status = status;
    out.checks.clear();
    out.checks.push_back({check, false, "outputs", message});
  };
  const auto timed_out = [&](const std::string& where, const char* check = "error") {
    stop("timeout",
         where + ": scenario '" + out.id + "' took longer than --timeout " + fmt_g(options.timeout) + " s to compare",
         check);
  };
  try {
    const ScopedDeadline deadline(options.timeout);
    py::module_::import("parity.probe").attr("set_deadline")(options.timeout);
    compare_files(gold, candidate, g, c, options, out);
  } catch (const TimeLimitExceeded& e) {
    timed_out(e.what());
  } catch (const UnsafeFileError& e) {  // a pickle that is a FIFO or a symbolic link
    stop("error", std::string("cannot read a file of the results: ") + e.what());
  } catch (const std::system_error& e) {
    stop("error", std::string("cannot read a file of the results: ") + e.what());
  } catch (const std::bad_alloc&) {
    stop("error", "out of memory while comparing scenario '" + out.id + "' (" + (gold.dir / g.file).string() + ", " +
                      (candidate.dir / c.file).string() + "); lower --max-result-memory to refuse such files");
  } catch (py::error_already_set& e) {
    if (!out_of_time_or_memory(e)) throw;
    // The probes' or the asserter's time limit: its message says which (an asserter that hangs is its check's).
    if (!e.matches(PyExc_MemoryError))
      return timed_out(py::str(e.value()).cast<std::string>(),
                       e.matches(py::module_::import("parity.asserters").attr("TimedOut")) ? "assert_eq" : "error");
    stop("error", "out of memory while comparing scenario '" + out.id + "' (Python: " + e.what() + ")");
  }
}

// The verdict when at least one side did not produce outputs to compare.
bool decide_without_outputs(const ScenarioRecord* g, const ScenarioRecord* c, const Manifest& gold,
                            const Manifest& candidate, ScenarioOutcome& out) {
  if (!g || !c) {
    const std::string side = g ? "candidate" : "gold";
    out.status = "fail";
    out.checks.push_back({"missing", false, "outputs",
                          "scenario '" + out.id + "' is absent from the " + side + " results (" +
                              (g ? candidate : gold).dir.string() + ")"});
    return true;
  }
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status == "skip")
      return out.status = "skip", out.message = side + std::string(": ") + r->error.value("message", ""), true;
  }
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status == "xpass") return out.status = "xpass", out.message = r->error.value("message", ""), true;
  }
  bool errored = false;
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status != "error" && r->status != "crash" && r->status != "timeout") continue;
    errored = true;
    // An output the codec could not carry is a `serialize` failure; anything else the scenario raised is `error`.
    const char* check = r->error.value("type", "") == "SerializeError" ? "serialize" : "error";
    out.checks.push_back({check, false, side, error_text(side, *r), r->error});
  }
  if (errored)
    return out.status = "error",
           out.message = out.checks.front().message.substr(0, out.checks.front().message.find('\n')), true;
  for (const auto& [side, r] : {std::pair{"gold", g}, std::pair{"candidate", c}}) {
    if (r->status == "xfail")
      return out.status = "xfail",
             out.message = std::string(side) + " expected failure: " + r->error.value("reason", ""), true;
  }
  return false;
}

std::set<std::string> failed_checks(const ScenarioOutcome& out) {
  std::set<std::string> names;
  for (const Check& c : out.checks)
    if (!c.ok) names.insert(c.check);
  return names;
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The compare xfail, strict. A reason string covers the whole pass. A {check: reason} dict covers those checks:
// their failures are expected (marked so in their details), any other failure still fails the scenario, and an
// expected check that passed is an xpass.
void decide_compare_xfail(ScenarioOutcome& out) {
  const json xfail = out.meta.value("xfail", json::object());
  if (!xfail.contains("compare") || (out.status != "pass" && out.status != "fail")) return;
  const json& spec = xfail.at("compare");
  if (spec.is_string()) {
    const std::string reason = spec.get<std::string>();
    if (out.status == "fail")
      out.status = "xfail", out.message = "compare expected failure: " + reason;
    else
      out.status = "xpass", out.message = "the compare pass was expected to fail (" + reason + ") but passed";
    return;
  }
  std::set<std::string> unexpected = failed_checks(out), passed_expected;
  for (const auto& [check, reason] : spec.items()) {
    if (!unexpected.erase(check)) passed_expected.insert(check + " (" + reason.get<std::string>() + ")");
    for (Check& c : out.checks)
      if (!c.ok && c.check == check) c.details["xfail"] = reason;
  }
  if (!unexpected.empty()) {
    out.status = "fail", out.message = "failed checks: " + joined(unexpected);
  } else if (!passed_expected.empty()) {
    out.status = "xpass", out.message = "checks expected to fail passed: " + joined(passed_expected);
  } else {
    out.status = "xfail", out.message = "expected check failures: " + joined(failed_checks(out));
  }
}

// Strict unless the record says `xfail_strict: false` (a pytest suite's xfail_strict setting): then an xpass is a
// pass whose message says what was expected, as pytest's non-strict XPASS.
void apply_compare_xfail(ScenarioOutcome& out) {
  decide_compare_xfail(out);
  if (out.status == "xpass" && !out.meta.value("xfail_strict", true))
    out.status = "pass", out.message = "XPASS (xfail_strict is false): " + out.message;
}

// A mistyped field in either side's record (record_check.h) is this scenario's error naming the manifest, the
// scenario and the field; nothing else of the scenario is compared. Returns whether there was one.
bool add_malformed_checks(const Manifest& gold, const Manifest& candidate, const ScenarioRecord* g,
                          const ScenarioRecord* c, ScenarioOutcome& out) {
  for (const auto& [side, manifest, record] : {std::tuple{"gold", &gold, g}, std::tuple{"candidate", &candidate, c}}) {
    if (!record) continue;
    const std::string field = malformed_field(*record);
    if (field.empty()) continue;
    const std::string file = (manifest->dir / kManifestName).string();
    out.checks.push_back({"error", false, side,
                          "malformed record: " + file + ": scenario '" + out.id + "': " + field,
                          {{"malformed", {{"file", file}, {"problem", field}}}}});
  }
  return !out.checks.empty();
}

std::string summary_message(const ScenarioOutcome& out) {
  const std::string names = joined(failed_checks(out));
  return names.empty() ? names : "failed checks: " + names;
}

ScenarioOutcome compare_scenario(const Manifest& gold, const Manifest& candidate, const ScenarioRecord* g,
                                 const ScenarioRecord* c, const std::string& id, const CompareOptions& options,
                                 const std::vector<Difference>& differences) {
  const auto start = std::chrono::steady_clock::now();
  ScenarioOutcome out;
  out.id = id;
  const bool malformed = add_malformed_checks(gold, candidate, g, c, out);
  // A malformed record's meta is not read at all: the scenario is shown without its declaration.
  out.meta = malformed ? json::object() : g ? g->meta : c->meta;
  // The compare xfail (and its strictness) is the candidate run's: parity.xfail_on scopes an xfail to the backend that
  // earns it, so only the candidate's manifest holds it (gold's resolved it for gold).
  if (!malformed && g && c)
    for (const char* key : {"xfail", "xfail_strict"})
      if (c->meta.contains(key)) out.meta[key] = c->meta.at(key);
  out.gold_seconds = g ? g->seconds : 0;
  out.candidate_seconds = c ? c->seconds : 0;
  out.repro = repro_command(options, gold, candidate, id, out.meta);
  if (malformed) {
    out.status = "error", out.message = out.checks.front().message;
  } else if (!decide_without_outputs(g, c, gold, candidate, out)) {
    compare_files_within_limits(gold, candidate, *g, *c, options, out);
  }
  apply_compare_xfail(out);
  if (!malformed) apply_differences(differences, out);  // the manifest that declares them is the one in doubt
  if (out.message.empty()) out.message = summary_message(out);
  for (Check& check : out.checks)
    if (!check.ok) check.message += "\nRepro: " + out.repro;
  out.compare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

CheckList compare_outputs(const Node& gold, const Node& candidate, const Policy& policy) {
  const NodeIndex gold_index(gold), candidate_index(candidate);
  WalkState state;
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

std::string run_command(const std::string& program, const json& backend) {
  std::vector<std::string> words = {program, "run", "--backend", backend.value("spec", "gold")};
  const std::string role = backend.value("role", "");
  if (!role.empty() && role != (backend.value("name", "") == "gold" ? "gold" : "candidate"))
    words.insert(words.end(), {"--role", role});
  return shell_join(words);
}

std::string policy_flags(const PolicyChoice& policy, const std::set<std::string>& given) {
  std::vector<std::string> words;
  for (const PolicySpec& spec : policy_specs())
    if (run_chose(policy, given, spec))
      words.insert(words.end(), {"--" + std::string(spec.name) + "-policy", policy.*spec.member});
  return words.empty() ? "" : " " + shell_join(words);
}

std::string repro_command(const CompareOptions& options, const Manifest& gold, const Manifest& candidate,
                          const std::string& id, const json& meta) {
  const std::string& program = options.program;
  // A pytest scenario's id is relative to the scenario path its run was given (its "root"), not to its file's folder.
  const std::string source = meta.value("root", meta.value("source", ""));
  auto run = [&](const Manifest& m, const char* dir) {
    std::vector<std::string> words;
    if (!source.empty()) words = {"--scenarios", source};
    words.insert(words.end(), {"--only", id, "--out", dir});
    return run_command(program, m.backend) + " " + shell_join(words);
  };
  // The compare trusts what this one was told to trust, so that the repro runs the same probes.
  std::vector<std::string> compare_words = {program, "compare", "/tmp/parity-repro/gold",
                                            "/tmp/parity-repro/candidate"};
  for (const std::string& spec : options.trusted_backends)
    compare_words.insert(compare_words.end(), {"--trust-backend", spec});
  for (const std::string& dir : options.trusted_scenarios)
    compare_words.insert(compare_words.end(), {"--scenarios", dir});
  // ';' rather than '&&': a side whose run fails (exit 1) must not stop the other side or the compare.
  const std::string compare = shell_join(compare_words) + policy_flags(options.policy, options.policies_given);
  return run(gold, "/tmp/parity-repro/gold") + " ; " + run(candidate, "/tmp/parity-repro/candidate") + " ; " + compare;
}

const std::vector<PolicySpec>& policy_specs() {
  static const std::vector<PolicySpec> kPolicies = {
      {"dtype", &PolicyChoice::dtype, {"exact", "native-order-ok", "kind"}, "dtype check"},
      {"layout",
       &PolicyChoice::layout,
       {"contiguity", "strides", "ignore"},
       "layout checks (strides: also exact strides)"},
      {"type", &PolicyChoice::type, {"exact-or-mapped", "subclass-ok", "ignore"}, "type check"},
      {"writeable", &PolicyChoice::writeable, {"exact", "ignore"}, "writeable flag check"},
      {"scalar",
       &PolicyChoice::scalar,
       {"exact", "0d-ok"},
       "whether a 0-d array may stand for a NumPy scalar and back"},
      {"order",
       &PolicyChoice::order,
       {"exact", "sorted"},
       "set-like results (unique values, groupby(sort=False)): sorted compares them after sorting"},
      {"index",
       &PolicyChoice::index,
       {"exact", "equivalent"},
       "pandas index and column types: equivalent lets RangeIndex stand for an integer Index"},
      {"names", &PolicyChoice::names, {"exact", "ignore"}, "pandas index, column and Series names"}};
  return kPolicies;
}

namespace {
const PolicySpec& policy_spec(const std::string& name) {
  for (const PolicySpec& spec : policy_specs())
    if (name == spec.name) return spec;
  std::string known;
  for (const PolicySpec& spec : policy_specs()) known += (known.empty() ? "" : ", ") + std::string(spec.name);
  throw std::invalid_argument("unknown policy '" + name + "' (" + known + ")");
}
}  // namespace

const std::vector<std::string>& PolicyChoice::values(const std::string& name) { return policy_spec(name).values; }

const std::string& PolicyChoice::get(const std::string& name) const { return this->*policy_spec(name).member; }

void PolicyChoice::set(const std::string& name, const std::string& value) {
  const PolicySpec& spec = policy_spec(name);
  if (std::find(spec.values.begin(), spec.values.end(), value) == spec.values.end()) {
    std::string allowed;
    for (const std::string& v : spec.values) allowed += (allowed.empty() ? "" : ", ") + v;
    throw std::invalid_argument("policy " + name + " cannot be '" + value + "' (" + allowed + ")");
  }
  this->*spec.member = value;
}

json PolicyChoice::to_json() const {
  json out = json::object();
  for (const PolicySpec& spec : policy_specs()) out[spec.name] = this->*spec.member;
  return out;
}

Tolerance Policy::tolerance_for(const std::string& path, py::handle gold_dtype, py::handle candidate_dtype,
                                std::string* matched) const {
  const Tolerance g = default_tolerance(gold_dtype), c = default_tolerance(candidate_dtype);
  Tolerance t{std::max(g.rtol, c.rtol), std::max(g.atol, c.atol), signed_zeros};
  auto apply = [&t](const ToleranceOverride& o) {
    if (o.rtol) t.rtol = *o.rtol;
    if (o.atol) t.atol = *o.atol;
  };
  apply(tolerance);
  // The longest path that is `path` or contains it: outputs['x'] covers outputs['x'][0] and outputs['x'].field('a').
  const std::pair<const std::string, ToleranceOverride>* best = nullptr;
  for (const auto& entry : by_path) {
    const std::string& prefix = entry.first;
    const bool covers = path.compare(0, prefix.size(), prefix) == 0 &&
                        (path.size() == prefix.size() || path[prefix.size()] == '[' || path[prefix.size()] == '.');
    if (covers && (!best || prefix.size() >= best->first.size())) best = &entry;
  }
  if (!best) return t;
  apply(best->second);
  if (matched) *matched = best->first;
  return t;
}

std::string coverage_note(const json& coverage) {
  if (!coverage.is_object() || !coverage.contains("leaves") || !coverage["leaves"].is_number_integer()) return "";
  const auto leaves = coverage["leaves"].get<std::int64_t>();
  const json checks = coverage.value("checks", json::object());
  const json values = checks.is_object() ? checks.value("values", json(0)) : json(0);
  const std::int64_t covered = values.is_number_integer() ? values.get<std::int64_t>() : 0;
  if (covered >= leaves) return "";
  return "values covered " + std::to_string(covered) + " of " + std::to_string(leaves) + " leaves";
}

std::map<std::string, int> count_statuses(const std::vector<std::string>& statuses) {
  std::map<std::string, int> n{{"pass", 0}, {"fail", 0}, {"error", 0}, {"xfail", 0}, {"xpass", 0}, {"skip", 0}};
  for (const std::string& status : statuses) ++n[status];
  return n;
}

bool failing_counts(const std::map<std::string, int>& counts) {
  for (const char* status : {"fail", "error", "xpass", "timeout"})
    if (const auto n = counts.find(status); n != counts.end() && n->second > 0) return true;
  return false;
}

std::map<std::string, int> CompareReport::counts() const {
  std::vector<std::string> statuses;
  for (const auto& s : scenarios) statuses.push_back(s.status);
  return count_statuses(statuses);
}

std::vector<std::string> CompareReport::stale_differences() const {
  std::vector<std::string> stale;
  for (const auto& [id, use] : difference_use(differences, scenarios))
    if (use.checks == 0) stale.push_back(id);
  return stale;
}

bool CompareReport::failed() const {
  return failing_counts(counts()) || (strict_differences && !stale_differences().empty());
}

// The probes rebuild outputs through the backends' reducers, which are registered when their modules load: those
// of a built-in backend, or of one the user trusts (parity.trust). Returns why they are not loaded, "" if they are.
std::string load_reducers(const Manifest& m, const std::string& side, const std::vector<std::string>& trusted) {
  try {
    py::object why =
        py::module_::import("parity.trust").attr("load_reducers")(to_py(m.backend), side, py::cast(trusted));
    return why.is_none() ? "" : why.cast<std::string>();
  } catch (py::error_already_set& e) {
    return "the " + side + " run's backend cannot be loaded for its reducers: " + e.what();
  }
}

std::vector<std::string> compared_ids(const Manifest& gold, const Manifest& candidate,
                                      const std::vector<std::string>& only) {
  const std::set<std::string> wanted(only.begin(), only.end());
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const Manifest* m : {&gold, &candidate})
    for (const auto& s : m->scenarios)
      if (seen.insert(s.id).second && (wanted.empty() || wanted.count(s.id))) ids.push_back(s.id);
  return ids;
}

std::vector<std::string> ids_to_compare(const Manifest& gold, const Manifest& candidate,
                                        const CompareOptions& options) {
  std::vector<std::string> ids = compared_ids(gold, candidate, options.only);
  if (!options.shard) return ids;
  const std::vector<std::string> mine = options.shard->ids();
  const std::set<std::string> in_shard(mine.begin(), mine.end());
  std::erase_if(ids, [&](const std::string& id) { return !in_shard.count(id); });
  return ids;
}

// The candidate backend's DIFFERENCES as its code declares them now, when compare loaded it (built-in or trusted):
// they replace those its manifest recorded, and a change since the run is a notice naming the ids added, removed
// or changed. An untrusted backend's recorded ones are used, and a notice says they are as of the run.
void use_current_differences(const Manifest& candidate, const CompareOptions& trusting, CompareReport& report) {
  const std::string manifest = (candidate.dir / kManifestName).string();
  py::object now = trusting.untrusted.count("candidate")
                       ? py::object(py::none())
                       : py::module_::import("parity.trust").attr("current_differences")("candidate");
  if (now.is_none()) {
    if (!report.differences.empty())
      report.notices.push_back(
          {"recorded-differences",
           "the candidate backend's declared differences are those recorded in " + manifest +
               " as of its run: compare did not load the backend (not built-in, not trusted), so a change to its "
               "DIFFERENCES since then is not seen"});
    return;
  }
  const json declared = {{"differences", from_py(now)}};
  std::vector<Difference> current =
      parse_differences(declared, "the candidate backend " + candidate.backend.value("spec", "?") + "'s DIFFERENCES");
  const std::string changes = difference_changes(report.differences, current);
  report.differences = std::move(current);
  if (!changes.empty())
    report.notices.push_back({"changed-differences", "the candidate backend's DIFFERENCES changed since its run (" +
                                                         manifest + "): " + changes +
                                                         "; compare uses its current declarations"});
}

CompareReport compare_runs(const Manifest& gold, const Manifest& candidate, const CompareOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompareReport report;
  report.differences = parse_differences(candidate.backend, (candidate.dir / kManifestName).string());
  report.strict_differences = options.strict_differences;
  CompareOptions trusting = options;  // the same options, with what compare_runs learns about the backends' trust
  for (const auto& [side, m] : {std::pair{"gold", &gold}, std::pair{"candidate", &candidate}}) {
    const std::string why = load_reducers(*m, side, options.trusted_backends);
    if (!why.empty()) trusting.untrusted[side] = why;
  }
  use_current_differences(candidate, trusting, report);
  report.gold = &gold;
  report.candidate = &candidate;
  report.policy = options.policy;
  report.shard = options.shard;
  const std::vector<std::string> ids = ids_to_compare(gold, candidate, options);
  const RecordIndex gold_index(gold), candidate_index(candidate);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (options.on_start) options.on_start(ids[i], i, ids.size());
    report.scenarios.push_back(compare_scenario(gold, candidate, gold_index.find(ids[i]), candidate_index.find(ids[i]),
                                                ids[i], trusting, report.differences));
    if (options.on_outcome) options.on_outcome(report.scenarios.back());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace parity
