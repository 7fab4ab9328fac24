// Unit tests of the JUnit XML report and of xml_safe, checked by parsing the output with pugixml and expat and by
// validating it against tests/schemas/junit.xsd with lxml.
#include "junit.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <filesystem>
#include <pugixml.hpp>
#include <random>
#include <string>
#include <vector>

#include "compare.h"
#include "json_report.h"

namespace py = pybind11;
using json = nlohmann::json;
using parity::CompareReport;
using parity::Manifest;
using parity::ScenarioOutcome;
using parity::xml_safe;

namespace {

const std::string kReplacement = "\xef\xbf\xbd";  // U+FFFD

// True when `text` is well-formed UTF-8 made only of characters XML 1.0 allows (the Char production).
// Python decides, so the check does not share code or assumptions with xml_safe.
bool is_xml_text(const std::string& text) {
  py::dict scope;
  scope["data"] = py::bytes(text);
  py::exec(R"(
try:
    s = data.decode('utf-8')
    ok = all(c in '\t\n\r' or '\x20' <= c <= '\ud7ff' or '\ue000' <= c <= '\ufffd' or c >= '\U00010000' for c in s)
except UnicodeDecodeError:
    ok = False
)",
           scope);
  return scope["ok"].cast<bool>();
}

// Expat refuses what XML 1.0 forbids, including character references such as &#1;.
std::string expat_error(const std::string& xml) {
  try {
    py::module_::import("xml.etree.ElementTree").attr("fromstring")(py::bytes(xml));
    return "";
  } catch (const py::error_already_set& e) {
    return e.what();
  }
}

// lxml's complaints about `xml` against the JUnit schema kept in the repo; "" when it is valid.
std::string schema_error(const std::string& xml) {
  py::dict scope;
  scope["data"] = py::bytes(xml);
  scope["xsd"] = PARITY_TESTS_DIR "/schemas/junit.xsd";
  py::exec(R"(
from lxml import etree
schema = etree.XMLSchema(etree.parse(xsd))
error = '' if schema.validate(etree.fromstring(data)) else str(schema.error_log)
)",
           scope);
  return scope["error"].cast<std::string>();
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// xml_safe

