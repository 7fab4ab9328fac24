// Unit tests of `parity merge` over compare JSONs made here: order, summary, sums, missing shards and refusals.
#include "merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "json_report.h"

using json = nlohmann::json;
using namespace parity;

namespace {

const std::vector<std::string> kIds = {"m.a", "m.b", "m.c", "m.d", "m.e", "n.f", "n.g"};

// The report `parity compare --shard` writes for shard `index` (0-based) of kIds in `total` shards, every scenario
// with `status`; `declared` explains one failed check of the scenarios whose status is xfail.
json shard_report(std::size_t index, std::size_t total, const std::string& status = "pass") {
  const ShardPlan plan{{index, total}, kIds, {}, ""};
  json scenarios = json::array();
  int explained = 0;
  for (const std::string& id : plan.ids()) {
    json checks = json::array();
    if (status == "xfail") checks.push_back({{"check", "layout"}, {"ok", false}, {"details", {{"difference", "d1"}}}});
    explained += status == "xfail";
    scenarios.push_back({{"id", id},
                         {"module", id.substr(0, 1)},
                         {"status", status},
                         {"message", ""},
                         {"checks", checks},
                         {"seconds", {{"gold", 1.0}, {"candidate", 1.0}, {"compare", 0.5}}},
                         {"repro", "r"}});
  }
  auto side = [&](const char* name, const char* version, const char* role) {
    return json{
        {"dir", std::string(name) + "-" + std::to_string(index + 1)},
        {"backend",
         {{"name", name}, {"version", version}, {"spec", name}, {"role", role}, {"differences", json::array()}}},
        {"environment", json::object()},
        {"run", {{"parity", "0.1.0"}, {"paths", {"scen"}}, {"seconds", 2.0}, {"shard", plan.to_json()}}},
        {"complete", true}};
  };
  return {{"format", "parity-compare"},
          {"version", kReportJsonVersion},
          {"parity", "0.1.0"},
          {"started", "2026-01-0" + std::to_string(3 - index % 3) + "T00:00:00Z"},
          {"seconds", 1.5},
          {"gold", side("gold", "2.0", "gold")},
          {"candidate", side("cand", "1.0", "candidate")},
          {"policy", {{"dtype", "exact"}, {"layout", "contiguity"}, {"type", "exact-or-mapped"}}},
          {"summary", json::object()},
          {"differences", {{{"id", "d1"}, {"checks_explained", explained}, {"scenarios_explained", explained}}}},
          {"strict_differences", false},
          {"scenarios", scenarios},
          {"shard", plan.to_json()}};
}

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> files;
  for (std::size_t i = 0; i < n; ++i) files.push_back("shard" + std::to_string(i + 1) + ".json");
  return files;
}

