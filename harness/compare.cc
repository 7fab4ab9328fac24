// Leaf-by-leaf checks and scenario verdicts (see compare.h); messages follow numpy.testing's layout.
#include "compare.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "numpy_api.h"

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

class TreeComparer {
 public:
  TreeComparer(const Policy& policy, const NodeIndex& gold, const NodeIndex& candidate, std::int64_t& visits)
      : policy_(policy), gold_index_(gold), candidate_index_(candidate), visits_(visits) {}
  void walk(const Node& g, const Node& c, const std::string& path);
  CheckList result;

 private:
  void fail(const char* check, const std::string& path, std::string message, json details = json::object()) {
    result.failures.push_back({check, false, path, std::move(message), std::move(details)});
  }
  void expect(bool ok, const char* check, const std::string& path, const std::function<std::string()>& message,
              json details = json::object()) {
    ok ? result.pass(check) : fail(check, path, message(), std::move(details));
  }
  void compare_containers(const Node& g, const Node& c, const std::string& path);
  void compare_type(const Node& g, const Node& c, const std::string& path);
  void compare_arrays(py::handle g, py::handle c, bool layout_checks, const std::string& path);
  void compare_array_values(py::handle g, py::handle c, const std::string& path);
  void compare_leaf(const Node& g, const Node& c, const std::string& path);
  void compare_state(const Node& g, const Node& c, const std::string& path);
  std::string sides(const std::string& gold, const std::string& candidate) const {
    return policy_.gold_name + " " + gold + ", " + policy_.candidate_name + " " + candidate;
  }

  const Policy& policy_;
  const NodeIndex &gold_index_, &candidate_index_;
  std::int64_t& visits_;
};

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

void TreeComparer::compare_type(const Node& g, const Node& c, const std::string& path) {
  const auto mapped = policy_.type_map.find(g.type);
  const std::string expected = mapped == policy_.type_map.end() ? g.type : mapped->second;
  expect(c.type == expected, "type", path,
         [&] {
           std::string m = "type differs: " + sides(g.type, c.type);
           if (expected != g.type) m += " (expected " + expected + " through the candidate's TYPE_MAP)";
           return m;
         },
         {{"gold", g.type}, {"candidate", c.type}, {"expected", expected}});
}

void TreeComparer::compare_containers(const Node& g, const Node& c, const std::string& path) {
  if (g.kind != Node::Kind::Dict) {
    expect(g.items.size() == c.items.size(), "structure", path,
           [&] {
             return std::string(kind_name(g.kind)) +
                    " length differs: " + sides(std::to_string(g.items.size()), std::to_string(c.items.size()));
           },
           {{"gold_length", g.items.size()}, {"candidate_length", c.items.size()}});
    for (std::size_t i = 0; i < std::min(g.items.size(), c.items.size()); ++i)
      walk(g.items[i], c.items[i], child_path(g.items[i], path + "[" + std::to_string(i) + "]"));
    return;
  }
  std::map<std::string, std::size_t> cand_keys;
  for (std::size_t i = 0; i < c.keys.size(); ++i) cand_keys[c.keys[i]] = i;
  std::vector<std::string> only_gold, only_cand;
  for (std::size_t i = 0; i < g.keys.size(); ++i) {
    auto it = cand_keys.find(g.keys[i]);
    if (it == cand_keys.end()) {
      only_gold.push_back(g.keys[i]);
      continue;
    }
    walk(g.items[i], c.items[it->second], child_path(g.items[i], key_path(path, g.keys[i])));
    cand_keys.erase(it);
  }
  for (const auto& [key, _] : cand_keys) only_cand.push_back(key);
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (const auto& k : keys) s += (s.empty() ? "'" : ", '") + k + "'";
    return s.empty() ? "none" : s;
  };
  expect(only_gold.empty() && only_cand.empty(), "structure", path,
         [&] {
           return "dict keys differ: only in " + policy_.gold_name + ": " + quoted(only_gold) + "; only in " +
                  policy_.candidate_name + ": " + quoted(only_cand);
         },
         {{"only_gold", only_gold}, {"only_candidate", only_cand}});
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
  const ValueReport r = compare_values(g, c, policy_.tolerance);
  if (r.ok()) return result.pass("values");
  if (!r.not_comparable.empty())
    return fail("values", path,
                "values not compared: " + r.not_comparable + " (" + sides(dtype_text(g), dtype_text(c)) + ")");
  std::ostringstream m;
  const Tolerance& t = policy_.tolerance;
  if (r.criterion == "allclose")
    m << "Not equal to tolerance rtol=" << fmt_g(t.rtol) << ", atol=" << fmt_g(t.atol)
      << " (|candidate - gold| <= atol + rtol * |gold|, NaN == NaN)\n";
  else
    m << "Not equal (exact comparison)\n";
  m << "Mismatched elements: " << r.mismatched << " / " << r.total << " ("
    << fmt_g(100.0 * static_cast<double>(r.mismatched) / static_cast<double>(r.total)) << "%)\n";
  if (r.nan_mismatched) m << "NaN on one side only: " << r.nan_mismatched << "\n";
  m << "First mismatches (index: " << policy_.gold_name << " | " << policy_.candidate_name << "):\n";
  json first = json::array();
  for (const Mismatch& mm : r.first) {
    m << "  " << index_path(mm.index) << ": " << mm.gold << " | " << mm.candidate << "\n";
    first.push_back({{"index", mm.index}, {"gold", mm.gold}, {"candidate", mm.candidate}});
  }
  if (r.criterion == "allclose" && r.mismatched > r.nan_mismatched) {
    m << "Max absolute difference among violations: " << fmt_g(r.max_abs.value) << "\n";
    m << "Max relative difference among violations: " << fmt_g(r.max_rel.value) << "\n";
  }
  std::string text = m.str();
  text.pop_back();
  json details = {{"criterion", r.criterion},
                  {"rtol", t.rtol},
                  {"atol", t.atol},
                  {"mismatched", r.mismatched},
                  {"total", r.total},
                  {"nan_mismatched", r.nan_mismatched},
                  {"percent", 100.0 * static_cast<double>(r.mismatched) / static_cast<double>(r.total)},
                  {"first", first}};
  if (r.criterion == "allclose") details["max_abs_diff"] = r.max_abs.value, details["max_rel_diff"] = r.max_rel.value;
  fail("values", path, text, details);
}

