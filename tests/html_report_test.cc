// Unit tests of the HTML report writer: what the page holds for a report, escaping, and bad reports.
#include "html_report.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "test_support.h"

using json = nlohmann::json;
using parity::report_to_html;
using parity::testing::contains;

namespace {

const char* const kHostile = "</script><script>alert('x')</script><!--<script> & \"quotes\"";

json side(const std::string& name, const std::string& version) {
  return {{"dir", "/tmp/" + name},
          {"backend", {{"name", name}, {"version", version}}},
          {"environment", {{"python", "3.11.2"}, {"numpy", "2.4.6"}, {"platform", "Linux-test"}}},
          {"run", {{"seconds", 1.5}}},
          {"complete", true}};
}

json check(const std::string& name, const std::string& path, const std::string& message, json details) {
  return {{"check", name}, {"ok", false}, {"path", path}, {"message", message}, {"details", std::move(details)}};
}

json scenario(const std::string& id, const std::string& status, json checks) {
  return {{"id", id},
          {"module", "mod"},
          {"function", id.substr(4)},
          {"params", json::object()},
          {"tags", {"numpy"}},
          {"status", status},
          {"message", status == "pass" ? "" : std::string("failed: ") + kHostile},
          {"checks", std::move(checks)},
          {"seconds", {{"gold", 0.25}, {"candidate", 0.5}, {"compare", 0.125}}},
          {"policy", nullptr},
          {"source", "/src/mod.py"},
          {"repro", "parity run --only " + id}};
}

json report() {
  json values = {{"criterion", "allclose"},
                 {"compared_as", "float64"},
                 {"rtol", 1e-7},
                 {"atol", 0.0},
                 {"mismatched", 3},
                 {"total", 8},
                 {"percent", 37.5},
                 {"max_abs_diff", 2.0},
                 {"max_abs_index", {1, 1}},
                 {"max_rel_diff", 1.0},
                 {"max_rel_index", {1, 0}},
                 {"first", {{{"index", {1, 0}}, {"gold", "1.0"}, {"candidate", "0.0"}, {"kind", "value"}}}},
                 {"first_nonfinite", json::array()},
                 {"map",
                  {{"grid", {2, 4}},
                   {"shape", {2, 4}},
                   {"counts", {0, 0, 0, 0, 1, 1, 1, 0}},
                   {"sizes", {1, 1, 1, 1, 1, 1, 1, 1}}}}};
  json table = {{"gold", {{"dtype", ">f8"}, {"strides", "(32, 8)"}}},
                {"candidate", {{"dtype", "<f8"}, {"strides", "(32, 8)"}}}};
  json error = {{"type", "RuntimeError"}, {"message", kHostile}, {"traceback", std::string("Traceback: ") + kHostile}};
  json scenarios = {
      scenario("mod.values", "fail", {check("values", "outputs['m']", "Not equal to tolerance", values)}),
      scenario("mod.dtype", "fail", {check("dtype", "outputs['be']", "dtype differs\n  table", {{"table", table}})}),
      scenario("mod.error", "error", {check("error", "candidate", "raised", error)}),
      scenario("mod.fine", "pass", json::array())};
  return {
      {"format", "parity-compare"},
      {"version", 1},
      {"parity", "0.1.0"},
      {"started", "2026-11-22T10:00:00Z"},
      {"seconds", 2.0},
      {"gold", side("gold", "2.4.6")},
      {"candidate", side("fsproxy", "0.3.1")},
      {"policy", {{"dtype", "exact"}, {"layout", "contiguity"}, {"type", "exact-or-mapped"}, {"writeable", "ignore"}}},
      {"summary", {{"total", 4}, {"pass", 1}, {"fail", 2}, {"error", 1}, {"xfail", 0}, {"xpass", 0}, {"skip", 0}}},
      {"scenarios", scenarios}};
}

TEST(HtmlReport, HeaderCarriesCountsBackendsAndEnvironment) {
  const std::string html = report_to_html(report());
  EXPECT_TRUE(contains(html, "<!DOCTYPE html>"));
  EXPECT_TRUE(contains(html, R"(id="count-total">4<)"));
  EXPECT_TRUE(contains(html, R"(id="count-fail">2<)"));
  EXPECT_TRUE(contains(html, R"(id="count-error">1<)"));
  EXPECT_TRUE(contains(html, "<b>fsproxy</b> 0.3.1"));
  EXPECT_TRUE(contains(html, "Python 3.11.2 · NumPy 2.4.6 · Linux-test"));
  EXPECT_TRUE(contains(html, R"(data-filter-check="values")"));
  // Every policy the report records, not a fixed three (issue #17 added writeable, scalar, order, index, names).
  EXPECT_TRUE(contains(html, "policy: dtype exact, layout contiguity, type exact-or-mapped, writeable ignore"));
}

TEST(HtmlReport, FailuresComeFirstAndEachHasItsDetails) {
  const std::string html = report_to_html(report());
  const auto first_fail = html.find(R"(data-id="mod.dtype")"), pass = html.find(R"(data-id="mod.fine")");
  ASSERT_NE(first_fail, std::string::npos);
  ASSERT_NE(pass, std::string::npos);
  EXPECT_LT(first_fail, pass);
  EXPECT_LT(html.find(R"(data-id="mod.error")"), pass);
  EXPECT_TRUE(contains(html, "3 / 8 (37.5%)"));
  EXPECT_TRUE(contains(html, R"(class="hit")")) << "the mismatch map has cells with mismatches";
  EXPECT_TRUE(contains(html, R"(<tr class="differs"><th>dtype</th>)"));
  EXPECT_TRUE(contains(html, R"(class="copy")"));
}

TEST(HtmlReport, AnInfiniteDifferenceWrittenAsNullShowsAsInf) {
  // JSON has no infinity: a relative difference against a zero gold reaches the report as null.
  json r = report();
  json& details = r["scenarios"][0]["checks"][0]["details"];
  details["max_rel_diff"] = nullptr;
  const std::string html = report_to_html(r);
  EXPECT_TRUE(contains(html, "<th>max relative difference</th><td>inf at")) << html.substr(0, 200);
  EXPECT_TRUE(contains(html, "<th>max absolute difference</th><td>2 at"));
}

TEST(HtmlReport, EscapesEveryValueItShows) {
  const std::string html = report_to_html(report());
  EXPECT_FALSE(contains(html, "<script>alert")) << "a message became markup";
  EXPECT_FALSE(contains(html, "<!--<script>"));
  EXPECT_TRUE(contains(html, "&lt;/script&gt;&lt;script&gt;alert("));
  // The only script elements are the page's own: its code and each failure's inert details.
  std::size_t opened = 0;
  for (auto at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++opened;
  std::size_t closed = 0;
  for (auto at = html.find("</script>"); at != std::string::npos; at = html.find("</script>", at + 1)) ++closed;
  EXPECT_EQ(opened, closed);
  EXPECT_EQ(opened, 1u + 3u);  // the page's code, and the details of the three scenarios that did not pass
}

// report() compared against two baselines: mod.values failing since the first, mod.error new, mod.fine fixed, and
// mod.dropped failing in the latest baseline but not compared now.
json report_with_trends() {
  json r = report();
  const json marks = {{"mod.values", {{"mark", "still-failing"}, {"since", "2026-11-20T10:00:00Z"}}},
                      {"mod.dtype", {{"mark", "still-failing"}, {"since", "2026-11-21T10:00:00Z"}}},
                      {"mod.error", {{"mark", "new"}, {"since", nullptr}}},
                      {"mod.fine", {{"mark", "fixed"}, {"since", nullptr}}}};
  for (json& s : r["scenarios"]) {
    s["trend"] = marks.at(s["id"].get<std::string>());
    s["trend"]["history"] = {"fail", s["id"] == "mod.error" ? "pass" : "fail", s["status"]};
  }
  r["baselines"] = json::array();
  for (const char* day : {"2026-11-20T10:00:00Z", "2026-11-21T10:00:00Z"})
    r["baselines"].push_back({{"file", std::string("/ci/") + day + ".json"},
                              {"started", day},
                              {"parity", "0.1.0"},
                              {"candidate", {{"name", "fsproxy"}, {"version", "0.2.9"}}},
                              {"summary", {{"total", 4}, {"fail", 3}, {"pass", 1}}}});
  r["gone"] = {
      {{"id", "mod.dropped"},
       {"trend", {{"mark", "gone"}, {"since", "2026-11-20T10:00:00Z"}, {"history", {"fail", "fail", "absent"}}}}}};
  r["trend_summary"] = {{"new", 1}, {"still_failing", 2}, {"fixed", 1}, {"gone", 1}};
  return r;
}

TEST(HtmlReport, TrendsShowBadgesHistoryCountsAndAFilter) {
  const std::string html = report_to_html(report_with_trends());
  EXPECT_TRUE(contains(html, R"(id="count-trend-new">1<)"));
  EXPECT_TRUE(contains(html, R"(id="count-trend-still-failing">2<)"));
  EXPECT_TRUE(contains(html, R"(id="count-trend-fixed">1<)"));
  EXPECT_TRUE(contains(html, R"(<select id="filter-trend">)"));
  EXPECT_TRUE(contains(html, R"(data-id="mod.error" data-status="error")"));
  EXPECT_TRUE(contains(html, R"(data-trend="new")"));
  EXPECT_TRUE(contains(html, R"(class="trend mark-new")"));
  EXPECT_TRUE(contains(html, ">still failing since 2026-11-20<"));
  EXPECT_TRUE(contains(html, ">fixed<"));
  EXPECT_TRUE(contains(html, R"(<span class="sq status-fail" title="2026-11-20T10:00:00Z: fail">)"));
  EXPECT_TRUE(contains(html, R"(<span class="sq status-pass" title="now, 2026-11-22T10:00:00Z: pass">)"));
  EXPECT_TRUE(contains(html, "<td>fsproxy 0.2.9</td>")) << "each baseline's candidate version";
  EXPECT_TRUE(contains(html, "<code>mod.dropped</code>")) << "a failure gone from this compare";
  EXPECT_TRUE(contains(html, R"(colspan="6")")) << "the history column widens the details";
}

TEST(HtmlReport, OneBaselineGivesMarksWithoutAHistoryAndNoBaselineNoTrends) {
  json one = report_with_trends();
  one["baselines"].erase(0);
  const std::string html = report_to_html(one);
  EXPECT_TRUE(contains(html, R"(class="trend mark-new")"));
  EXPECT_FALSE(contains(html, R"(class="sq )")) << "a history of two is no history";
  const std::string plain = report_to_html(report());
  EXPECT_FALSE(contains(plain, R"(id="filter-trend")"));
  EXPECT_FALSE(contains(plain, "data-trend="));
  EXPECT_FALSE(contains(plain, R"(class="trend )"));
}

TEST(HtmlReport, ReportsWithoutWhatThePageShowsAreRefusedNamingTheField) {
  json bad = report();
  bad.erase("gold");
  try {
    report_to_html(bad);
    FAIL() << "rendered a report without its gold side";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "'gold'")) << e.what();
  }
  bad = report();
  bad["scenarios"][1].erase("status");
  EXPECT_THROW(report_to_html(bad), std::runtime_error);
}

}  // namespace