std::string merge_error(const std::vector<json>& reports) {
  try {
    merge_reports(reports, names(reports.size()), "parity");
  } catch (const MergeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no MergeError";
  return "";
}

std::vector<std::string> ids_of(const json& report) {
  std::vector<std::string> ids;
  for (const json& s : report.at("scenarios")) ids.push_back(s.at("id"));
  return ids;
}

TEST(MergeReports, AllShardsGiveTheUnshardedOrderAndSummary) {
  const json merged = merge_reports({shard_report(2, 3), shard_report(0, 3), shard_report(1, 3)}, names(3), "parity");
  EXPECT_EQ(ids_of(merged), kIds);
  EXPECT_EQ(merged.at("summary"),
            (json{{"total", 7}, {"pass", 7}, {"fail", 0}, {"error", 0}, {"xfail", 0}, {"xpass", 0}, {"skip", 0}}));
  EXPECT_DOUBLE_EQ(merged.at("seconds").get<double>(), 4.5);  // summed
  EXPECT_EQ(merged.at("started"), "2026-01-01T00:00:00Z");    // the earliest
  EXPECT_DOUBLE_EQ(merged.at("/gold/run/seconds"_json_pointer).get<double>(), 6.0);
  EXPECT_FALSE(merged.at("/gold/run"_json_pointer).contains("shard"));
  EXPECT_FALSE(merged.contains("shard"));
  EXPECT_EQ(merged.at("/merged/missing"_json_pointer), json::array());
  EXPECT_FALSE(merged_report_failed(merged));
}

TEST(MergeReports, ExplainedCountsAreSummedSoADeclarationUsedInOneShardIsNotStale) {
  json used = shard_report(0, 2, "xfail"), unused = shard_report(1, 2), unused_elsewhere = shard_report(0, 2);
  for (json* report : {&used, &unused, &unused_elsewhere}) (*report)["strict_differences"] = true;
  const json merged = merge_reports({used, unused}, names(2), "parity");
  const int n = static_cast<int>(ShardPlan({{0, 2}, kIds, {}, ""}).ids().size());
  EXPECT_EQ(merged.at("/differences/0/checks_explained"_json_pointer), n);
  EXPECT_EQ(merged.at("/differences/0/scenarios_explained"_json_pointer), n);
  EXPECT_FALSE(merged_report_failed(merged));  // strict, but not stale once merged
  EXPECT_TRUE(merged_report_failed(merge_reports({unused_elsewhere, unused}, names(2), "parity")));
}

TEST(MergeReports, OneFailingShardFailsTheMerge) {
  const json merged = merge_reports({shard_report(0, 2, "error"), shard_report(1, 2, "xfail")}, names(2), "parity");
  EXPECT_GT(merged.at("/summary/error"_json_pointer).get<int>(), 0);
  EXPECT_TRUE(merged_report_failed(merged));
}

TEST(MergeReports, AShardNotGivenMakesItsScenariosMissingFailures) {
  const json merged = merge_reports({shard_report(0, 3), shard_report(2, 3)}, names(2), "parity");
  EXPECT_EQ(ids_of(merged), kIds);  // at their places in the full order
  const std::vector<std::string> lost = ShardPlan({{1, 3}, kIds, {}, ""}).ids();
  EXPECT_EQ(merged.at("/merged/missing/0/scenarios"_json_pointer), json(lost));
  EXPECT_EQ(merged.at("/merged/missing/0/index"_json_pointer), 2);
  EXPECT_EQ(merged.at("/merged/missing"_json_pointer).size(), 1u);
  EXPECT_EQ(merged.at("/summary/fail"_json_pointer), lost.size());
  for (const json& s : merged.at("scenarios")) {
    if (std::find(lost.begin(), lost.end(), s.at("id")) == lost.end()) continue;
    EXPECT_EQ(s.at("status"), "fail");
    const std::string message = s.at("/checks/0/message"_json_pointer);
    EXPECT_EQ(s.at("/checks/0/check"_json_pointer), "missing");
    EXPECT_NE(message.find("(shard 2/3 should have it): no report of shard 2/3 was given"), std::string::npos)
        << message;
    // The rerun, the scenario's repro (no message carries it): both sharded runs of shard 2, then its compare.
    const std::string repro = s.at("repro");
    EXPECT_EQ(message.find("Repro"), std::string::npos) << message;
    EXPECT_NE(repro.find("parity run --backend gold --scenarios scen --shard 2/3 --out gold-shard-2"),
              std::string::npos)
        << repro;
    EXPECT_NE(repro.find("parity compare gold-shard-2 candidate-shard-2 --shard 2/3"), std::string::npos) << repro;
  }
  EXPECT_TRUE(merged_report_failed(merged));
}

TEST(MergeReports, AShardReportLackingAScenarioNamesIt) {
  json short_one = shard_report(1, 2);
  const std::string lost = short_one["scenarios"].back()["id"];
  short_one["scenarios"].erase(short_one["scenarios"].size() - 1);
  const json merged = merge_reports({shard_report(0, 2), short_one}, names(2), "parity");
  EXPECT_EQ(merged.at("/merged/missing/0/scenarios"_json_pointer), json::array({lost}));
  for (const json& s : merged.at("scenarios")) {
    if (s.at("id") != lost) continue;
    EXPECT_NE(
        s.at("/checks/0/message"_json_pointer).get<std::string>().find("shard2.json holds shard 2/2 without them"),
        std::string::npos);
  }
}

TEST(MergeReports, RefusesShardsOfDifferentCompares) {
  json other_version = shard_report(1, 2);
  other_version["candidate"]["backend"]["version"] = "1.1";
  EXPECT_NE(merge_error({shard_report(0, 2), other_version})
                .find("shard1.json and shard2.json disagree on the candidate backend's version (\"1.0\" vs \"1.1\")"),
            std::string::npos);
  json other_backend = shard_report(1, 2);
  other_backend["gold"]["backend"]["name"] = "numpy";
  EXPECT_NE(merge_error({shard_report(0, 2), other_backend}).find("disagree on the gold backend "), std::string::npos);
  json other_parity = shard_report(1, 2);
  other_parity["parity"] = "0.2.0";
  EXPECT_NE(merge_error({shard_report(0, 2), other_parity}).find("disagree on the parity version"), std::string::npos);
  json other_policy = shard_report(1, 2);
  other_policy["policy"]["dtype"] = "kind";
  EXPECT_NE(merge_error({shard_report(0, 2), other_policy}).find("disagree on the compare policies"),
            std::string::npos);
  json other_set = shard_report(1, 2);
  other_set["shard"]["scenarios"].push_back("z.extra");
  const std::string set = merge_error({shard_report(0, 2), other_set});
  EXPECT_NE(set.find("disagree on the scenario set (7 vs 8 entries, the first difference at #8: none vs \"z.extra\")"),
            std::string::npos)
      << set;
}

TEST(MergeReports, RefusesOneShardTwiceAndOneScenarioInTwoShards) {
  EXPECT_NE(merge_error({shard_report(1, 2), shard_report(1, 2)})
                .find("shard1.json and shard2.json are both shard 2/2: give each shard once"),
            std::string::npos);
  json claims = shard_report(1, 2);
  claims["scenarios"].push_back(shard_report(0, 2)["scenarios"][0]);
  EXPECT_NE(merge_error({shard_report(0, 2), claims}).find("shard1.json and shard2.json both hold scenario"),
            std::string::npos);
}

TEST(MergeReports, RefusesAnUnshardedReport) {
  json whole = shard_report(0, 1);
  whole.erase("shard");
  EXPECT_NE(merge_error({whole}).find("shard1.json: not the report of one shard"), std::string::npos);
  EXPECT_NE(merge_error({}).find("nothing to merge"), std::string::npos);
}

}  // namespace