TEST(JunitXmlSafe, KeepsValidText) {
  for (const std::string text : {"", "plain ASCII <&> \"quoted\"", "tab\tnewline\ncr\r", "caf\xc3\xa9",
                                 "\xe4\xb8\xad\xe6\x96\x87", "emoji \xf0\x9f\x98\x80 end", "\xef\xbf\xbd",
                                 "\xee\x80\x80 private use", "\xf4\x8f\xbf\xbf max", "del \x7f and c1 \xc2\x85"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(xml_safe(text), text);
  }
}

TEST(JunitXmlSafe, ReplacesControlCharacters) {
  EXPECT_EQ(xml_safe("a\x01"
                     "b"),
            "a" + kReplacement + "b");
  EXPECT_EQ(xml_safe("\x1b[31mred\x1b[0m"), kReplacement + "[31mred" + kReplacement + "[0m");
  EXPECT_EQ(xml_safe(std::string("nul\0here", 8)), "nul" + kReplacement + "here");
  EXPECT_EQ(xml_safe("\x08\x0b\x0c\x1f"), kReplacement + kReplacement + kReplacement + kReplacement);
}

TEST(JunitXmlSafe, ReplacesLoneSurrogates) {
  // Python writes lone surrogates with surrogatepass: U+D800 as ED A0 80, U+DFFF as ED BF BF.
  for (const std::string surrogate : {"\xed\xa0\x80", "\xed\xbf\xbf"}) {
    const std::string out = xml_safe("a" + surrogate + "b");
    EXPECT_EQ(out.find(surrogate), std::string::npos);
    EXPECT_TRUE(is_xml_text(out));
    EXPECT_EQ(out.front(), 'a');
    EXPECT_EQ(out.back(), 'b');
    EXPECT_NE(out.find(kReplacement), std::string::npos);
  }
  // The last code points before and after the surrogate block are ordinary characters.
  EXPECT_EQ(xml_safe("\xed\x9f\xbf"), "\xed\x9f\xbf");
  EXPECT_EQ(xml_safe("\xee\x80\x80"), "\xee\x80\x80");
}

TEST(JunitXmlSafe, ReplacesNonCharactersFFFEAndFFFF) {
  for (const std::string nonchar : {"\xef\xbf\xbe", "\xef\xbf\xbf"}) {
    const std::string out = xml_safe("a" + nonchar + "b");
    EXPECT_EQ(out.find(nonchar), std::string::npos);
    EXPECT_TRUE(is_xml_text(out));
    EXPECT_NE(out.find(kReplacement), std::string::npos);
  }
  EXPECT_EQ(xml_safe("\xef\xbf\xbc"), "\xef\xbf\xbc");  // U+FFFC is allowed
}

TEST(JunitXmlSafe, OneReplacementPerWellFormedButForbiddenCharacter) {
  // A lone surrogate or U+FFFE is one character: the header promises one U+FFFD for it, not one per byte.
  EXPECT_EQ(xml_safe("a\xed\xa0\x80"
                     "b"),
            "a" + kReplacement + "b");
  EXPECT_EQ(xml_safe("a\xef\xbf\xbe"
                     "b"),
            "a" + kReplacement + "b");
}

TEST(JunitXmlSafe, ReplacesInvalidBytes) {
  EXPECT_EQ(xml_safe("a\xff"
                     "b"),
            "a" + kReplacement + "b");
  EXPECT_EQ(xml_safe("\x80"), kReplacement);                            // continuation byte without a lead
  EXPECT_EQ(xml_safe("x\xe4\xb8"), "x" + kReplacement + kReplacement);  // truncated at the end
  EXPECT_EQ(xml_safe("\xc3"
                     "A"),
            kReplacement + "A");  // lead byte followed by ASCII
  EXPECT_TRUE(is_xml_text(xml_safe("\xf0\x9f\x98")));
}

TEST(JunitXmlSafe, OutputIsAlwaysXmlText) {
  // Overlong forms and code points beyond U+10FFFF are not UTF-8 either.
  for (const std::string bad : {"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x80\x80\x80",
                                "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8\x88\x80\x80\x80"}) {
    SCOPED_TRACE(::testing::PrintToString(bad));
    EXPECT_TRUE(is_xml_text(xml_safe("<" + bad + ">")));
  }
}

TEST(JunitXmlSafe, RandomBytesBecomeXmlText) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> length(1, 12), byte(0, 255), high(0x80, 0xff);
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    for (int n = length(rng); n > 0; --n) s += static_cast<char>(i % 2 ? high(rng) : byte(rng));
    const std::string out = xml_safe(s);
    ASSERT_TRUE(is_xml_text(out)) << "input " << ::testing::PrintToString(s) << " gave "
                                  << ::testing::PrintToString(out);
  }
}

// ---------------------------------------------------------------------------------------------------------
// report_to_junit

const std::string kRepro = "parity run --backend numpy --only ID ; parity compare /tmp/parity-repro/gold ...";

// One failed check as compare writes it: the repro is the scenario's field, never part of the message.
json failed_check(const std::string& check, const std::string& path, const std::string& message,
                  json details = json::object()) {
  return {{"check", check}, {"ok", false}, {"path", path}, {"message", message}, {"details", std::move(details)}};
}

json passed_check(const std::string& check) {
  return {{"check", check}, {"ok", true}, {"path", "outputs"}, {"message", ""}, {"details", {{"leaves", 3}}}};
}

const std::string kTraceback =
    "Traceback (most recent call last):\n  File \"scenarios/other.py\", line 9, in test_error\n"
    "    table['x']\nKeyError: 'x'\n";

// The compare JSON of docs/report-json.md, built by hand: the writer's input is that document, not parity's structs.
class JunitReport : public ::testing::Test {
 protected:
  JunitReport() {
    report_ = {{"format", "parity-compare"},
               {"version", parity::kReportJsonVersion},
               {"parity", "0.1.0"},
               {"started", "2024-05-01T12:00:00Z"},
               {"seconds", 0.5},
               {"gold", side("numpy", "2.1.0", "3.12.4", 1.25)},
               {"candidate", side("fsproxy", "0.3.1", "3.11.2", 1.75)},
               {"policy", {{"dtype", "exact"}, {"layout", "strides"}, {"type", "exact-or-mapped"}}},
               {"summary", json::object()},
               {"scenarios", json::array()}};
  }

  static json side(const std::string& name, const std::string& version, const std::string& python, double seconds) {
    return {{"dir", "/results/" + name},
            {"backend", {{"name", name}, {"spec", name}, {"version", version}}},
            {"environment", {{"python", python}, {"numpy", "2.1.0"}, {"platform", "Linux-" + name}}},
            {"run", {{"parity", "0.1.0"}, {"started", "2024-05-01T11:59:00Z"}, {"seconds", seconds}}},
            {"complete", true}};
  }

