// Unit tests of hostile-input guards (issue #16): JSON nesting and numbers, globs and ids from manifests, shard
// counts from files, and mistyped scenario record fields.
#include "json_input.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "differences.h"
#include "glob.h"
#include "record_check.h"
#include "shard.h"
#include "test_support.h"

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

// --- parse_json's two readers: simdjson's rebuilt exactly as nlohmann's ------------------------------------------

// What the fast reader did with `text`: "fast" (nlohmann reads the identical value), "declined" (nlohmann reads or
// refuses it), or what went wrong.
std::string held_to_nlohmann(const std::string& text, int max_depth = parity::kJsonMaxDepth) {
  const std::optional<json> fast = parity::detail::parse_json_fast(text, max_depth);
  json slow;
  try {
    slow = parity::detail::parse_json_with_nlohmann(text, "", max_depth);
  } catch (const nlohmann::json::exception& e) {
    return fast ? "fast read what nlohmann refuses (" + std::string(e.what()) + ")" : "declined";
  }
  if (!fast) return "declined";
  const std::string difference = parity::testing::json_difference(*fast, slow);
  return difference.empty() ? "fast"
                            : "fast read " + fast->dump() + ", nlohmann " + slow.dump() + " (" + difference + ")";
}

TEST(ParseJsonFast, ReadsParitysOwnDocumentsItself) {
  // A manifest's record as parity writes it, a worker's reply, numbers of every kind nlohmann keeps.
  for (const char* text :
       {R"({"fidelity": {"outputs['a']": "xxh3:7dc61393146eab47"}, "file": "results/m0.s0-0bc1.parity", "id": "m0.s0",
            "meta": {"atol": null, "line": 5, "params": {"n": 3, "x": -2.5e-3}, "tags": ["a", "b"]},
            "pickle_offset": 384, "seconds": 0.010264027, "status": "ok"})",
        R"({"event": "done", "ok": true, "n": -9223372036854775808, "u": 18446744073709551615, "z": 0})",
        R"([0, -0.0, 0.0, 1e-320, 1.7976931348623157e308, 4.9e-324, 2.4703282292062328e-324, 1E+2, 0.1e1])",
        R"(["\u0000", "\u00e9\ud83d\ude00", "é", "\"\\\/\b\f\n\r\t", "x-0", {"a": 1, "a": [2], "b": {}}])", " 3 ",
        "\"x\"", "null", "[]", "{}"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(held_to_nlohmann(text), "fast");
  }
  EXPECT_EQ(held_to_nlohmann(nested(parity::kJsonMaxDepth)), "fast");
  EXPECT_EQ(held_to_nlohmann(nested(5), 5), "fast");
}

