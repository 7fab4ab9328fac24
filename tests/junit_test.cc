// Unit tests of the JUnit XML report and of xml_safe, checked by parsing the output with pugixml and expat.
#include "junit.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <pugixml.hpp>
#include <random>
#include <string>
#include <vector>

#include "compare.h"

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

class JunitReport : public ::testing::Test {
 protected:
  JunitReport() {
    gold_.backend = {{"name", "numpy"}, {"spec", "numpy"}, {"version", "2.1.0"}};
    cand_.backend = {{"name", "fsproxy"}, {"spec", "fsproxy"}, {"version", "0.3.1"}};
    cand_.environment = {{"python", "3.12.4"}, {"numpy", "2.1.0"}, {"platform", "Linux-x86_64"}};
    report_.gold = &gold_;
    report_.candidate = &cand_;
    report_.started = "2024-05-01T12:00:00Z";
    report_.seconds = 3.5;
  }

  ScenarioOutcome& add(const std::string& module, const std::string& name, const std::string& status,
                       const std::string& message = "") {
    ScenarioOutcome s;
    s.id = module.empty() ? name : module + "." + name;
    s.status = status;
    s.message = message;
    s.meta = module.empty() ? json::object() : json{{"module", module}, {"function", name}};
    s.gold_seconds = 0.5, s.candidate_seconds = 0.25, s.compare_seconds = 0.125;
    s.repro = "parity run --only " + s.id;
    if (status == "fail") s.checks.push_back({"values", false, "outputs['a']", "Mismatched elements: 1 / 4", {}});
    if (status == "error")
      s.checks.push_back({"error", false, "candidate", "the candidate run raised KeyError: 'x'", {}});
    s.checks.push_back({"type", true, "outputs", "", {{"leaves", 3}}});
    report_.scenarios.push_back(s);
    return report_.scenarios.back();
  }

  void add_every_status() {
    add("pkg.mod", "test_pass", "pass");
    add("pkg.mod", "test_fail[n=3]", "fail", "failed checks: values");
    add("pkg.other", "test_error", "error", "the candidate run raised KeyError: 'x'");
    add("pkg.other", "test_skip", "skip", "gold: needs scipy");
    add("pkg.mod", "test_xfail", "xfail", "candidate expected failure: not yet");
    add("pkg.mod", "test_xpass", "xpass", "the compare pass was expected to fail (r) but passed");
  }

  // Parses the report, failing the test when either parser refuses it.
  pugi::xml_node parse() {
    xml_ = parity::report_to_junit(report_);
    const pugi::xml_parse_result r = doc_.load_string(xml_.c_str());
    EXPECT_TRUE(r) << r.description() << "\n" << xml_;
    const std::string expat = expat_error(xml_);
    EXPECT_EQ(expat, "") << xml_;
    return doc_.child("testsuites").child("testsuite");
  }

  static pugi::xml_node testcase(pugi::xml_node suite, const std::string& name) {
    return suite.find_child_by_attribute("testcase", "name", name.c_str());
  }

  Manifest gold_, cand_;
  CompareReport report_;
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
  EXPECT_DOUBLE_EQ(suite.attribute("time").as_double(), 3.5);
  EXPECT_STREQ(suite.attribute("timestamp").value(), "2024-05-01T12:00:00Z");
  EXPECT_EQ(std::distance(suite.children("testcase").begin(), suite.children("testcase").end()), 6);
}

TEST_F(JunitReport, EmptyReportIsAValidSuite) {
  const pugi::xml_node suite = parse();
  ASSERT_TRUE(suite);
  EXPECT_EQ(suite.attribute("tests").as_int(), 0);
  EXPECT_EQ(suite.attribute("failures").as_int(), 0);
  EXPECT_FALSE(suite.child("testcase"));
}

TEST_F(JunitReport, ClassnameIsTheModuleAndNameTheRest) {
  add_every_status();
  add("", "lonely", "pass");  // no module in meta: the id is both
  const pugi::xml_node suite = parse();
  const pugi::xml_node fail = testcase(suite, "test_fail[n=3]");
  ASSERT_TRUE(fail) << xml_;
  EXPECT_STREQ(fail.attribute("classname").value(), "pkg.mod");
  EXPECT_STREQ(testcase(suite, "test_error").attribute("classname").value(), "pkg.other");
  EXPECT_NEAR(fail.attribute("time").as_double(), 0.875, 1e-6);
  const pugi::xml_node lonely = testcase(suite, "lonely");
  ASSERT_TRUE(lonely) << xml_;
  EXPECT_STREQ(lonely.attribute("classname").value(), "lonely");
}