  // A scenario `function` of `module` with `params` (each already formatted, as the manifest holds them) and the
  // id parity forms from them; `params_in_id` is the id's suffix, in declaration order.
  json& add(const std::string& module, const std::string& function, const std::string& status,
            const std::string& message = "", json checks = json::array(), json params = json::object(),
            const std::string& params_in_id = "") {
    const std::string id = module + "." + function + params_in_id;
    checks.push_back(passed_check("type"));
    report_["scenarios"].push_back({{"id", id},
                                    {"module", module},
                                    {"function", function},
                                    {"params", std::move(params)},
                                    {"tags", json::array()},
                                    {"status", status},
                                    {"message", message},
                                    {"checks", std::move(checks)},
                                    {"seconds", {{"gold", 0.5}, {"candidate", 0.25}, {"compare", 0.125}}},
                                    {"policy", nullptr},
                                    {"source", "scenarios/" + module + ".py"},
                                    {"repro", kRepro}});
    return report_["scenarios"].back();
  }

  void add_every_status() {
    add("pkg.mod", "test_pass", "pass");
    add("pkg.mod", "test_fail", "fail", "failed checks: values",
        {failed_check("values", "outputs['a']", "Mismatched elements: 1 / 4")}, {{"n", "3"}}, "[n=3]");
    add("pkg.other", "test_error", "error", "the candidate run raised KeyError: 'x'",
        {failed_check("error", "candidate", "the candidate run raised KeyError: 'x'\n" + kTraceback,
                      {{"type", "KeyError"}, {"message", "'x'"}, {"traceback", kTraceback}})});
    add("pkg.other", "test_skip", "skip", "gold: needs scipy");
    add("pkg.mod", "test_xfail", "xfail", "candidate expected failure: not yet");
    add("pkg.mod", "test_xpass", "xpass", "the compare pass was expected to fail (r) but passed");
  }

  // Renders and parses the report, failing the test when a parser or the schema refuses it.
  pugi::xml_node parse() {
    xml_ = parity::report_to_junit(report_);
    const pugi::xml_parse_result r = doc_.load_string(xml_.c_str());
    EXPECT_TRUE(r) << r.description() << "\n" << xml_;
    EXPECT_EQ(expat_error(xml_), "") << xml_;
    EXPECT_EQ(schema_error(xml_), "") << xml_;
    return doc_.child("testsuites").child("testsuite");
  }

  static pugi::xml_node testcase(pugi::xml_node suite, const std::string& name) {
    return suite.find_child_by_attribute("testcase", "name", name.c_str());
  }

  json report_;
  std::string xml_;
  pugi::xml_document doc_;
};

TEST_F(JunitReport, SuiteCountsFollowTheStatuses) {
  add_every_status();
  const pugi::xml_node suite = parse();
  ASSERT_TRUE(suite);
  EXPECT_STREQ(suite.attribute("name").value(), "numpy-vs-fsproxy");
  EXPECT_EQ(suite.attribute("tests").as_int(), 6);
  EXPECT_EQ(suite.attribute("failures").as_int(), 2);  // fail and xpass
  EXPECT_EQ(suite.attribute("errors").as_int(), 1);
  EXPECT_EQ(suite.attribute("skipped").as_int(), 2);  // skip and xfail
  EXPECT_EQ(std::distance(suite.children("testcase").begin(), suite.children("testcase").end()), 6);
  const pugi::xml_node suites = suite.parent();
  EXPECT_EQ(suites.attribute("tests").as_int(), 6);
  EXPECT_EQ(suites.attribute("failures").as_int(), 2);
  EXPECT_EQ(suites.attribute("errors").as_int(), 1);
}

TEST_F(JunitReport, SuiteTimeIsBothRunsAndTheCompareAndTheTimestampAntsForm) {
  const pugi::xml_node suite = parse();
  EXPECT_STREQ(suite.attribute("time").value(), "3.500");  // 1.25 gold + 1.75 candidate + 0.5 compare
  EXPECT_STREQ(suite.parent().attribute("time").value(), "3.500");
  EXPECT_STREQ(suite.attribute("timestamp").value(), "2024-05-01T12:00:00");
}