void TreeComparer::compare_arrays(py::handle g, py::handle c, bool layout_checks, const std::string& path) {
  const bool same_shape = py::bool_(g.attr("shape").equal(c.attr("shape")));
  if (layout_checks)
    expect(same_shape, "shape", path, [&] { return "shape differs: " + sides(shape_text(g), shape_text(c)); },
           {{"gold", py_str(g.attr("shape"))}, {"candidate", py_str(c.attr("shape"))}});
  const bool same_dtype = PyArray_EquivTypes(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(g.ptr())),
                                             PyArray_DESCR(reinterpret_cast<PyArrayObject*>(c.ptr())));
  expect(same_dtype, "dtype", path, [&] { return "dtype differs: " + sides(dtype_text(g), dtype_text(c)); },
         {{"gold", py_str(g.attr("dtype").attr("str"))}, {"candidate", py_str(c.attr("dtype").attr("str"))}});
  if (layout_checks && same_shape) {
    py::object gf = g.attr("flags"), cf = c.attr("flags");
    const bool same_layout = gf.attr("c_contiguous").equal(cf.attr("c_contiguous")) &&
                             gf.attr("f_contiguous").equal(cf.attr("f_contiguous"));
    expect(same_layout, "layout", path, [&] { return "layout differs: " + sides(layout_text(g), layout_text(c)); },
           {{"gold", layout_text(g)}, {"candidate", layout_text(c)}});
  }
  if (layout_checks) {
    const bool gw = g.attr("flags").attr("writeable").cast<bool>(), cw = c.attr("flags").attr("writeable").cast<bool>();
    auto word = [](bool w) { return std::string(w ? "writeable" : "read-only"); };
    expect(gw == cw, "writeable", path, [&] { return "writeable flag differs: " + sides(word(gw), word(cw)); },
           {{"gold", gw}, {"candidate", cw}});
  }
  if (same_shape) compare_array_values(g, c, path);
}