TEST_F(JunitReport, EachStatusGetsItsElement) {
  add_every_status();
  const pugi::xml_node suite = parse();
  const pugi::xml_node pass = testcase(suite, "test_pass");
  ASSERT_TRUE(pass);
  EXPECT_FALSE(pass.first_child()) << "a pass has no child elements";

  const pugi::xml_node failure = testcase(suite, "test_fail[n=3]").child("failure");
  ASSERT_TRUE(failure) << xml_;
  EXPECT_STREQ(failure.attribute("type").value(), "fail");
  EXPECT_STREQ(failure.attribute("message").value(), "failed checks: values");
  const std::string body = failure.text().get();
  EXPECT_NE(body.find("[values] outputs['a']: Mismatched elements: 1 / 4"), std::string::npos) << body;
  EXPECT_NE(body.find("Repro: parity run --only pkg.mod.test_fail[n=3]"), std::string::npos) << body;
  EXPECT_EQ(body.find("[type]"), std::string::npos) << "passed checks are not failures: " << body;

  const pugi::xml_node xpass = testcase(suite, "test_xpass").child("failure");
  ASSERT_TRUE(xpass) << xml_;
  EXPECT_STREQ(xpass.attribute("type").value(), "xpass");

  const pugi::xml_node error = testcase(suite, "test_error").child("error");
  ASSERT_TRUE(error) << xml_;
  EXPECT_NE(std::string(error.text().get()).find("KeyError"), std::string::npos);
  EXPECT_FALSE(testcase(suite, "test_error").child("failure"));

  for (const char* name : {"test_skip", "test_xfail"}) {
    SCOPED_TRACE(name);
    const pugi::xml_node tc = testcase(suite, name);
    ASSERT_TRUE(tc.child("skipped")) << xml_;
    EXPECT_FALSE(tc.child("failure"));
    EXPECT_FALSE(tc.child("error"));
  }
  EXPECT_STREQ(testcase(suite, "test_skip").child("skipped").attribute("message").value(), "gold: needs scipy");
}

TEST_F(JunitReport, PropertiesNameBackendsAndVersions) {
  add("m", "f", "pass");
  const pugi::xml_node props = parse().child("properties");
  ASSERT_TRUE(props) << xml_;
  auto property = [&](const char* name) {
    return std::string(props.find_child_by_attribute("property", "name", name).attribute("value").value());
  };
  EXPECT_EQ(property("gold.backend"), "numpy");
  EXPECT_EQ(property("gold.version"), "2.1.0");
  EXPECT_EQ(property("candidate.backend"), "fsproxy");
  EXPECT_EQ(property("candidate.version"), "0.3.1");
  EXPECT_EQ(property("python"), "3.12.4");
  EXPECT_EQ(property("platform"), "Linux-x86_64");
}

TEST_F(JunitReport, HostileTextStillParses) {
  const std::string hostile = "a <b> & \"c\" 'd' \x01\x1b[0m ]]> \xed\xa0\x80 \xff end";
  ScenarioOutcome& s = add("m", "test_<&>", "fail", hostile);
  s.checks.front().message = hostile;
  s.checks.front().path = "outputs['<&>']";
  add("m", "test_err", "error", hostile);
  const pugi::xml_node suite = parse();
  const pugi::xml_node failure = testcase(suite, "test_<&>").child("failure");
  ASSERT_TRUE(failure) << xml_;
  const std::string message = failure.attribute("message").value();
  EXPECT_NE(message.find("a <b> & \"c\" 'd' "), std::string::npos) << message;
  EXPECT_NE(message.find(" end"), std::string::npos) << message;
  EXPECT_EQ(message.find('\x01'), std::string::npos);
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
  EXPECT_GE(count(message, kReplacement), 3u);
  EXPECT_NE(std::string(failure.text().get()).find("outputs['<&>']: a <b> &"), std::string::npos);
}

TEST_F(JunitReport, MalformedUtf8StillParses) {
  // Differing bytes outputs put raw bytes into messages: overlong forms and values past U+10FFFF included.
  const std::string garbage = "gold '\xc0\x80' candidate '\xf5\x80\x80\x80' and '\xe0\x80\xaf'";
  ScenarioOutcome& s = add("m", "test_bytes", "fail", garbage);
  s.checks.front().message = garbage;
  const pugi::xml_node suite = parse();
  EXPECT_TRUE(testcase(suite, "test_bytes").child("failure")) << xml_;
}

}  // namespace