TEST_F(JunitReport, TestcaseTimeIsTheScenariosThreePasses) {
  add("m", "f", "pass")["seconds"] = {{"gold", 1.5}, {"candidate", 0.25}, {"compare", 0.0625}};
  EXPECT_STREQ(testcase(parse(), "f").attribute("time").value(), "1.812");  // 1.8125, as %.3f rounds it
}

TEST_F(JunitReport, ATimeNoRunCouldTakeIsWrittenAsZero) {
  // Times from a report from elsewhere: two of 1e308 seconds summed to "inf", and 1e300 printed with %.3f was cut
  // to its first 31 digits, neither a time any JUnit reader parses as one.
  add("m", "f", "pass")["seconds"] = {{"gold", 1e308}, {"candidate", 1e308}, {"compare", 0.0}};
  add("m", "g", "pass")["seconds"] = {{"gold", 1e300}, {"candidate", 0.0}, {"compare", 0.0}};
  const pugi::xml_node suite = parse();
  EXPECT_STREQ(testcase(suite, "f").attribute("time").value(), "0.000");
  EXPECT_STREQ(testcase(suite, "g").attribute("time").value(), "0.000");
}

TEST_F(JunitReport, EmptyReportIsAValidSuite) {
  const pugi::xml_node suite = parse();
  ASSERT_TRUE(suite);
  EXPECT_EQ(suite.attribute("tests").as_int(), 0);
  EXPECT_EQ(suite.attribute("failures").as_int(), 0);
  EXPECT_EQ(suite.attribute("skipped").as_int(), 0);
  EXPECT_FALSE(suite.child("testcase"));
}

TEST_F(JunitReport, ClassnameIsTheModuleAndNameTheFunctionWithParams) {
  // The JSON's params object sorts its keys; the name keeps the id's declaration order.
  add("pkg.mod", "products", "pass", "", json::array(), {{"order", "F"}, {"n", "3"}}, "[order=F,n=3]");
  add("pkg.mod", "plain", "pass");
  json& module_error = add("broken_module", "", "error", "the gold run raised SyntaxError: bad");
  module_error["id"] = "broken_module";  // a module that failed to import: its name is the id
  const pugi::xml_node suite = parse();
  const pugi::xml_node products = testcase(suite, "products[order=F,n=3]");
  ASSERT_TRUE(products) << xml_;
  EXPECT_STREQ(products.attribute("classname").value(), "pkg.mod");
  EXPECT_STREQ(testcase(suite, "plain").attribute("classname").value(), "pkg.mod");
  const pugi::xml_node broken = testcase(suite, "broken_module");
  ASSERT_TRUE(broken) << xml_;
  EXPECT_STREQ(broken.attribute("classname").value(), "broken_module");
}

// GitHub's and GitLab's JUnit annotators put a failure at the testcase's file and line: the scenario's definition.
TEST_F(JunitReport, TestcaseCarriesTheScenariosFileAndLineForCiAnnotators) {
  add("pkg.mod", "located", "fail", "failed checks: values",
      {failed_check("values", "outputs['a']", "Mismatched elements: 1 / 4")})["line"] = 12;
  add("broken_module", "", "error", "the gold run raised SyntaxError: bad")["line"] = 0;  // no definition line known
  const pugi::xml_node suite = parse();
  const pugi::xml_node located = testcase(suite, "located");
  ASSERT_TRUE(located) << xml_;
  EXPECT_STREQ(located.attribute("file").value(), "scenarios/pkg.mod.py");
  EXPECT_EQ(located.attribute("line").as_int(), 12);
  const pugi::xml_node broken = suite.find_child_by_attribute("testcase", "classname", "broken_module");
  EXPECT_STREQ(broken.attribute("file").value(), "scenarios/broken_module.py");
  EXPECT_FALSE(broken.attribute("line")) << xml_;
}

// Annotators resolve `file` against the checkout (the job's working directory): a scenario file under the working
// directory is written relative to it, one elsewhere keeps its absolute path.
TEST_F(JunitReport, TestcaseFileIsRelativeToTheWorkingDirectoryWhenUnderIt) {
  const std::filesystem::path cwd = std::filesystem::current_path();
  add("pkg.inside", "f", "fail", "failed checks: values")["source"] = (cwd / "scenarios" / "inside.py").string();
  const std::string outside = (cwd.parent_path() / (cwd.filename().string() + "-sibling") / "outside.py").string();
  add("pkg.outside", "f", "fail", "failed checks: values")["source"] = outside;
  const pugi::xml_node suite = parse();
  EXPECT_STREQ(suite.find_child_by_attribute("testcase", "classname", "pkg.inside").attribute("file").value(),
               "scenarios/inside.py")
      << xml_;
  EXPECT_EQ(suite.find_child_by_attribute("testcase", "classname", "pkg.outside").attribute("file").value(), outside)
      << xml_;
}