// For leaves of one type, what their reducer recorded (a mask, a fill value, instance attributes) is
// compared with the same checks; any failure there is an `attrs` failure naming the inner check.
// Leaves of different types (a TYPE_MAP proxy against a plain array) have no common state to compare.
void TreeComparer::compare_state(const Node& g, const Node& c, const std::string& path) {
  if (g.type != c.type || (g.state.empty() && c.state.empty())) return;
  if (g.state.empty() != c.state.empty())
    return fail("attrs", path,
                "subclass state recorded only for " + (g.state.empty() ? policy_.candidate_name : policy_.gold_name));
  TreeComparer inner(policy_, gold_index_, candidate_index_, visits_);
  inner.walk(g.state.front(), c.state.front(), child_path(g.state.front(), path));
  if (inner.result.failures.empty()) return result.pass("attrs");
  for (Check& f : inner.result.failures) {
    f.details["inner_check"] = f.check;
    f.message = "[" + f.check + "] " + f.message;
    f.check = "attrs";
    result.failures.push_back(std::move(f));
  }
}

void TreeComparer::compare_leaf(const Node& g, const Node& c, const std::string& path) {
  compare_type(g, c, path);
  if (g.kind == Node::Kind::Object || c.kind == Node::Kind::Object) {
    if (g.kind == c.kind) compare_state(g, c, path);
    return;
  }
  py::object ga = as_array(g), ca = as_array(c);
  if (ga && ca) {
    const bool arrays = g.kind == Node::Kind::Array && c.kind == Node::Kind::Array;
    compare_arrays(ga, ca, arrays, path);
    // Object arrays: the elements, pairwise in C order, with the same checks as any output.
    if (arrays && !g.items.empty() && g.items.size() == c.items.size() &&
        py::bool_(ga.attr("shape").equal(ca.attr("shape"))))
      for (std::size_t i = 0; i < g.items.size(); ++i) walk(g.items[i], c.items[i], child_path(g.items[i], path));
    return compare_state(g, c, path);
  }
  if (g.kind != c.kind) return;  // the type check has reported it; there is no common value to compare
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
}

// A hostile file can make references expand exponentially; no real output needs this many visits.
constexpr std::int64_t kMaxVisits = 10'000'000;

