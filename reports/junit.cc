// Writes JUnit XML with pugixml, which escapes markup; xml_safe removes what XML cannot hold at all.
#include "junit.h"

#include <pugixml.hpp>
#include <sstream>

namespace parity {
namespace {

void set(pugi::xml_node node, const char* name, const std::string& value) {
  node.append_attribute(name).set_value(xml_safe(value).c_str());
}

std::string testcase_name(const ScenarioOutcome& s) {
  const std::string module = s.meta.value("module", "");
  return s.id.rfind(module + ".", 0) == 0 ? s.id.substr(module.size() + 1) : s.id;
}

std::string body(const ScenarioOutcome& s) {
  std::string text;
  for (const Check& c : s.checks)
    if (!c.ok) text += "[" + c.check + "] " + c.path + ": " + c.message + "\n\n";
  if (!s.repro.empty()) text += "Repro: " + s.repro + "\n";
  return text;
}

void add_property(pugi::xml_node props, const std::string& name, const std::string& value) {
  auto p = props.append_child("property");
  set(p, "name", name);
  set(p, "value", value);
}

void add_testcase(pugi::xml_node suite, const ScenarioOutcome& s) {
  auto tc = suite.append_child("testcase");
  set(tc, "classname", s.meta.value("module", s.id));
  set(tc, "name", testcase_name(s));
  set(tc, "time", std::to_string(s.gold_seconds + s.candidate_seconds + s.compare_seconds));
  const char* element = s.status == "fail" || s.status == "xpass"   ? "failure"
                        : s.status == "error"                       ? "error"
                        : s.status == "skip" || s.status == "xfail" ? "skipped"
                                                                    : nullptr;
  if (!element) return;
  auto node = tc.append_child(element);
  set(node, "message", s.message);
  set(node, "type", s.status);
  if (std::string(element) != "skipped") node.text().set(xml_safe(body(s)).c_str());
}

}  // namespace

std::string xml_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = len > 0 && i + static_cast<std::size_t>(len) <= text.size();
    for (int k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (valid && len == 1) valid = c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
    if (valid && len == 3) {
      const unsigned cp = ((c & 0x0fu) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3fu) << 6);
      valid = cp < 0xd800 || cp > 0xdfff;  // lone surrogates written with surrogatepass
      valid = valid && !(cp == 0xffc0 && (static_cast<unsigned char>(text[i + 2]) & 0x3e) == 0x3e);  // U+FFFE/FFFF
    }
    if (valid) {
      out.append(text, i, static_cast<std::size_t>(len));
      i += static_cast<std::size_t>(len);
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

std::string report_to_junit(const CompareReport& report) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  const std::string gold = report.gold->backend.value("name", "gold");
  const std::string cand = report.candidate->backend.value("name", "candidate");
  auto counts = report.counts();
  set(suites, "name", "parity");
  auto suite = suites.append_child("testsuite");
  set(suite, "name", gold + "-vs-" + cand);
  set(suite, "tests", std::to_string(report.scenarios.size()));
  set(suite, "failures", std::to_string(counts["fail"] + counts["xpass"]));
  set(suite, "errors", std::to_string(counts["error"]));
  set(suite, "skipped", std::to_string(counts["skip"] + counts["xfail"]));
  set(suite, "time", std::to_string(report.seconds));
  set(suite, "timestamp", report.started);
  auto props = suite.append_child("properties");
  add_property(props, "gold.backend", gold);
  add_property(props, "gold.version", report.gold->backend.value("version", ""));
  add_property(props, "candidate.backend", cand);
  add_property(props, "candidate.version", report.candidate->backend.value("version", ""));
  add_property(props, "python", report.candidate->environment.value("python", ""));
  add_property(props, "numpy", report.candidate->environment.value("numpy", ""));
  add_property(props, "platform", report.candidate->environment.value("platform", ""));
  for (const auto& s : report.scenarios) add_testcase(suite, s);
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

}  // namespace parity