// Both sides run the same code, so what each printed is labelled with its side; stderr goes to system-err.
TEST_F(JunitReport, SystemOutAndErrHoldWhatEachSidePrintedLabelled) {
  add("pkg.mod", "chatty", "fail", "failed checks: values")["output"] = {
      {"gold", {{"stdout", "hello from gold\n"}}},
      {"candidate", {{"stdout", "hello from the candidate"}, {"stderr", "\x1b[2Jwarned"}, {"truncated", true}}}};
  add("pkg.mod", "quiet", "pass");
  const pugi::xml_node suite = parse();
  const pugi::xml_node chatty = testcase(suite, "chatty");
  EXPECT_EQ(std::string(chatty.child_value("system-out")),
            "----- gold stdout -----\nhello from gold\n----- candidate stdout (its end only) -----\n"
            "hello from the candidate\n");
  EXPECT_EQ(std::string(chatty.child_value("system-err")),
            "----- candidate stderr (its end only) -----\n\xef\xbf\xbd[2Jwarned\n");
  EXPECT_FALSE(testcase(suite, "quiet").child("system-out")) << xml_;
  EXPECT_FALSE(testcase(suite, "quiet").child("system-err")) << xml_;
}

TEST_F(JunitReport, EachStatusGetsItsElement) {
  add_every_status();
  add("pkg.mod", "test_future", "someday", "a status from a newer parity");
  const pugi::xml_node suite = parse();
  const pugi::xml_node pass = testcase(suite, "test_pass");
  ASSERT_TRUE(pass);
  EXPECT_FALSE(pass.first_child()) << "a pass has no child elements";

  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"test_fail[n=3]", {"failure", "fail"}}, {"test_xpass", {"failure", "xpass"}},
      {"test_error", {"error", "error"}},      {"test_skip", {"skipped", "skip"}},
      {"test_xfail", {"skipped", "xfail"}},    {"test_future", {"error", "someday"}}};
  for (const auto& [name, element_and_type] : expected) {
    SCOPED_TRACE(name);
    const pugi::xml_node tc = testcase(suite, name);
    ASSERT_TRUE(tc) << xml_;
    EXPECT_EQ(std::distance(tc.children().begin(), tc.children().end()), 1) << "exactly one outcome element";
    const pugi::xml_node outcome = tc.child(element_and_type.first.c_str());
    ASSERT_TRUE(outcome) << xml_;
    EXPECT_EQ(outcome.attribute("type").value(), element_and_type.second);
  }
  EXPECT_STREQ(testcase(suite, "test_skip").child("skipped").attribute("message").value(), "gold: needs scipy");
  EXPECT_STREQ(testcase(suite, "test_skip").child("skipped").text().get(), "") << "a skip has nothing to repro";
  const std::string xfail_body = testcase(suite, "test_xfail").child("skipped").text().get();
  EXPECT_NE(xfail_body.find("candidate expected failure: not yet"), std::string::npos) << xfail_body;
  EXPECT_NE(xfail_body.find("Repro: " + kRepro), std::string::npos) << xfail_body;
}

TEST_F(JunitReport, FailureNamesTheChecksAndItsBodyHoldsEveryMessageAndTheReproOnce) {
  add("pkg.mod", "matrix", "fail", "failed checks: layout, values",
      {failed_check("values", "outputs['m']", "Not equal to tolerance rtol=1e-07\nMismatched elements: 1 / 20 (5%)"),
       failed_check("layout", "outputs['m']", "gold C-contiguous, candidate F-contiguous\n"),
       failed_check("values", "outputs['v'][2]", "Mismatched elements: 2 / 3")});
  const pugi::xml_node failure = testcase(parse(), "matrix").child("failure");
  ASSERT_TRUE(failure) << xml_;
  EXPECT_STREQ(failure.attribute("message").value(), "failed checks: layout, values");
  const std::string body = failure.text().get();
  for (const std::string part :
       {"[values] outputs['m']: Not equal to tolerance rtol=1e-07\nMismatched elements: 1 / 20 (5%)\n\n",
        "[layout] outputs['m']: gold C-contiguous, candidate F-contiguous\n\n",
        "[values] outputs['v'][2]: Mismatched elements: 2 / 3\n\n"})
    EXPECT_NE(body.find(part), std::string::npos) << part << "\nnot in\n" << body;
  EXPECT_EQ(body.find("\n\n\n"), std::string::npos) << "one blank line between checks: " << body;
  EXPECT_EQ(count(body, "Repro: "), 1u) << body;
  EXPECT_TRUE(body.ends_with("Repro: " + kRepro + "\n")) << body;
  EXPECT_EQ(body.find("[type]"), std::string::npos) << "passed checks are not failures: " << body;
}

