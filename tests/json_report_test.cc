// Unit tests of the JSON compare report, built from real compare_runs results written to a temp directory.
#include "json_report.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <filesystem>
#include <map>
#include <string>

#include "codec.h"
#include "compare.h"
#include "manifest.h"
#include "test_support.h"

namespace py = pybind11;
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace parity;
using parity::testing::TempDir;

namespace {

class JsonReport : public ::testing::Test {
 protected:
  JsonReport() {
    gold_.dir = root_.path() / "gold";
    cand_.dir = root_.path() / "candidate";
    gold_.backend = {{"name", "numpy"}, {"spec", "numpy"}, {"version", "2.1.0"}, {"role", "gold"}};
    cand_.backend = {{"name", "fsproxy"}, {"spec", "fsproxy:Backend"}, {"version", "0.3.1"}, {"role", "candidate"}};
    gold_.environment = {{"python", "3.12.4"}, {"numpy", "2.1.0"}};
    cand_.environment = {{"python", "3.12.4"}, {"numpy", "2.1.0"}, {"platform", "Linux"}};
    gold_.complete = cand_.complete = true;
    for (Manifest* m : {&gold_, &cand_}) fs::create_directories(m->dir / kResultsSubdir);
  }

  void add(Manifest& m, const std::string& id, const std::string& status, const std::string& outputs = "",
           json error = nullptr) {
    ScenarioRecord r;
    r.id = id;
    r.status = status;
    r.error = std::move(error);
    r.meta = {{"module", "pkg.mod"},
              {"function", id.substr(8)},
              {"params", {{"n", 3}}},
              {"tags", {"fast"}},
              {"source", "scenarios/mod.py"}};
    if (!outputs.empty()) {
      py::dict scope;
      scope["np"] = py::module_::import("numpy");
      r.file = std::string(kResultsSubdir) + "/" + id + ".parity";
      write_result(m.dir / r.file, py::eval(outputs, scope));
    }
    m.scenarios.push_back(std::move(r));
  }

  void add_pair(const std::string& id, const std::string& gold, const std::string& cand) {
    add(gold_, id, "ok", gold);
    add(cand_, id, "ok", cand);
  }

  json report() {
    report_ = compare_runs(gold_, cand_, {});
    return report_to_json(report_);
  }

  static const json& scenario(const json& doc, const std::string& id) {
    for (const json& s : doc.at("scenarios"))
      if (s.at("id") == id) return s;
    throw std::runtime_error("no scenario " + id);
  }

