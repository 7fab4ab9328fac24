// Unit tests of hostile-input guards (issue #16): JSON nesting and numbers, globs and ids from manifests, shard
// counts from files, and mistyped scenario record fields.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "json_input.h"

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

}  // namespace