TEST_F(JunitReport, ErrorBodyHoldsTheTraceback) {
  add_every_status();
  // A report whose error message lacks the traceback still shows the one its details carry.
  add("pkg.other", "test_terse", "error", "the gold run raised KeyError: 'x'",
      {failed_check("error", "gold", "the gold run raised KeyError: 'x'",
                    {{"type", "KeyError"}, {"message", "'x'"}, {"traceback", kTraceback}})});
  const pugi::xml_node suite = parse();
  for (const char* name : {"test_error", "test_terse"}) {
    SCOPED_TRACE(name);
    const pugi::xml_node error = testcase(suite, name).child("error");
    ASSERT_TRUE(error) << xml_;
    EXPECT_TRUE(std::string(error.attribute("message").value()).ends_with("raised KeyError: 'x'"));
    const std::string body = error.text().get();
    EXPECT_EQ(count(body, kTraceback), 1u) << body;
    EXPECT_EQ(count(body, "Repro: " + kRepro), 1u) << body;
  }
}

TEST_F(JunitReport, PropertiesNameBackendsVersionsEnvironmentsAndPolicies) {
  add("m", "f", "pass");
  const pugi::xml_node props = parse().child("properties");
  ASSERT_TRUE(props) << xml_;
  std::map<std::string, std::string> got;
  for (const pugi::xml_node p : props.children("property"))
    got[p.attribute("name").value()] = p.attribute("value").value();
  const std::map<std::string, std::string> expected = {{"parity", "0.1.0"},
                                                       {"gold.backend", "numpy"},
                                                       {"gold.version", "2.1.0"},
                                                       {"gold.python", "3.12.4"},
                                                       {"gold.numpy", "2.1.0"},
                                                       {"gold.platform", "Linux-numpy"},
                                                       {"candidate.backend", "fsproxy"},
                                                       {"candidate.version", "0.3.1"},
                                                       {"candidate.python", "3.11.2"},
                                                       {"candidate.numpy", "2.1.0"},
                                                       {"candidate.platform", "Linux-fsproxy"},
                                                       {"policy.dtype", "exact"},
                                                       {"policy.layout", "strides"},
                                                       {"policy.type", "exact-or-mapped"}};
  EXPECT_EQ(got, expected);
}

TEST_F(JunitReport, TrendMarksGoIntoTheMessageAndTheirCountsIntoProperties) {
  add("pkg.mod", "test_new", "fail", "failed checks: values")["trend"] = {
      {"mark", "new"}, {"since", nullptr}, {"history", {"pass", "fail"}}};
  add("pkg.mod", "test_old", "error", "the candidate run raised")["trend"] = {
      {"mark", "still-failing"}, {"since", "2024-04-01T12:00:00Z"}, {"history", {"fail", "error"}}};
  add("pkg.mod", "test_plain", "fail", "failed checks: dtype");  // a report without trends has no mark to show
  report_["baselines"] = json::array({{{"file", "old.json"}, {"started", "2024-04-01T12:00:00Z"}}});
  report_["trend_summary"] = {{"new", 1}, {"still_failing", 1}, {"fixed", 0}, {"gone", 2}};
  const pugi::xml_node suite = parse();
  EXPECT_STREQ(testcase(suite, "test_new").child("failure").attribute("message").value(),
               "failed checks: values (new failure)");
  EXPECT_STREQ(testcase(suite, "test_old").child("error").attribute("message").value(),
               "the candidate run raised (still failing since 2024-04-01T12:00:00Z)");
  EXPECT_STREQ(testcase(suite, "test_plain").child("failure").attribute("message").value(), "failed checks: dtype");
  std::map<std::string, std::string> got;
  for (const pugi::xml_node p : suite.child("properties").children("property"))
    got[p.attribute("name").value()] = p.attribute("value").value();
  EXPECT_EQ(got["trend.baselines"], "1");
  EXPECT_EQ(got["trend.new"], "1");
  EXPECT_EQ(got["trend.still_failing"], "1");
  EXPECT_EQ(got["trend.gone"], "2");
}

