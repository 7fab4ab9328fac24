// Unit tests of sharding: --shard and GTEST_* parsing, the partition (each id once, balanced, deterministic), the
// times file, the recorded plan and how compare picks its shard.
#include "shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"

using json = nlohmann::json;
using namespace parity;
using parity::testing::TempDir;

namespace {

// The message of the ShardError `fn` throws; fails the test when it throws none.
template <typename Fn>
std::string shard_error(Fn fn) {
  try {
    fn();
  } catch (const ShardError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ShardError";
  return "";
}

std::vector<std::string> make_ids(std::size_t n) {
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < n; ++i) ids.push_back("mod" + std::to_string(i % 4) + ".f[n=" + std::to_string(i) + "]");
  return ids;
}

// Every shard's ids of a partition of `ids`, by index.
std::vector<std::vector<std::string>> all_shards(const std::vector<std::string>& ids, std::size_t total,
                                                 const ShardTimes& times = {}) {
  std::vector<std::vector<std::string>> shards;
  for (std::size_t k = 0; k < total; ++k) shards.push_back(ShardPlan{{k, total}, ids, times, ""}.ids());
  return shards;
}

double load(const std::vector<std::string>& ids, const ShardTimes& times) {
  double sum = 0;
  for (const std::string& id : ids) sum += times.at(id);
  return sum;
}

TEST(ShardFlag, ParsesOneBasedIOfN) {
  const Shard s = parse_shard_flag("2/3");
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.total, 3u);
  EXPECT_EQ(s.text(), "2/3");
  EXPECT_EQ(parse_shard_flag("1/1").index, 0u);
  EXPECT_EQ(parse_shard_flag("12/12").index, 11u);
}

TEST(ShardFlag, RefusesBadValuesNamingTheFlag) {
  for (const char* bad : {"", "3", "/3", "2/", "0/3", "4/3", "1/0", "0/0", "a/b", "2/3x", " 2/3", "-1/3", "2//3",
                          "2/-3", "1.5/3", "99999999999999999999999/3"}) {
    const std::string message = shard_error([&] { parse_shard_flag(bad); });
    EXPECT_NE(message.find("--shard '" + std::string(bad) + "'"), std::string::npos) << bad << ": " << message;
  }
}

// A fake environment for shard_from_environment.
struct Env {
  std::map<std::string, std::string> vars;
  std::optional<Shard> shard() const {
    return shard_from_environment([this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    });
  }
};

TEST(ShardEnvironment, NoneSetIsNoShard) {
  EXPECT_FALSE(Env{}.shard());
  EXPECT_FALSE((Env{{{"GTEST_TOTAL_SHARDS", ""}, {"GTEST_SHARD_INDEX", ""}}}.shard()));  // empty: switched off
}

TEST(ShardEnvironment, IndexIsZeroBasedAsGoogleTestDefinesIt) {
  const auto s = Env{{{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "0"}}}.shard();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 0u);
  EXPECT_EQ(s->total, 3u);
  EXPECT_EQ(s->text(), "1/3");
  EXPECT_EQ((Env{{{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "2"}}}.shard()->text()), "3/3");
}

TEST(ShardEnvironment, OnlyOneVariableNamesTheMissingOne) {
  const std::string no_index = shard_error([] { Env{{{"GTEST_TOTAL_SHARDS", "3"}}}.shard(); });
  EXPECT_NE(no_index.find("GTEST_TOTAL_SHARDS is set but GTEST_SHARD_INDEX is not"), std::string::npos) << no_index;
  const std::string no_total = shard_error([] { Env{{{"GTEST_SHARD_INDEX", "1"}}}.shard(); });
  EXPECT_NE(no_total.find("GTEST_SHARD_INDEX is set but GTEST_TOTAL_SHARDS is not"), std::string::npos) << no_total;
}

