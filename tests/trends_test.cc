// Unit tests of the trends: marks, since and history against 0, 1 and 3 baselines, and the baselines refused.
#include "trends.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "test_support.h"

using json = nlohmann::json;
using namespace parity;
using parity::testing::contains;
using parity::testing::TempDir;

namespace {

using Statuses = std::vector<std::pair<std::string, std::string>>;  // (id, status), in report order

// A compare JSON of candidate `fsproxy` with just what trends read: when it started and each scenario's status.
json compare(const std::string& started, const Statuses& statuses, const std::string& version = "0.1.0") {
  json scenarios = json::array();
  json summary = {{"total", statuses.size()}};
  for (const auto& [id, status] : statuses) {
    scenarios.push_back({{"id", id}, {"status", status}, {"message", ""}, {"checks", json::array()}});
    summary[status] = summary.value(status, 0) + 1;
  }
  return {{"format", "parity-compare"},
          {"version", 1},
          {"parity", "0.1.0"},
          {"started", started},
          {"candidate", {{"backend", {{"name", "fsproxy"}, {"version", version}}}}},
          {"summary", summary},
          {"scenarios", scenarios}};
}

Baseline baseline(const std::string& file, const std::string& started, const Statuses& statuses) {
  return {file, compare(started, statuses)};
}

const json& trend(const json& report, const std::string& id) {
  for (const json& s : report.at("scenarios"))
    if (s.at("id") == id) return s.at("trend");
  throw std::runtime_error("no scenario " + id);
}

std::vector<std::string> history(const json& report, const std::string& id) {
  return trend(report, id).at("history").get<std::vector<std::string>>();
}

const char* const kDay1 = "2026-11-20T05:00:00Z";
const char* const kDay2 = "2026-11-21T05:00:00Z";
const char* const kDay3 = "2026-11-22T05:00:00Z";
const char* const kNow = "2026-11-23T05:00:00Z";

TEST(Trends, FailingStatusesAreFailErrorXpassAndMissing) {
  for (const char* status : {"fail", "error", "xpass", "missing"})
    EXPECT_TRUE(is_failing_trend_status(status)) << status;
  for (const char* status : {"pass", "xfail", "skip", "absent", ""})
    EXPECT_FALSE(is_failing_trend_status(status)) << status;
}

TEST(Trends, WithoutBaselinesTheReportIsLeftAsItIs) {
  json report = compare(kNow, {{"m.a", "fail"}, {"m.b", "pass"}});
  const json before = report;
  add_trends(report, {});
  EXPECT_EQ(report, before);
  EXPECT_EQ(trend_summary_text(report, false), "");
}

TEST(Trends, OneBaselineMarksNewStillFailingAndFixed) {
  json report = compare(kNow, {{"m.new", "fail"},
                               {"m.still", "error"},
                               {"m.fixed", "pass"},
                               {"m.declared", "xfail"},
                               {"m.skipped", "skip"},
                               {"m.fine", "pass"},
                               {"m.added", "xpass"}});
  add_trends(report, {baseline("day3.json", kDay3,
                               {{"m.new", "pass"},
                                {"m.still", "fail"},
                                {"m.fixed", "xpass"},
                                {"m.declared", "fail"},
                                {"m.skipped", "error"},
                                {"m.fine", "pass"}})});
  EXPECT_EQ(trend(report, "m.new"), json({{"mark", "new"}, {"since", nullptr}, {"history", {"pass", "fail"}}}));
  EXPECT_EQ(trend(report, "m.still"),
            json({{"mark", "still-failing"}, {"since", kDay3}, {"history", {"fail", "error"}}}));
  EXPECT_EQ(trend(report, "m.fixed").at("mark"), "fixed");
  EXPECT_EQ(trend(report, "m.declared").at("mark"), "fixed") << "a failure now declared expected no longer fails";
  EXPECT_EQ(trend(report, "m.skipped").at("mark"), nullptr) << "a skip proves nothing fixed";
  EXPECT_EQ(trend(report, "m.fine").at("mark"), nullptr);
  EXPECT_EQ(trend(report, "m.added"), json({{"mark", "new"}, {"since", nullptr}, {"history", {"absent", "xpass"}}}));
  EXPECT_EQ(report.at("trend_summary"), json({{"new", 2}, {"still_failing", 1}, {"fixed", 2}, {"gone", 0}}));
  EXPECT_EQ(report.at("gone"), json::array());
}

TEST(Trends, TheBaselinesAreListedWithTheirCandidateVersion) {
  json report = compare(kNow, {{"m.a", "fail"}});
  Baseline old = baseline("/ci/day1.json", kDay1, {{"m.a", "fail"}, {"m.b", "pass"}});
  old.report["candidate"]["backend"]["version"] = "0.0.9";
  add_trends(report, {old});
  EXPECT_EQ(report.at("baselines"),
            json::array(
                {{{"file", "/ci/day1.json"},
                  {"started", kDay1},
                  {"parity", "0.1.0"},
                  {"candidate", {{"name", "fsproxy"}, {"version", "0.0.9"}}},
                  {"summary",
                   {{"total", 2}, {"pass", 1}, {"fail", 1}, {"error", 0}, {"xfail", 0}, {"xpass", 0}, {"skip", 0}}}}}));
}

TEST(Trends, ABaselinesCountsAreItsScenariosNotTheSummaryItRecorded) {
  json report = compare(kNow, {{"m.a", "fail"}});
  Baseline old = baseline("/ci/day1.json", kDay1, {{"m.a", "fail"}, {"m.b", "error"}});
  old.report["summary"] = {{"total", 2}, {"pass", 2}};  // a report from elsewhere that says nothing failed
  add_trends(report, {old});
  const json counts = report.at("baselines").at(0).at("summary");
  EXPECT_EQ(counts.at("total"), 2);
  EXPECT_EQ(counts.at("fail"), 1);
  EXPECT_EQ(counts.at("error"), 1);
  EXPECT_EQ(counts.at("pass"), 0);
}

TEST(Trends, AFailureOfTheLatestBaselineNotComparedNowIsGone) {
  json report = compare(kNow, {{"m.kept", "fail"}});
  add_trends(report,
             {baseline("day2.json", kDay2, {{"m.dropped", "fail"}, {"m.passed", "pass"}}),
              baseline("day3.json", kDay3, {{"m.dropped", "error"}, {"m.kept", "fail"}, {"m.passed", "pass"}})});
  ASSERT_EQ(report.at("gone").size(), 1u) << "a scenario that passed and is not compared now is not worth a mark";
  EXPECT_EQ(report["gone"][0],
            json({{"id", "m.dropped"},
                  {"trend", {{"mark", "gone"}, {"since", kDay2}, {"history", {"fail", "error", "absent"}}}}}));
  EXPECT_EQ(trend(report, "m.kept").at("mark"), "still-failing");
  EXPECT_EQ(report.at("trend_summary").at("gone"), 1);
}

TEST(Trends, ThreeBaselinesAreOrderedByWhenTheyStartedAndSinceIsTheStartOfTheLatestRunOfFailures) {
  json report = compare(kNow, {{"m.always", "fail"},
                               {"m.relapsed", "fail"},
                               {"m.returned", "fail"},
                               {"m.flaky", "pass"},
                               {"m.recent", "fail"}});
  // Given newest first: the order on the command line does not matter.
  add_trends(report,
             {baseline("day3.json", kDay3,
                       {{"m.always", "fail"},
                        {"m.relapsed", "fail"},
                        {"m.returned", "fail"},
                        {"m.flaky", "fail"},
                        {"m.recent", "error"}}),
              baseline("day1.json", kDay1,
                       {{"m.always", "error"}, {"m.relapsed", "fail"}, {"m.returned", "fail"}, {"m.flaky", "fail"}}),
              baseline("day2.json", kDay2,
                       {{"m.always", "xpass"}, {"m.relapsed", "pass"}, {"m.flaky", "pass"}, {"m.recent", "fail"}})});
  ASSERT_EQ(report.at("baselines").size(), 3u);
  const std::vector<std::string> oldest_first = {kDay1, kDay2, kDay3};
  for (std::size_t i = 0; i < oldest_first.size(); ++i) EXPECT_EQ(report["baselines"][i]["started"], oldest_first[i]);
  EXPECT_EQ(history(report, "m.always"), (std::vector<std::string>{"error", "xpass", "fail", "fail"}));
  EXPECT_EQ(trend(report, "m.always").at("since"), kDay1);
  EXPECT_EQ(trend(report, "m.relapsed").at("since"), kDay3) << "a pass on day 2 ended the first run of failures";
  EXPECT_EQ(history(report, "m.returned"), (std::vector<std::string>{"fail", "absent", "fail", "fail"}));
  EXPECT_EQ(trend(report, "m.returned").at("since"), kDay3) << "a compare without it ended the first run";
  EXPECT_EQ(trend(report, "m.recent").at("since"), kDay2);
  EXPECT_EQ(history(report, "m.recent"), (std::vector<std::string>{"absent", "fail", "error", "fail"}));
  EXPECT_EQ(trend(report, "m.flaky").at("mark"), "fixed") << "the latest baseline decides, not the older ones";
  EXPECT_EQ(report.at("trend_summary"), json({{"new", 0}, {"still_failing", 4}, {"fixed", 1}, {"gone", 0}}));
}

TEST(Trends, OnlyTheLatestBaselineDecidesWhetherAFailureIsNew) {
  json report = compare(kNow, {{"m.back", "fail"}});
  add_trends(report,
             {baseline("day1.json", kDay1, {{"m.back", "fail"}}), baseline("day2.json", kDay2, {{"m.back", "pass"}}),
              baseline("day3.json", kDay3, {{"m.other", "pass"}})});
  EXPECT_EQ(trend(report, "m.back"),
            json({{"mark", "new"}, {"since", nullptr}, {"history", {"fail", "pass", "absent", "fail"}}}));
}

TEST(Trends, BaselinesThatStartedAtTheSameTimeKeepTheOrderGiven) {
  json report = compare(kNow, {{"m.a", "fail"}});
  add_trends(report,
             {baseline("first.json", kDay1, {{"m.a", "pass"}}), baseline("second.json", kDay1, {{"m.a", "fail"}})});
  EXPECT_EQ(report["baselines"][0]["file"], "first.json");
  EXPECT_EQ(trend(report, "m.a").at("mark"), "still-failing");
}

TEST(Trends, TrendsAddedAgainReplaceTheOldOnes) {
  json report = compare(kNow, {{"m.a", "fail"}});
  add_trends(report, {baseline("day1.json", kDay1, {{"m.a", "fail"}, {"m.gone", "fail"}}),
                      baseline("day2.json", kDay2, {{"m.a", "fail"}, {"m.gone", "fail"}})});
  add_trends(report, {baseline("day3.json", kDay3, {{"m.a", "pass"}})});
  EXPECT_EQ(report.at("baselines").size(), 1u);
  EXPECT_EQ(trend(report, "m.a"), json({{"mark", "new"}, {"since", nullptr}, {"history", {"pass", "fail"}}}));
  EXPECT_EQ(report.at("gone"), json::array());
  EXPECT_EQ(report.at("trend_summary").at("still_failing"), 0);
}

TEST(Trends, TheTerminalSummaryCountsTheMarksAndListsNewFailuresFirst) {
  json report = compare(kNow, {{"m.still", "fail"}, {"m.fixed", "pass"}, {"m.new_one", "error"}});
  add_trends(report, {baseline("day1.json", kDay1, {{"m.still", "fail"}, {"m.fixed", "fail"}, {"m.gone", "fail"}}),
                      baseline("day2.json", kDay2,
                               {{"m.still", "fail"}, {"m.fixed", "fail"}, {"m.new_one", "pass"}, {"m.gone", "fail"}})});
  EXPECT_EQ(trend_summary_text(report, true),
            "1 new failure, 1 still failing, 1 fixed, 1 gone (against 2 baselines, 2026-11-20T05:00:00Z to "
            "2026-11-21T05:00:00Z)\n");
  EXPECT_EQ(trend_summary_text(report, false),
            trend_summary_text(report, true) +
                "  m.new_one  new failure\n"
                "  m.still    still failing since 2026-11-20T05:00:00Z\n"
                "  m.fixed    fixed\n"
                "  m.gone     gone (failing since 2026-11-20T05:00:00Z, not in this compare)\n");
}

class Baselines : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_.path() / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // What read_baselines says about `file` as a baseline of a fsproxy compare started now; "" when it takes it.
  static std::string refusal(const std::string& file) {
    try {
      read_baselines({file}, "fsproxy", kNow);
      return "";
    } catch (const ReportJsonError& e) {
      return e.what();
    }
  }