// Each text where the two could part: the fast reader declines it, and nlohmann reads or refuses it as before.
TEST(ParseJsonFast, DeclinesWhatNlohmannMightReadOtherwise) {
  for (const char* text : {"-0",
                           "[-0]",
                           R"({"a":-0})",
                           "[1,\n-0 ]",  // nlohmann: a signed integer
                           "18446744073709551616",
                           "-9223372036854775809",  // nlohmann: a double
                           "\xef\xbb\xbf{}",        // nlohmann skips a byte order mark
                           "1e999",
                           "[1,]",
                           "{} x",
                           "",
                           "\"\\ud800\"",
                           "\"\\udc00\\u0041\"",
                           "\"a\x01\"",
                           "\"\xed\xa0\x80\"",
                           "\"\xff\"",
                           "01",
                           "1.",
                           "-",
                           "tru",
                           "[1] [2]",
                           "NaN",
                           "[Infinity]"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(held_to_nlohmann(text), "declined");
  }
  // nlohmann's lexer ends the input at a NUL byte, so what follows one was never read; simdjson refuses it, and the
  // text keeps being read as before.
  EXPECT_EQ(held_to_nlohmann(std::string("[1]\0garbage", 11)), "declined");
  EXPECT_EQ(parity::parse_json(std::string("[1]\0garbage", 11), "").dump(), "[1]");
  EXPECT_EQ(held_to_nlohmann(nested(6), 5), "declined");
  EXPECT_EQ(held_to_nlohmann(nested(1), 0), "declined");
  EXPECT_EQ(held_to_nlohmann("[[[1]]]", -1), "declined");
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(held_to_nlohmann(deep), "declined");
  // Through parse_json, each still gets nlohmann's value or message.
  EXPECT_TRUE(parity::parse_json("-0", "").is_number_integer());
  EXPECT_FALSE(parity::parse_json("-0", "").is_number_unsigned());
  EXPECT_TRUE(parity::parse_json("18446744073709551616", "").is_number_float());
  EXPECT_NE(refusal("\"\\ud800\"", "r").find("r: not JSON ("), std::string::npos);
}

// Over kFastJsonMaxBytes, nlohmann alone reads a document: simdjson's DOM beside the value rebuilt from it would
// raise the peak memory of a very large manifest by half.
TEST(ParseJsonFast, LeavesAVeryLargeDocumentToNlohmann) {
  std::string text = "[";
  while (text.size() <= parity::detail::kFastJsonMaxBytes) text += "12345678,";
  text += "0]";
  EXPECT_FALSE(parity::detail::parse_json_fast(text, parity::kJsonMaxDepth));
  EXPECT_TRUE(parity::detail::parse_json_fast(text.substr(0, 100) + "0]", parity::kJsonMaxDepth).has_value());
  EXPECT_EQ(parity::parse_json(text, "").size(), (text.size() - 2) / 9 + 1);
}

// A document larger than the parser kept per thread is read by one of its own, the same way.
TEST(ParseJsonFast, ReadsALargeDocumentAsNlohmannDoes) {
  std::string text = "[";
  for (int i = 0; i < 20000; ++i)
    text += (i ? "," : "") + std::string(R"({"id": "m.s)") + std::to_string(i) + R"(", "v": )" +
            std::to_string(-i * 0.25) + "}";
  text += "]";
  ASSERT_GT(text.size(), 64u * 1024);
  EXPECT_EQ(held_to_nlohmann(text), "fast");
}

// Random documents and their one-byte mutations, made of the tokens where two JSON readers part most often (numbers at
// the edges of their types, escapes, surrogates, bytes that are not UTF-8, control characters, depth): the fast reader
// must give nlohmann's value or decline, and must read most of the unmutated ones itself.
class RandomJson {
 public:
  explicit RandomJson(unsigned seed) : random_(seed) {}

  std::string document(int depth) {
    std::string text;
    value(text, depth);
    return space() + text + space();
  }

  std::string mutated(std::string text) {
    static const std::string bytes = "{}[],:\" \\-0123456789.eE+tfnu\x01\x7f\x80\xc3\xa9\xed\xef\xbb\xbf\xff";
    const std::size_t at = pick(text.size() + 1);
    const char byte = bytes[pick(bytes.size())];
    switch (pick(3)) {
      case 0:
        return text.insert(at, 1, byte);
      case 1:
        return at < text.size() ? text.erase(at, 1) : text;
      default:
        return at < text.size() ? (text[at] = byte, text) : text + byte;
    }
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }
  template <std::size_t N>
  const char* one_of(const char* const (&choices)[N]) {
    return choices[pick(N)];
  }
  std::string space() { return one_of({"", "", " ", "\n", "\t\r "}); }

  void value(std::string& out, int depth) {
    switch (depth > 0 ? pick(7) : pick(4)) {
      case 0:
        out += number();
        return;
      case 1:
        out += '"' + string() + '"';
        return;
      case 2:
        out += one_of({"true", "false", "null"});
        return;
      case 3:
        out += number();
        return;
      case 4:
      case 5:
        container(out, depth, true);
        return;
      default:
        container(out, depth, false);
        return;
    }
  }

  void container(std::string& out, int depth, bool object) {
    out += object ? '{' : '[';
    const std::size_t n = pick(4);
    for (std::size_t i = 0; i < n; ++i) {
      out += (i ? "," : "") + space();
      if (object) out += '"' + std::string(one_of({"a", "b", "a", "-0", "\\u0061", "é"})) + "\"" + space() + ':';
      value(out, depth - 1);
      out += space();
    }
    out += object ? '}' : ']';
  }

  std::string number() {
    return one_of({"0",
                   "-0",
                   "-0.0",
                   "0.0",
                   "1",
                   "-1",
                   "42",
                   "9223372036854775807",
                   "9223372036854775808",
                   "-9223372036854775808",
                   "-9223372036854775809",
                   "18446744073709551615",
                   "18446744073709551616",
                   "1e5",
                   "1E+2",
                   "-2.5e-3",
                   "1.7976931348623157e308",
                   "1.8e308",
                   "4.9e-324",
                   "1e-400",
                   "-1e-400",
                   "2.4703282292062328e-324",
                   "0.30000000000000004",
                   "123456789012345678901234567890",
                   "1e999"});
  }

  std::string string() {
    std::string text;
    const std::size_t n = pick(5);
    for (std::size_t i = 0; i < n; ++i)
      text += one_of({"a", "-0", "\\u0000", "\\u00e9", "\\ud83d\\ude00", "\\ud800", "\\udc00x", "\\\"", "\\\\", "\\/",
                      "\\n", "é", "\xf0\x9f\x98\x80", "\x01", "\xc3", "\xed\xa0\x80", "\\x", " "});
    return text;
  }

  std::mt19937 random_;
};

TEST(ParseJsonFast, RandomDocumentsGetNlohmannsValueOrAreDeclined) {
  RandomJson make(20261205);
  int fast = 0, documents = 0;
  for (int i = 0; i < 6000; ++i) {
    const std::string text = make.document(4);
    const std::string mutated = make.mutated(text);
    const int depth = i % 5 == 0 ? 2 : parity::kJsonMaxDepth;
    for (const std::string& each : {text, mutated}) {
      SCOPED_TRACE(each);
      const std::string verdict = held_to_nlohmann(each, depth);
      ASSERT_TRUE(verdict == "fast" || verdict == "declined") << verdict;
      fast += verdict == "fast";
    }
    ++documents;
  }
  EXPECT_GT(fast, documents / 4);  // the fast reader is exercised, not declining everything
}

// --- find_at: json_pointer's contains and at, in one walk -----------------------------------------------------

// What nlohmann gives for `pointer` in `doc`: the value's address, nullptr where it contains none, or "throws".
std::string nlohmann_lookup(const nlohmann::json& doc, const std::string& pointer, const nlohmann::json*& found) {
  try {
    const nlohmann::json::json_pointer at(pointer);
    found = doc.contains(at) ? &doc.at(at) : nullptr;
    return "";
  } catch (const nlohmann::json::exception&) {
    return "throws";
  }
}

TEST(FindAt, FindsWhatJsonPointerFinds) {
  const auto doc = nlohmann::json::parse(
      R"({"a": {"b": [10, {"c": 1}], "s": "x", "n": null, "e~/k": 3, "": {"": 4}, "0": 5}, "top": 2})");
  for (const std::string pointer :
       {"",           "/a",          "/a/b",   "/a/b/0", "/a/b/1/c", "/a/b/-",    "/a/b/01", "/a/b/2",
        "/a/b/x",     "/a/s",        "/a/s/x", "/a/n",   "/a/n/x",   "/a/e~0~1k", "/a/e~2",  "/missing",
        "/a/missing", "/top/deeper", "/a/",    "//",     "/a/0",     "a",         "~"}) {
    SCOPED_TRACE("pointer '" + pointer + "'");
    const nlohmann::json* expected = nullptr;
    if (nlohmann_lookup(doc, pointer, expected) == "throws") {
      EXPECT_THROW(parity::find_at(doc, pointer), nlohmann::json::exception);
      continue;
    }
    EXPECT_EQ(parity::find_at(doc, pointer), expected);
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
