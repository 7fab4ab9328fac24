// Unit tests of hostile-input guards (issue #16): JSON nesting and numbers, globs and ids from manifests, shard
// counts from files, and mistyped scenario record fields.
#include "json_input.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "differences.h"
#include "glob.h"
#include "record_check.h"
#include "shard.h"

using json = nlohmann::json;

namespace {

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string refusal(const std::string& text, const std::string& what, int max_depth = parity::kJsonMaxDepth) {
  try {
    parity::parse_json(text, what, max_depth);
  } catch (const parity::JsonInputError& e) {
    return e.what();
  }
  return "";
}

// --- parse_json --------------------------------------------------------------------------------------------------

TEST(ParseJson, KeepsDocumentsUpToTheLimit) {
  EXPECT_EQ(parity::parse_json(R"({"a": [1, {"b": null}]})", "f.json"), json::parse(R"({"a": [1, {"b": null}]})"));
  EXPECT_EQ(parity::parse_json(nested(parity::kJsonMaxDepth), "f.json").dump(), nested(parity::kJsonMaxDepth));
  EXPECT_EQ(parity::parse_json(nested(5), "f.json", 5).dump(), nested(5));
}

TEST(ParseJson, RefusesDeeperDocumentsWhileParsingNamingThem) {
  EXPECT_NE(refusal(nested(6), "f.json", 5).find("f.json: JSON nested deeper than 5 levels"), std::string::npos);
  // 200,000 levels: a recursive copy or dump of it overflows the stack; the parser stops at the limit instead.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_NE(refusal(deep, "cand/manifest.json").find("cand/manifest.json: JSON nested deeper"), std::string::npos);
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += R"({"a":)";
    return s + "1" + std::string(100000, '}');
  }();
  EXPECT_NE(refusal(objects, "r.json").find("nested deeper"), std::string::npos);
}

TEST(ParseJson, RefusesSyntaxAndNumberOverflowNamingTheDocument) {
  EXPECT_NE(refusal("{not json", "b.json").find("b.json: not JSON"), std::string::npos);
  EXPECT_NE(refusal(R"({"seconds": 1e999})", "b.json").find("b.json: "), std::string::npos);
  EXPECT_NE(refusal(R"({"seconds": 1e999})", "b.json").find("number overflow"), std::string::npos);
  // Still a json::exception, so that every reader's existing handler names its own file.
  EXPECT_THROW(parity::parse_json("[1e999]", ""), nlohmann::json::exception);
}

// The depth-limited builder is nlohmann's own DOM parser under a SAX handler: what json::parse keeps or refuses, it
// does.
TEST(ParseJson, ReadsWhatJsonParseReads) {
  for (const char* text : {R"({"a": 1, "a": [2, {"b": {}}], "c": -0.5e3, "d": 18446744073709551615})",
                           R"(  ["\u00e9\ud83d\ude00", true, false, null, -9223372036854775808]  )", "3", R"("x")"}) {
    SCOPED_TRACE(text);
    const json parsed = parity::parse_json(text, "");
    EXPECT_EQ(parsed, json::parse(text));
    EXPECT_EQ(parsed.dump(), json::parse(text).dump());
  }
  for (const char* text : {"{} x", "[1,]", "", "{\"a\" 1}", "\"\xff\"", "[1] [2]", "\"\\ud800\""}) {
    SCOPED_TRACE(text);
    EXPECT_NE(refusal(text, "r").find("r: not JSON ("), std::string::npos);
  }
}

// --- glob_match: Python's fnmatch.fnmatchcase ---------------------------------------------------------------------

TEST(GlobMatch, FollowsFnmatchcase) {
  struct Case {
    const char *pattern, *text;
    bool match;
  };
  // Each verdict is fnmatch.fnmatchcase(text, pattern)'s.
  const std::vector<Case> cases = {
      {"layouts.*", "layouts.transpose", true},
      {"layouts.*", "layout.x", false},
      {"*", "", true},
      {"?", "", false},
      {"a?c", "abc", true},
      {"a?c", "ac", false},
      {"*a*b", "xxaxxb", true},
      {"*a*b", "xxaxxbx", false},
      {"a*", "a/b/.c", true},
      {"[abc]x", "bx", true},
      {"[!abc]x", "bx", false},
      {"[!abc]x", "dx", true},
      {"[a-c]", "b", true},
      {"[a-c]", "d", false},
      {"[]a]", "]", true},
      {"[!]a]", "]", false},
      {"[a-]", "-", true},
      {"[z-a]", "a", false},
      {"[!z-a]", "q", true},
      {"stats.iqr[[]axis=0]", "stats.iqr[axis=0]", true},
      {"stats.iqr[axis=0]", "stats.iqr[axis=0]", false},  // a set: one character of a, x, i, s, =, 0
      {"[", "[", true},
      {"a[b", "a[b", true},
      {"\\*", "\\x", true},
      {"[^a]", "^", true},
      {"[^a]", "b", false},
      {"é?", "éa", true},
      {"?", "é", true},
      {"[à-ÿ]", "é", true},
      {"**b", "ab", true},
      {"*?*?*", "a", false},
  };
  for (const Case& c : cases) EXPECT_EQ(parity::glob_match(c.pattern, c.text), c.match) << c.pattern << " ~ " << c.text;
}