TEST(ShardEnvironment, BadValuesNameTheVariable) {
  for (const char* total : {"0", "x", "-2", "3 "}) {
    const std::string m = shard_error([&] {
      Env{{{"GTEST_TOTAL_SHARDS", total}, {"GTEST_SHARD_INDEX", "0"}}}.shard();
    });
    EXPECT_NE(m.find("GTEST_TOTAL_SHARDS='" + std::string(total) + "'"), std::string::npos) << m;
  }
  for (const char* index : {"3", "7", "x", "-1"}) {
    const std::string m = shard_error([&] {
      Env{{{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", index}}}.shard();
    });
    EXPECT_NE(m.find("GTEST_SHARD_INDEX='" + std::string(index) + "'"), std::string::npos) << m;
  }
}

TEST(ShardRequest, TimesWithoutAShardAreRefused) {
  const std::string m = shard_error([] { resolve_shard_request({"", "times.json"}); });
  EXPECT_NE(m.find("--shard-times needs a shard"), std::string::npos) << m;
}

TEST(Partition, EveryIdInExactlyOneShard) {
  std::mt19937 rng(7);
  for (std::size_t n : {0u, 1u, 2u, 5u, 17u, 100u, 289u})
    for (std::size_t total : {1u, 2u, 3u, 4u, 7u, 300u}) {
      const std::vector<std::string> ids = make_ids(n);
      ShardTimes times;
      for (std::size_t i = 0; i < n; i += 2) times[ids[i]] = std::uniform_real_distribution<double>(0, 5)(rng);
      for (const ShardTimes& t : {ShardTimes{}, times}) {
        std::multiset<std::string> seen;
        for (const auto& shard : all_shards(ids, total, t)) seen.insert(shard.begin(), shard.end());
        EXPECT_EQ(seen, std::multiset<std::string>(ids.begin(), ids.end())) << n << " ids in " << total << " shards";
      }
    }
}

TEST(Partition, WithoutTimesBalancedByCount) {
  for (std::size_t total : {2u, 3u, 5u}) {
    std::size_t smallest = SIZE_MAX, largest = 0;
    for (const auto& shard : all_shards(make_ids(289), total)) {
      smallest = std::min(smallest, shard.size());
      largest = std::max(largest, shard.size());
    }
    EXPECT_LE(largest - smallest, 1u) << total << " shards";
  }
}

TEST(Partition, BalancedByTimes) {
  // One slow scenario is a shard's whole load; by count it would share a shard with five others.
  std::vector<std::string> ids = {"slow"};
  ShardTimes times = {{"slow", 100.0}};
  for (int i = 0; i < 10; ++i) ids.push_back("fast" + std::to_string(i)), times[ids.back()] = 1.0;
  const auto shards = all_shards(ids, 2, times);
  const auto& with_slow =
      std::find(shards[0].begin(), shards[0].end(), "slow") != shards[0].end() ? shards[0] : shards[1];
  EXPECT_EQ(with_slow, std::vector<std::string>{"slow"});

  // The greedy's bound: no shard exceeds another by more than the longest scenario.
  std::mt19937 rng(11);
  const std::vector<std::string> many = make_ids(200);
  ShardTimes random_times;
  for (const std::string& id : many) random_times[id] = std::exponential_distribution<double>(1.0)(rng);
  double longest = 0;
  for (const auto& [id, t] : random_times) longest = std::max(longest, t);
  std::vector<double> loads;
  for (const auto& shard : all_shards(many, 4, random_times)) loads.push_back(load(shard, random_times));
  EXPECT_LE(*std::max_element(loads.begin(), loads.end()) - *std::min_element(loads.begin(), loads.end()), longest);
}

TEST(Partition, LongestFirstOntoTheLeastLoaded) {
  const ShardTimes times = {{"a", 5}, {"b", 4}, {"c", 3}, {"d", 3}, {"e", 3}};
  // a -> 0 (5 | 0), b -> 1 (5 | 4), c -> 1 (5 | 7), d -> 0 (8 | 7), e -> 1 (8 | 10); ties of time go in id order.
  EXPECT_EQ(assign_shards({"a", "b", "c", "d", "e"}, 2, times), (std::vector<std::size_t>{0, 1, 1, 0, 1}));
}

TEST(Partition, UnknownIdsWeighTheMeanKnownTime) {
  // Known among the ids: a 10, b 10, c 1 (mean 7; "not-selected" does not count). u weighs 7: a -> 0, b -> 1,
  // u -> 0 (equal loads and counts: the lower index), c -> 1. Weighing 1 (after c in id order), u would go to 1 and
  // c to 0; weighing the mean of every time in the file (255), u would go first, to 0, and a, b, c to 1.
  const ShardTimes times = {{"a", 10}, {"b", 10}, {"c", 1}, {"not-selected", 1000}};
  EXPECT_EQ(assign_shards({"a", "b", "c", "u"}, 2, times), (std::vector<std::size_t>{0, 1, 1, 0}));
}

TEST(Partition, ZeroTimesWeighTheMeanInsteadOfPilingOntoOneShard) {
  // A merged report gives its missing scenarios 0 s; weighed as 0 they would all go to the least-loaded shard.
  ShardTimes times;
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back("t" + std::to_string(i)), times[ids.back()] = 1.0 + i;
  for (int i = 0; i < 9; ++i) ids.push_back("z" + std::to_string(i)), times[ids.back()] = 0.0;
  const std::vector<std::size_t> shard = assign_shards(ids, 3, times);
  std::vector<int> zeros(3, 0);
  for (std::size_t i = 20; i < ids.size(); ++i) ++zeros[shard[i]];
  EXPECT_EQ(zeros, (std::vector<int>{3, 3, 3}));
}

TEST(Partition, DeterministicWhateverTheInputOrder) {
  std::vector<std::string> ids = make_ids(60);
  ShardTimes times;
  for (std::size_t i = 0; i < ids.size(); i += 3) times[ids[i]] = static_cast<double>(i % 7);
  std::map<std::string, std::size_t> first;
  const auto assigned = assign_shards(ids, 3, times);
  for (std::size_t i = 0; i < ids.size(); ++i) first[ids[i]] = assigned[i];
  std::mt19937 rng(3);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(ids.begin(), ids.end(), rng);
    const auto again = assign_shards(ids, 3, times);
    for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(again[i], first.at(ids[i])) << ids[i];
  }
}

TEST(Partition, ShardIdsKeepTheListOrder) {
  const std::vector<std::string> ids = {"z", "a", "m", "b", "y", "c"};
  for (const auto& shard : all_shards(ids, 2)) {
    std::vector<std::string> in_list_order;
    for (const std::string& id : ids)
      if (std::find(shard.begin(), shard.end(), id) != shard.end()) in_list_order.push_back(id);
    EXPECT_EQ(shard, in_list_order);
  }
}

TEST(ShardPlan, JsonRoundTripIsOneBasedAndKeepsOnlySelectedTimes) {
  const ShardRequest request{{1, 3}, {{"a", 2.5}, {"elsewhere", 9.0}}, "prev/manifest.json"};
  const ShardPlan plan = ShardPlan::make(request, {"a", "b", "c", "d"});
  EXPECT_EQ(plan.times, (ShardTimes{{"a", 2.5}}));
  const json doc = plan.to_json();
  EXPECT_EQ(doc.at("index"), 2);
  EXPECT_EQ(doc.at("total"), 3);
  EXPECT_EQ(doc.at("times_from"), "prev/manifest.json");
  const ShardPlan back = ShardPlan::from_json(json::parse(doc.dump()), "x");
  EXPECT_TRUE(back.same_partition(plan));
  EXPECT_EQ(back.shard.index, 1u);
  EXPECT_EQ(back.ids(), plan.ids());
}

TEST(ShardPlan, MalformedRecordNamesTheSource) {
  for (const json& bad : {json{{"index", 0}, {"total", 3}, {"scenarios", json::array()}},
                          json{{"index", 4}, {"total", 3}, {"scenarios", json::array()}},
                          json{{"index", 1}, {"total", 3}, {"scenarios", "a"}}, json("shard")}) {
    const std::string m = shard_error([&] { ShardPlan::from_json(bad, "dir/manifest.json"); });
    EXPECT_NE(m.find("dir/manifest.json: malformed shard record"), std::string::npos) << m;
  }
  // An id twice in the plan had merge fail with only "map::at" (and leave a half-written --out directory).
  const std::string m = shard_error([&] {
    ShardPlan::from_json(json::parse(R"({"index": 1, "total": 2, "scenarios": ["m.a", "m.b", "m.a"]})"),
                         "dir/manifest.json");
  });
  EXPECT_NE(m.find("dir/manifest.json: malformed shard record: scenario m.a is listed twice"), std::string::npos) << m;
}

class ShardTimesFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const json& doc) {
    const auto file = dir_.path() / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << doc.dump();
    return file;
  }
  TempDir dir_;
};