TEST_F(JunitReport, HostileTextStillParses) {
  const std::string hostile = "a <b> & \"c\" 'd' \x01\x1b[0m ]]> \xed\xa0\x80 \xff end";
  add("m", "test_<&>", "fail", hostile, {failed_check("values", "outputs['<&>']", hostile)});
  add("m", "test_err", "error", hostile, {failed_check("error", "gold", hostile, {{"traceback", hostile}})});
  report_["candidate"]["backend"]["version"] = "0.3.1\x07\x1b";
  const pugi::xml_node suite = parse();
  const pugi::xml_node failure = testcase(suite, "test_<&>").child("failure");
  ASSERT_TRUE(failure) << xml_;
  const std::string message = failure.attribute("message").value();
  EXPECT_NE(message.find("a <b> & \"c\" 'd' "), std::string::npos) << message;
  EXPECT_NE(message.find("[0m ]]> "), std::string::npos) << message;
  EXPECT_NE(message.find(" end"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x01'), std::string::npos);
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_GE(count(message, kReplacement), 3u);
  const std::string body = failure.text().get();
  EXPECT_NE(body.find("[values] outputs['<&>']: a <b> &"), std::string::npos) << body;
  EXPECT_NE(body.find("]]> "), std::string::npos) << body;
  EXPECT_TRUE(is_xml_text(body));
  EXPECT_TRUE(is_xml_text(testcase(suite, "test_err").child("error").text().get()));
}

TEST_F(JunitReport, MalformedUtf8StillParses) {
  // Differing bytes outputs put raw bytes into messages: overlong forms and values past U+10FFFF included.
  const std::string garbage = "gold '\xc0\x80' candidate '\xf5\x80\x80\x80' and '\xe0\x80\xaf'";
  add("m", "test_bytes", "fail", garbage, {failed_check("values", "outputs", garbage)});
  const pugi::xml_node suite = parse();
  EXPECT_TRUE(testcase(suite, "test_bytes").child("failure")) << xml_;
}

TEST_F(JunitReport, RefusesWhatIsNotVersion1CompareJson) {
  json newer = report_;
  newer["version"] = parity::kReportJsonVersion + 1;
  json other = report_;
  other["format"] = "parity-manifest";
  json no_scenarios = report_;
  no_scenarios.erase("scenarios");
  for (const json& doc : {newer, other, no_scenarios, json::array(), json("text")}) {
    SCOPED_TRACE(doc.dump().substr(0, 60));
    EXPECT_THROW(parity::report_to_junit(doc), std::invalid_argument);
  }
  EXPECT_NO_THROW(parity::report_to_junit(report_));
}

// A report of numpy against fsproxy with no scenarios yet; the manifests outlive it (it points at them).
CompareReport numpy_against_fsproxy(Manifest& gold, Manifest& cand) {
  gold.backend = {{"name", "numpy"}, {"version", "2.1.0"}};
  cand.backend = {{"name", "fsproxy"}, {"version", "0.3.1"}};
  CompareReport report;
  report.gold = &gold, report.candidate = &cand, report.started = "2024-05-01T12:00:00Z";
  return report;
}

// Checks skipped rather than trust a results directory are notices: grouped by reason in the JSON, one `notice`
// property each in the JUnit XML (still valid against the schema), so a CI page shows them.
TEST(JunitFromReportJson, CarriesTheNoticesOfChecksSkippedForTrust) {
  Manifest gold, cand;
  CompareReport report = numpy_against_fsproxy(gold, cand);
  for (int i = 0; i < 3; ++i) {
    ScenarioOutcome s;
    s.id = "mod.f" + std::to_string(i);
    s.status = "pass";
    s.meta = {{"module", "mod"}, {"function", s.id.substr(4)}};
    if (i < 2) s.skipped.push_back({"pickle", "candidate", "unverified-pickle", "the pickle carries no MAC"});
    report.scenarios.push_back(s);
  }
  const json doc = parity::report_to_json(report);
  ASSERT_EQ(doc.at("notices").size(), 1u) << doc.dump(1);
  const json& notice = doc.at("notices").at(0);
  EXPECT_EQ(notice.at("scenarios"), 2);
  EXPECT_EQ(notice.at("message"), "pickle check skipped (candidate) in 2 scenarios: the pickle carries no MAC");
  EXPECT_EQ(doc.at("scenarios").at(0).at("skipped_checks").at(0).at("kind"), "unverified-pickle");
  EXPECT_FALSE(doc.at("scenarios").at(2).contains("skipped_checks"));
  const std::string xml = parity::report_to_junit(doc);
  EXPECT_EQ(schema_error(xml), "") << xml;
  pugi::xml_document parsed;
  ASSERT_TRUE(parsed.load_string(xml.c_str())) << xml;
  const pugi::xml_node props = parsed.child("testsuites").child("testsuite").child("properties");
  EXPECT_EQ(std::string(props.find_child_by_attribute("property", "name", "notice").attribute("value").as_string()),
            notice.at("message").get<std::string>())
      << xml;
}

// The JSON carries the definition line and each side's printed output from the runs' records; a manifest is data, so
// only its text fields are kept.
TEST(JunitFromReportJson, CarriesLineAndWhatEachRunRecordedAsPrinted) {
  Manifest gold, cand;
  CompareReport report = numpy_against_fsproxy(gold, cand);
  parity::ScenarioRecord printed;
  printed.id = "mod.f";
  printed.output = {{"stdout", "gold says hi\n"}, {"stderr", 42}, {"truncated", "yes"}};
  gold.scenarios.push_back(printed);
  printed.output = {{"stderr", "candidate warns\n"}, {"truncated", true}};
  cand.scenarios.push_back(printed);
  ScenarioOutcome s;
  s.id = "mod.f", s.status = "pass";
  s.meta = {{"module", "mod"}, {"function", "f"}, {"source", "/src/mod.py"}, {"line", 7}};
  report.scenarios.push_back(s);
  const json doc = parity::report_to_json(report);
  const json& scenario = doc.at("scenarios").at(0);
  EXPECT_EQ(scenario.at("line"), 7);
  EXPECT_EQ(scenario.at("output"), json({{"gold", {{"stdout", "gold says hi\n"}}},
                                         {"candidate", {{"stderr", "candidate warns\n"}, {"truncated", true}}}}));
  const std::string xml = parity::report_to_junit(doc);
  EXPECT_EQ(schema_error(xml), "") << xml;
  pugi::xml_document parsed;
  ASSERT_TRUE(parsed.load_string(xml.c_str())) << xml;
  const pugi::xml_node tc = parsed.child("testsuites").child("testsuite").child("testcase");
  EXPECT_STREQ(tc.attribute("file").value(), "/src/mod.py");
  EXPECT_EQ(tc.attribute("line").as_int(), 7);
  EXPECT_STREQ(tc.child_value("system-out"), "----- gold stdout -----\ngold says hi\n");
}

// The writer's input is what report_to_json makes of a real CompareReport: the two agree on every count.
TEST(JunitFromReportJson, CountsMatchTheJsonSummary) {
  Manifest gold, cand;
  CompareReport report = numpy_against_fsproxy(gold, cand);
  for (const std::string status : {"pass", "fail", "fail", "error", "xfail", "xpass", "skip", "skip", "skip"}) {
    ScenarioOutcome s;
    s.id = "mod.f" + std::to_string(report.scenarios.size());
    s.status = status;
    s.meta = {{"module", "mod"}, {"function", s.id.substr(4)}};
    report.scenarios.push_back(s);
  }
  const json doc = parity::report_to_json(report);
  const std::string xml = parity::report_to_junit(doc);
  EXPECT_EQ(schema_error(xml), "") << xml;
  pugi::xml_document parsed;
  ASSERT_TRUE(parsed.load_string(xml.c_str())) << xml;
  const pugi::xml_node suite = parsed.child("testsuites").child("testsuite");
  const json& summary = doc.at("summary");
  EXPECT_EQ(suite.attribute("tests").as_int(), summary.at("total").get<int>());
  EXPECT_EQ(suite.attribute("failures").as_int(), summary.at("fail").get<int>() + summary.at("xpass").get<int>());
  EXPECT_EQ(suite.attribute("errors").as_int(), summary.at("error").get<int>());
  EXPECT_EQ(suite.attribute("skipped").as_int(), summary.at("skip").get<int>() + summary.at("xfail").get<int>());
  EXPECT_EQ(suite.attribute("skipped").as_int(), 4);
  EXPECT_TRUE(suite.find_child_by_attribute("testcase", "name", "f8")) << xml;
}

}  // namespace