  TempDir root_;
  Manifest gold_, cand_;
  CompareReport report_;
};

TEST_F(JsonReport, HeaderAndSummary) {
  add_pair("pkg.mod.test_pass", "{'a': np.arange(3.0)}", "{'a': np.arange(3.0)}");
  add_pair("pkg.mod.test_fail", "{'a': np.arange(3.0)}", "{'a': np.arange(1.0, 4.0)}");
  add_pair("pkg.mod.test_fail2", "1", "2");
  add(gold_, "pkg.mod.test_error", "ok", "1");
  add(cand_, "pkg.mod.test_error", "error", "", {{"type", "KeyError"}, {"message", "'k'"}, {"traceback", ""}});
  add(gold_, "pkg.mod.test_skip", "skip", "", {{"type", "Skipped"}, {"message", "needs scipy"}});
  add(cand_, "pkg.mod.test_skip", "skip", "", {{"type", "Skipped"}, {"message", "needs scipy"}});
  const json doc = report();
  EXPECT_EQ(doc.at("format"), "parity-compare");
  EXPECT_EQ(doc.at("version"), kReportJsonVersion);
  EXPECT_TRUE(doc.at("parity").is_string());

  // The summary agrees with the statuses listed scenario by scenario.
  std::map<std::string, int> listed;
  for (const json& s : doc.at("scenarios")) ++listed[s.at("status").get<std::string>()];
  const json& summary = doc.at("summary");
  EXPECT_EQ(summary.at("total"), 5);
  for (const char* status : {"pass", "fail", "error", "skip", "xfail", "xpass"}) {
    SCOPED_TRACE(status);
    EXPECT_EQ(summary.at(status).get<int>(), listed[status]);
  }
  EXPECT_EQ(summary.at("pass"), 1);
  EXPECT_EQ(summary.at("fail"), 2);
  EXPECT_EQ(summary.at("error"), 1);
  EXPECT_EQ(summary.at("skip"), 1);
  EXPECT_EQ(summary.at("xfail"), 0);
}

TEST_F(JsonReport, BackendInformationOfBothSides) {
  add_pair("pkg.mod.test_pass", "1", "1");
  const json doc = report();
  EXPECT_EQ(doc.at("gold").at("backend").at("name"), "numpy");
  EXPECT_EQ(doc.at("gold").at("backend").at("version"), "2.1.0");
  EXPECT_EQ(doc.at("candidate").at("backend").at("name"), "fsproxy");
  EXPECT_EQ(doc.at("candidate").at("backend").at("spec"), "fsproxy:Backend");
  EXPECT_EQ(doc.at("gold").at("dir"), gold_.dir.string());
  EXPECT_EQ(doc.at("candidate").at("dir"), cand_.dir.string());
  EXPECT_EQ(doc.at("candidate").at("environment").at("platform"), "Linux");
  EXPECT_EQ(doc.at("candidate").at("complete"), true);
}

TEST_F(JsonReport, ScenarioFieldsAndChecks) {
  add_pair("pkg.mod.test_fail", "{'a': np.arange(3.0)}", "{'a': np.array([0.0, 1.0, 9.0])}");
  const json doc = report();
  const json& s = scenario(doc, "pkg.mod.test_fail");
  EXPECT_EQ(s.at("status"), "fail");
  EXPECT_EQ(s.at("module"), "pkg.mod");
  EXPECT_EQ(s.at("function"), "test_fail");
  EXPECT_EQ(s.at("params"), json({{"n", 3}}));
  EXPECT_EQ(s.at("tags"), json({"fast"}));
  EXPECT_EQ(s.at("source"), "scenarios/mod.py");
  EXPECT_EQ(s.at("message"), "failed checks: values");
  EXPECT_NE(s.at("repro").get<std::string>().find("pkg.mod.test_fail"), std::string::npos);
  for (const char* side : {"gold", "candidate", "compare"}) EXPECT_TRUE(s.at("seconds").at(side).is_number()) << side;

  const json& checks = s.at("checks");
  ASSERT_FALSE(checks.empty());
  for (const json& c : checks) {
    for (const char* field : {"check", "ok", "path", "message", "details"}) EXPECT_TRUE(c.contains(field)) << field;
  }
  const json& values = checks.at(0);
  EXPECT_EQ(values.at("check"), "values");
  EXPECT_EQ(values.at("ok"), false);
  EXPECT_EQ(values.at("path"), "outputs['a']");
  EXPECT_NE(values.at("message").get<std::string>().find("Mismatched elements: 1 / 3"), std::string::npos);
  EXPECT_EQ(values.at("details").at("mismatched"), 1);
  EXPECT_DOUBLE_EQ(values.at("details").at("max_abs_diff").get<double>(), 7.0);
  // Passed checks are summarised with their leaf counts.
  bool shape_passed = false;
  for (const json& c : checks)
    if (c.at("check") == "shape" && c.at("ok") == true) shape_passed = c.at("details").at("leaves") == 1;
  EXPECT_TRUE(shape_passed) << checks.dump(1);
}

TEST_F(JsonReport, ErrorScenarioCarriesTheException) {
  add(gold_, "pkg.mod.test_error", "ok", "1");
  add(cand_, "pkg.mod.test_error", "error", "",
      {{"type", "ZeroDivisionError"}, {"message", "division by zero"}, {"traceback", "Traceback ..."}});
  const json doc = report();
  const json& s = scenario(doc, "pkg.mod.test_error");
  EXPECT_EQ(s.at("status"), "error");
  ASSERT_EQ(s.at("checks").size(), 1u);
  EXPECT_EQ(s.at("checks").at(0).at("check"), "error");
  EXPECT_EQ(s.at("checks").at(0).at("details").at("type"), "ZeroDivisionError");
}

TEST_F(JsonReport, SerializesDifferingBinaryOutputs) {
  // Bytes and strings with lone surrogates are legal outputs; the report must still serialize.
  add_pair("pkg.mod.test_bytes", "b'\\xff\\x00\\xfe'", "b'\\xfe'");
  add_pair("pkg.mod.test_surrogate", "'\\ud800'", "'x'");
  const json doc = report();
  EXPECT_EQ(scenario(doc, "pkg.mod.test_bytes").at("status"), "fail");
  EXPECT_EQ(scenario(doc, "pkg.mod.test_surrogate").at("status"), "fail");
  std::string text;
  ASSERT_NO_THROW(text = doc.dump(1));
  EXPECT_EQ(json::parse(text), doc);
}

TEST_F(JsonReport, SerializesDifferingLongNonAsciiStrings) {
  // A message that shortens a long string must not cut a multi-byte character in half.
  add_pair("pkg.mod.test_long", "'a' * 199 + '\u00e9' * 10", "'b'");
  const json doc = report();
  EXPECT_EQ(scenario(doc, "pkg.mod.test_long").at("status"), "fail");
  EXPECT_NO_THROW(doc.dump(1));
}

TEST_F(JsonReport, RoundTripsThroughText) {
  add_pair("pkg.mod.test_pass", "{'x': [1, 2.5, 'é']}", "{'x': [1, 2.5, 'é']}");
  const json doc = report();
  EXPECT_EQ(json::parse(doc.dump()), doc);
}

// compare's writer renders each scenario as it is decided (report_files.h): whatever prefix it has, the document is
// the one report_to_json renders from the outcomes alone; a prefix longer than the report is a caller's error.
TEST_F(JsonReport, ScenariosRenderedAheadMakeTheSameDocument) {
  add_pair("pkg.mod.test_pass", "{'a': np.arange(3.0)}", "{'a': np.arange(3.0)}");
  add_pair("pkg.mod.test_fail", "{'a': np.arange(3.0)}", "{'a': np.arange(1.0, 4.0)}");
  add(gold_, "pkg.mod.test_error", "ok", "1");
  add(cand_, "pkg.mod.test_error", "error", "", {{"type", "KeyError"}, {"message", "'k'"}, {"traceback", ""}});
  const json whole = report();
  for (std::size_t ahead = 0; ahead <= report_.scenarios.size(); ++ahead) {
    SCOPED_TRACE(ahead);
    json rendered = json::array();
    for (std::size_t i = 0; i < ahead; ++i) rendered.push_back(scenario_to_json(report_.scenarios[i]));
    EXPECT_EQ(report_to_json(report_, std::move(rendered)).dump(), whole.dump());
  }
  json too_many = json::array();
  for (std::size_t i = 0; i <= report_.scenarios.size(); ++i) too_many.push_back(json::object());
  EXPECT_THROW(report_to_json(report_, std::move(too_many)), std::logic_error);
}

}  // namespace