TEST_F(ShardTimesFile, ReadsAManifestByDirectoryOrFile) {
  const json manifest = {{"format", "parity-manifest"},
                         {"version", 1},
                         {"scenarios", {{{"id", "a"}, {"seconds", 1.5}}, {{"id", "b"}, {"seconds", 0.25}}}}};
  const auto file = write("run/manifest.json", manifest);
  EXPECT_EQ(load_shard_times(file), (ShardTimes{{"a", 1.5}, {"b", 0.25}}));
  EXPECT_EQ(load_shard_times(file.parent_path()), (ShardTimes{{"a", 1.5}, {"b", 0.25}}));
}

TEST_F(ShardTimesFile, ReadsACompareJsonAsTheWholePipelinesTime) {
  const json report = {
      {"format", "parity-compare"},
      {"version", 1},
      {"scenarios", {{{"id", "a"}, {"seconds", {{"gold", 1.0}, {"candidate", 2.0}, {"compare", 0.5}}}}}}};
  EXPECT_EQ(load_shard_times(write("r.json", report)), (ShardTimes{{"a", 3.5}}));
}

TEST_F(ShardTimesFile, RefusesOtherFilesNamingTheFlag) {
  const auto other = write("other.json", json{{"format", "something"}});
  EXPECT_NE(shard_error([&] { load_shard_times(other); }).find("--shard-times " + other.string()), std::string::npos);
  const auto absent = (dir_.path() / "absent").string();
  EXPECT_EQ(shard_error([&] { load_shard_times(absent); }),
            "--shard-times " + absent + ": cannot read it (No such file or directory)");  // the file named once
  EXPECT_EQ(shard_error([&] { load_shard_times(dir_.path()); }),
            "--shard-times " + dir_.path().string() + ": " + (dir_.path() / "manifest.json").string() +
                ": cannot read it (No such file or directory)");  // a directory's manifest named too
  std::ofstream(dir_.path() / "garbage.json") << "{not json";
  EXPECT_NE(shard_error([&] { load_shard_times(dir_.path() / "garbage.json"); }).find("not JSON"), std::string::npos);
}