TEST(GlobMatch, HostilePatternsEndQuicklyWithoutRecursion) {
  const std::string text(40000, 'a');
  const auto start = std::chrono::steady_clock::now();
  std::string stars;
  for (int i = 0; i < 200; ++i) stars += "*a";
  EXPECT_FALSE(parity::glob_match(stars + "b", text));
  EXPECT_TRUE(parity::glob_match(std::string(40000, '?'), text));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// --- declared differences: ids checked by hand ---------------------------------------------------------------------

std::string difference_refusal(const std::string& id) {
  const json entry = {{"id", id}, {"check", "values"}, {"reason", "r"}};
  try {
    parity::parse_differences({{"name", "lib"}, {"differences", {entry}}}, "cand/manifest.json");
  } catch (const parity::DifferenceError& e) {
    return e.what();
  }
  return "";
}

TEST(DifferenceIds, LowercaseWordsJoinedByDashes) {
  for (const std::string ok : {"a", "fresh-c", "x1-2b-c3"}) EXPECT_EQ(difference_refusal(ok), "") << ok;
  for (const std::string bad : {"", "-a", "a-", "a--b", "A", "a_b", "a b"})
    EXPECT_NE(difference_refusal(bad), "") << bad;
}

TEST(DifferenceIds, AFortyKilobyteIdIsCheckedWithoutRecursion) {
  // std::regex_match recursed once per character here and died of SIGSEGV.
  std::string id;
  while (id.size() < 40000) id += "ab-";
  EXPECT_NE(difference_refusal(id).find("is not lowercase words"), std::string::npos);  // ends with '-'
  EXPECT_EQ(difference_refusal(id + "c"), "");
}

// --- shards: counts from files ------------------------------------------------------------------------------------

TEST(AssignShards, AHugeShardCountCostsNothingPerShard) {
  std::vector<std::string> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back("s" + std::to_string(i));
  const auto start = std::chrono::steady_clock::now();
  const auto assigned = parity::assign_shards(ids, std::size_t(-1), {});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // One scenario per shard, in the greedy's order (equal times: id order), on the lowest shards.
  std::set<std::size_t> shards(assigned.begin(), assigned.end());
  EXPECT_EQ(shards.size(), ids.size());
  EXPECT_EQ(*shards.rbegin(), ids.size() - 1);
}

TEST(AssignShards, TheHeapKeepsTheGreedysTieBreaks) {
  // Longest first onto the least loaded; equal loads: fewer scenarios, then the lower shard.
  const parity::ShardTimes times = {{"a", 5}, {"b", 3}, {"c", 2}, {"d", 2}, {"e", 1}};
  EXPECT_EQ(parity::assign_shards({"a", "b", "c", "d", "e"}, 2, times), (std::vector<std::size_t>{0, 1, 1, 0, 1}));
  EXPECT_EQ(parity::assign_shards({"x", "y", "z"}, 5, {}), (std::vector<std::size_t>{0, 1, 2}));
}

TEST(ShardRecord, RefusesAShardCountBeyondTheBound) {
  const json record = {{"index", 1}, {"total", 100000000}, {"scenarios", {"a"}}};
  EXPECT_THROW(parity::ShardPlan::from_json(record, "m.json"), parity::ShardError);
  EXPECT_THROW(parity::parse_shard_flag("1/100000000"), parity::ShardError);
  EXPECT_EQ(parity::parse_shard_flag("2/3").total, 3u);
}

// --- scenario records: mistyped fields ----------------------------------------------------------------------------

std::string malformed(const json& meta, const json& error = json()) {
  parity::ScenarioRecord r;
  r.id = "s";
  r.status = "ok";
  r.meta = meta;
  r.error = error;
  return parity::malformed_field(r);
}

TEST(MalformedField, NamesTheFieldAndWhatItShouldBe) {
  EXPECT_EQ(malformed(json::object()), "");
  EXPECT_EQ(malformed({{"rtol", 1e-7}, {"atol", nullptr}, {"policy", {{"layout", "strides"}}}}), "");
  EXPECT_EQ(malformed({{"rtol", "x"}}), "meta.rtol is a string, not a number or null");
  EXPECT_EQ(malformed(nullptr), "meta is null, not an object");
  EXPECT_EQ(malformed({{"policy", {{"layout", 5}}}}), "meta.policy.layout is a number, not a string");
  EXPECT_EQ(malformed({{"xfail", {{"compare", 5}}}}),
            "meta.xfail.compare is a number, not a reason or {check: reason}");
  EXPECT_EQ(malformed({{"xfail", {{"compare", {{"values", 1}}}}}}),
            "meta.xfail.compare.values is a number, not a string");
  EXPECT_EQ(malformed({{"tolerances", {{"outputs['x']", {{"atol", true}}}}}}),
            "meta.tolerances.outputs['x'].atol is a boolean, not a number or null");
  EXPECT_EQ(malformed({{"tags", "a"}}), "meta.tags is a string, not a list");
  EXPECT_EQ(malformed(json::object(), "boom"), "error is a string, not an object or null");
  EXPECT_EQ(malformed(json::object(), {{"message", {1}}}), "error.message is an array, not a string");
}

TEST(MalformedField, FidelityValuesAreTextsByPath) {
  parity::ScenarioRecord r;
  r.meta = json::object();
  r.fidelity_values = {{"outputs['t'].name", "builtins.str 'idx'"}};
  EXPECT_EQ(parity::malformed_field(r), "");
  r.fidelity_values = {{"outputs", 1}};
  EXPECT_EQ(parity::malformed_field(r), "fidelity_values.outputs is a number, not a string");
  r.fidelity_values = "x";
  EXPECT_EQ(parity::malformed_field(r), "fidelity_values is a string, not an object or null");
}

}  // namespace
