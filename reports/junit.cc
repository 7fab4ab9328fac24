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

// Decodes one UTF-8 sequence at `at`; returns its length, or 0 if it is not valid UTF-8 (bad lead or
// continuation bytes, overlong forms, beyond U+10FFFF). `cp` receives the code point.
std::size_t decode_utf8(const std::string& text, std::size_t at, char32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  const std::size_t len = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xe  ? 3
                          : (lead >> 3) == 0x1e ? 4
                                                : 0;
  if (len == 0 || at + len > text.size()) return 0;
  cp = len == 1 ? lead : lead & (0x7f >> len);
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(k) >> 6) != 0x2) return 0;
    cp = (cp << 6) | (byte(k) & 0x3f);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  return cp < kMin[len] || cp > 0x10ffff ? 0 : len;
}

// XML 1.0's Char production.
bool xml_char(char32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
         cp >= 0x10000;
}

}  // namespace

std::string xml_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(text, i, cp);
    if (len > 0 && xml_char(cp))
      out.append(text, i, len);
    else
      out += "\xef\xbf\xbd";  // U+FFFD: one per forbidden character, one per byte of malformed input
    i += len > 0 ? len : 1;
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