  TempDir dir_;
};

TEST_F(Baselines, AnEarlierCompareOfTheSameCandidateIsReadInTheOrderGiven) {
  const std::string newer = write("newer.json", compare(kDay2, {{"m.a", "pass"}}, "0.2.0").dump());
  const std::string older = write("older.json", compare(kDay1, {{"m.a", "fail"}}, "0.1.0").dump());
  const std::vector<Baseline> read = read_baselines({newer, older}, "fsproxy", kNow);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].file, newer);
  EXPECT_EQ(read[1].report.at("started"), kDay1);
  EXPECT_EQ(read_baselines({}, "fsproxy", kNow).size(), 0u);
}

TEST_F(Baselines, WhatCannotServeIsRefusedNamingTheFile) {
  const std::string missing = (dir_.path() / "missing.json").string();
  EXPECT_TRUE(contains(refusal(missing), "baseline " + missing + ": cannot be read")) << refusal(missing);
  const std::string garbage = write("garbage.json", "{not json");
  EXPECT_TRUE(contains(refusal(garbage), "baseline " + garbage + ": not JSON")) << refusal(garbage);
  const std::string manifest = write("manifest.json", R"({"format": "parity-manifest", "version": 1})");
  EXPECT_TRUE(contains(refusal(manifest), "not a parity compare report")) << refusal(manifest);
  json unstarted = compare(kDay1, {});
  unstarted.erase("started");
  const std::string no_start = write("unstarted.json", unstarted.dump());
  EXPECT_TRUE(contains(refusal(no_start), no_start + ": has no \"started\" time")) << refusal(no_start);
  json statusless = compare(kDay1, {{"m.a", "pass"}});
  statusless["scenarios"][0].erase("status");
  const std::string no_status = write("statusless.json", statusless.dump());
  EXPECT_TRUE(contains(refusal(no_status), no_status + ": scenario 'm.a' has the status (none)")) << refusal(no_status);
}

TEST_F(Baselines, AnotherCandidateBackendIsRefusedAnotherVersionIsNot) {
  json masked = compare(kDay1, {{"m.a", "pass"}});
  masked["candidate"]["backend"]["name"] = "masked";
  const std::string other = write("masked.json", masked.dump());
  EXPECT_TRUE(contains(refusal(other), "baseline " + other + ": compares candidate backend 'masked', not 'fsproxy'"))
      << refusal(other);
  EXPECT_EQ(refusal(write("older.json", compare(kDay1, {{"m.a", "pass"}}, "0.0.1").dump())), "");
}

TEST_F(Baselines, ACompareThatStartedAfterThisOneIsRefused) {
  const std::string later = write("later.json", compare("2026-11-24T00:00:00Z", {}).dump());
  EXPECT_TRUE(contains(refusal(later), "started 2026-11-24T00:00:00Z, after this compare (2026-11-23T05:00:00Z)"))
      << refusal(later);
  EXPECT_EQ(refusal(write("same.json", compare(kNow, {}).dump())), "") << "one second holds more than one compare";
  EXPECT_NO_THROW(read_baselines({later}, "fsproxy", "")) << "no start time to check against";
}

}  // namespace
