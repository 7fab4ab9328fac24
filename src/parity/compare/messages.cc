// compare's messages and details: the side-by-side facts table, numpy.testing's value report, run errors.
#include "messages.h"

#include <pybind11/cast.h>

#include <sstream>

#include "compare_internal.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {

namespace {

// What the layout-class checks look at, for one side: the side-by-side table of their failures.
// The names a subclass's reducer recorded (its attributes), "none" for a plain array.
std::string attribute_names(const Node& node) {
  if (node.state.empty() || node.state.front().kind() != Node::Kind::Dict) return "none";
  std::string names;
  for (const std::string& key : node.state.front().keys()) names += (names.empty() ? "" : ", ") + key;
  return names.empty() ? "none" : names;
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

}  // namespace

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

std::string error_summary(const json& error) { return error.value("type", "?") + ": " + error.value("message", ""); }

std::string error_text(const std::string& side, const ScenarioRecord& r) {
  const char* what = r.status == "crash"     ? " run crashed: "
                     : r.status == "timeout" ? " run timed out: "
                                             : " run raised ";
  std::string m = "the " + side + what + error_summary(r.error);
  const std::string tb = r.error.value("traceback", "");
  return tb.empty() ? m : m + "\n" + tb;
}

}  // namespace parity