// compare_shard_plan over manifests made here: only their dirs, ids and run.shard matter.
class CompareShard : public ::testing::Test {
 protected:
  static Manifest run(const std::string& dir, const std::vector<std::string>& ids,
                      const std::optional<ShardPlan>& plan = std::nullopt) {
    Manifest m;
    m.dir = dir;
    m.run = json::object();
    for (const std::string& id : ids) {
      ScenarioRecord r;
      r.id = id, r.status = "ok";
      m.scenarios.push_back(r);
    }
    if (plan) m.run["shard"] = plan->to_json();
    return m;
  }
  const std::vector<std::string> ids_ = make_ids(10);
  ShardPlan plan(std::size_t index, std::size_t total, const std::vector<std::string>& ids) const {
    return ShardPlan{{index, total}, ids, {}, ""};
  }
};

TEST_F(CompareShard, UnshardedRunsWithoutARequestCompareEverything) {
  EXPECT_FALSE(compare_shard_plan(run("g", ids_), run("c", ids_), std::nullopt, ids_));
}

TEST_F(CompareShard, UnshardedRunsPartitionTheComparedIds) {
  const auto p = compare_shard_plan(run("g", ids_), run("c", ids_), ShardRequest{{1, 3}, {}, ""}, ids_);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->scenarios, ids_);
  EXPECT_EQ(p->ids(), plan(1, 3, ids_).ids());
}

TEST_F(CompareShard, ShardedRunsGiveTheirShardWithoutARequest) {
  const ShardPlan recorded = plan(2, 3, ids_);
  const auto p = compare_shard_plan(run("g", recorded.ids(), recorded), run("c", recorded.ids(), recorded),
                                    std::nullopt, recorded.ids());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->shard.text(), "3/3");
  EXPECT_EQ(p->scenarios, ids_);
}

TEST_F(CompareShard, AFullRunBesideAShardIsNarrowedToIt) {
  const ShardPlan recorded = plan(0, 2, ids_);
  const auto p = compare_shard_plan(run("g", ids_), run("c", recorded.ids(), recorded), std::nullopt, ids_);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ids(), recorded.ids());
}

TEST_F(CompareShard, RefusesShardsThatDoNotLineUp) {
  const ShardPlan a = plan(0, 2, ids_), other_index = plan(1, 2, ids_), other_total = plan(0, 3, ids_);
  std::vector<std::string> fewer = ids_;
  fewer.pop_back();
  const ShardPlan other_list = plan(0, 2, fewer);
  auto refuse = [&](const ShardPlan& g, const ShardPlan& c) {
    return shard_error([&] { compare_shard_plan(run("G", g.ids(), g), run("C", c.ids(), c), std::nullopt, {}); });
  };
  EXPECT_NE(refuse(a, other_index).find("G is shard 1/2 and C shard 2/2"), std::string::npos);
  EXPECT_NE(refuse(a, other_total).find("G and C were sharded into 2 and 3 shards"), std::string::npos);
  const std::string lists = refuse(a, other_list);
  EXPECT_NE(lists.find("over different scenario lists (10 and 9 scenarios; '" + ids_.back() + "' is only in G's)"),
            std::string::npos)
      << lists;
}

TEST_F(CompareShard, RefusesARequestForAnotherShardThanTheRunsHold) {
  const ShardPlan recorded = plan(0, 2, ids_);
  const std::string m = shard_error([&] {
    compare_shard_plan(run("G", recorded.ids(), recorded), run("C", recorded.ids(), recorded),
                       ShardRequest{{1, 2}, {}, ""}, {});
  });
  EXPECT_NE(m.find("shard 2/2 was asked for, but G holds shard 1/2"), std::string::npos) << m;
}

TEST_F(CompareShard, RefusesAFullRunWithScenariosTheShardedListLacks) {
  std::vector<std::string> fewer = ids_;
  fewer.pop_back();
  const ShardPlan recorded = plan(0, 2, fewer);
  const std::string m =
      shard_error([&] { compare_shard_plan(run("G", ids_), run("C", recorded.ids(), recorded), std::nullopt, ids_); });
  EXPECT_NE(m.find("G has scenario '" + ids_.back() + "'"), std::string::npos) << m;
}

}  // namespace