void TreeComparer::walk(const Node& gold_node, const Node& candidate_node, const std::string& path) {
  if (++visits_ > kMaxVisits)
    throw FormatError(path + ": more than " + std::to_string(kMaxVisits) + " nodes to compare (references expanding?)");
  // The same earlier object on both sides has been compared where it first appeared.
  if (!gold_node.ref.empty() && gold_node.ref == candidate_node.ref) return;
  const Node& g = gold_index_.resolve(gold_node);
  const Node& c = candidate_index_.resolve(candidate_node);
  if (is_container(g) || is_container(c)) {
    if (g.kind != c.kind) {
      return fail("structure", path,
                  std::string("container kind differs: ") + sides(kind_name(g.kind), kind_name(c.kind)),
                  {{"gold", kind_name(g.kind)}, {"candidate", kind_name(c.kind)}});
    }
    result.pass("structure");
    compare_type(g, c, path);
    return compare_containers(g, c, path);
  }
  compare_leaf(g, c, path);
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,") == std::string::npos)
    return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

const ScenarioRecord* find(const Manifest& m, const std::string& id) {
  for (const auto& s : m.scenarios)
    if (s.id == id) return &s;
  return nullptr;
}

std::string error_summary(const json& error) { return error.value("type", "?") + ": " + error.value("message", ""); }

std::string error_text(const std::string& side, const ScenarioRecord& r) {
  std::string m = "the " + side + " run raised " + error_summary(r.error);
  const std::string tb = r.error.value("traceback", "");
  return tb.empty() ? m : m + "\n" + tb;
}

Policy policy_for(const Manifest& gold, const Manifest& candidate, const json& meta) {
  Policy p;
  p.tolerance.rtol = meta.value("rtol", p.tolerance.rtol);
  p.tolerance.atol = meta.value("atol", p.tolerance.atol);
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

// fidelity: the reloaded outputs must digest exactly as the scenario's outputs did before writing.
void check_fidelity(const Side& side, CheckList& list) {
  if (!side.record.fidelity.is_object()) return;
  py::dict recomputed = py::module_::import("parity.probe").attr("digests")(side.outputs);
  std::size_t failures = 0;
  for (const auto& [path, digest] : side.record.fidelity.items()) {
    const py::str key(path);
    const std::string now = recomputed.contains(key) ? recomputed[key].cast<std::string>() : "absent";
    if (now == digest.get<std::string>()) continue;
    ++failures;
    list.failures.push_back({"fidelity",
                             false,
                             path,
                             "the " + side.name + " output reloaded from " +
                                 (side.manifest.dir / side.record.file).string() +
                                 " differs from what the scenario produced (digest " + digest.get<std::string>() +
                                 ", reloaded " + now + "): parity's codec changed it; please report this file",
                             {{"side", side.name}, {"written", digest}, {"reloaded", now}}});
  }
  if (failures == 0) list.pass("fidelity");
}

py::tuple unpickle(const Side& side) {
  py::object blob = py::module_::import("pathlib")
                        .attr("Path")((side.manifest.dir / side.record.pickle_file).string())
                        .attr("read_bytes")();
  return py::module_::import("parity.probe").attr("unpickle")(blob);
}

// pickle: what the candidate's own pickling loses, judged against what plain NumPy (gold) loses too.
void check_pickle(const Side& gold, const Side& cand, CheckList& list) {
  const json &gerr = gold.record.pickle_error, &cerr = cand.record.pickle_error;
  if (cerr.is_object() && !gerr.is_object())
    return list.failures.push_back({"pickle", false, cerr.value("path", "outputs"),
                                    "pickle (protocol 5) cannot pickle the " + cand.name +
                                        " output: " + error_summary(cerr) + "; " + gold.name + "'s output pickles",
                                    cerr});
  if (gold.record.pickle_file.empty() || cand.record.pickle_file.empty()) return;
  py::tuple g = unpickle(gold), c = unpickle(cand);
  if (!c[1].is_none() && g[1].is_none()) {
    json err = json::parse(py::module_::import("parity._scenario").attr("json_text")(c[1]).cast<std::string>());
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

void run_probes(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                const Node& gn, const Node& cn, const CompareOptions& options, CheckList& list) {
  const bool digests = g.fidelity.is_object() || c.fidelity.is_object();
  const bool pickles = options.pickle_probe && (c.pickle_error.is_object() || !c.pickle_file.empty());
  if (!digests && !pickles) return;  // results written without probes: nothing to rebuild for
  py::object gobj, cobj;
  try {
    gobj = to_python(gn);
    cobj = to_python(cn);
  } catch (const FormatError& e) {
    return list.failures.push_back(
        {"fidelity", false, "outputs", std::string("cannot rebuild the outputs to check them: ") + e.what()});
  }
  const Side gs{gold.backend.value("name", "gold"), gold, g, gobj},
      cs{candidate.backend.value("name", "candidate"), candidate, c, cobj};
  check_fidelity(gs, list);
  check_fidelity(cs, list);
  if (options.pickle_probe) check_pickle(gs, cs, list);
}

void compare_files(const Manifest& gold, const Manifest& candidate, const ScenarioRecord& g, const ScenarioRecord& c,
                   const CompareOptions& options, ScenarioOutcome& out) {
  for (const auto* side : {&g, &c}) {
    if (side->file.empty() || !std::filesystem::exists((side == &g ? gold : candidate).dir / side->file)) {
      out.status = "fail";
      out.checks.push_back({"missing", false, "outputs",
                            "the " + std::string(side == &g ? "gold" : "candidate") + " result file '" + side->file +
                                "' is missing from " + (side == &g ? gold : candidate).dir.string()});
    }
  }
  if (!out.checks.empty()) return;
  Node gn, cn;
  try {
    gn = read_result(gold.dir / g.file);
    cn = read_result(candidate.dir / c.file);
  } catch (const FormatError& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("cannot read result file: ") + e.what()});
    return;
  }
  CheckList list;
  try {
    list = compare_outputs(gn, cn, policy_for(gold, candidate, out.meta));
    run_probes(gold, candidate, g, c, gn, cn, options, list);
  } catch (const FormatError& e) {
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("cannot compare the result files: ") + e.what()});
    return;
  } catch (py::error_already_set& e) {  // parity's own bug, reported where it happened; the run goes on
    out.status = "error";
    out.checks.push_back({"error", false, "outputs", std::string("internal error while comparing: ") + e.what()});
    return;
  }
  out.status = list.failures.empty() ? "pass" : "fail";
  out.checks = std::move(list.failures);
  for (const auto& [check, n] : list.passed) out.checks.push_back({check, true, "outputs", "", {{"leaves", n}}});
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
    if (r->status != "error") continue;
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

void apply_compare_xfail(ScenarioOutcome& out) {
  const json xfail = out.meta.value("xfail", json::object());
  if (!xfail.contains("compare") || (out.status != "pass" && out.status != "fail")) return;
  const std::string reason = xfail.at("compare").get<std::string>();
  if (out.status == "fail") {
    out.status = "xfail", out.message = "compare expected failure: " + reason;
  } else {
    out.status = "xpass", out.message = "the compare pass was expected to fail (" + reason + ") but passed";
  }
}

std::string summary_message(const ScenarioOutcome& out) {
  std::set<std::string> names;
  for (const Check& c : out.checks)
    if (!c.ok) names.insert(c.check);
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? s : "failed checks: " + s;
}

ScenarioOutcome compare_scenario(const Manifest& gold, const Manifest& candidate, const std::string& id,
                                 const CompareOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ScenarioRecord* g = find(gold, id);
  const ScenarioRecord* c = find(candidate, id);
  ScenarioOutcome out;
  out.id = id;
  out.meta = g ? g->meta : c->meta;
  out.gold_seconds = g ? g->seconds : 0;
  out.candidate_seconds = c ? c->seconds : 0;
  out.repro = repro_command(options.program, gold, candidate, id, out.meta);
  if (!decide_without_outputs(g, c, gold, candidate, out)) compare_files(gold, candidate, *g, *c, options, out);
  apply_compare_xfail(out);
  if (out.message.empty()) out.message = summary_message(out);
  for (Check& check : out.checks)
    if (!check.ok && check.check == "values") check.message += "\nRepro: " + out.repro;
  out.compare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

CheckList compare_outputs(const Node& gold, const Node& candidate, const Policy& policy) {
  const NodeIndex gold_index(gold), candidate_index(candidate);
  std::int64_t visits = 0;
  TreeComparer comparer(policy, gold_index, candidate_index, visits);
  comparer.walk(gold, candidate, "outputs");
  return std::move(comparer.result);
}

std::string repro_command(const std::string& program, const Manifest& gold, const Manifest& candidate,
                          const std::string& id, const json& meta) {
  const std::string source = meta.value("source", "");
  auto run = [&](const Manifest& m, const char* dir) {
    std::string cmd = shell_quote(program) + " run --backend " + shell_quote(m.backend.value("spec", "gold"));
    const std::string role = m.backend.value("role", "");
    if (role != (m.backend.value("name", "") == "gold" ? "gold" : "candidate")) cmd += " --role " + role;
    if (!source.empty()) cmd += " --scenarios " + shell_quote(source);
    return cmd + " --only " + shell_quote(id) + " --out " + dir;
  };
  // ';' rather than '&&': a side whose run fails (exit 1) must not stop the other side or the compare.
  return run(gold, "/tmp/parity-repro/gold") + " ; " + run(candidate, "/tmp/parity-repro/candidate") + " ; " +
         shell_quote(program) + " compare /tmp/parity-repro/gold /tmp/parity-repro/candidate";
}

std::map<std::string, int> CompareReport::counts() const {
  std::map<std::string, int> n{{"pass", 0}, {"fail", 0}, {"error", 0}, {"xfail", 0}, {"xpass", 0}, {"skip", 0}};
  for (const auto& s : scenarios) ++n[s.status];
  return n;
}

bool CompareReport::failed() const {
  auto n = counts();
  return n["fail"] + n["error"] + n["xpass"] > 0;
}

// The probes rebuild outputs through the backends' reducers, which are registered when their modules load.
void load_reducers(const Manifest& m) {
  const std::string spec = m.backend.value("spec", "");
  try {
    py::module_::import("parity.backend").attr("load")(spec, m.backend.value("role", ""));
  } catch (py::error_already_set& e) {
    std::fprintf(stderr,
                 "parity compare: cannot import backend %s for its reducers (%s); outputs of its own types "
                 "cannot be rebuilt, so their fidelity and pickle checks fail\n",
                 spec.c_str(), e.what());
  }
}

CompareReport compare_runs(const Manifest& gold, const Manifest& candidate, const CompareOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  for (const Manifest* m : {&gold, &candidate}) load_reducers(*m);
  CompareReport report;
  report.gold = &gold;
  report.candidate = &candidate;
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const Manifest* m : {&gold, &candidate})
    for (const auto& s : m->scenarios)
      if (seen.insert(s.id).second) ids.push_back(s.id);
  const std::set<std::string> only(options.only.begin(), options.only.end());
  for (const auto& id : ids)
    if (only.empty() || only.count(id)) report.scenarios.push_back(compare_scenario(gold, candidate, id, options));
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace parity
