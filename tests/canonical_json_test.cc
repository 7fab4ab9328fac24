// Unit tests of canonical JSON (src/parity/codec/canonical_json.h): what it accepts is what nlohmann writes back byte
// for byte, and its pretty form is nlohmann's.
#include "canonical_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

using json = nlohmann::json;
using parity::canonical::append_indented;
using parity::canonical::plain_string_length;
using parity::canonical::value_length;

namespace {

constexpr int kDepth = 64;
using Byte = unsigned char;

std::string compact(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string indented(std::string_view text, unsigned indent) {
  std::string out;
  append_indented(out, text, indent);
  return out;
}

// Values of every kind, with strings the dump escapes or replaces.
std::vector<json> samples() {
  return {
      json::object(),
      json::array(),
      {{"outputs", "xxh3:7dc61393146eab47"}, {"outputs['exp']", "numpy.ndarray <f8 shape (16,)"}},
      {{"stdout", "line\n\ttab \"q\" back\\slash \x01\x1f\x7f /"}, {"stderr", ""}, {"truncated", true}},
      {{"a", json::array({1, -2, 3.25, 1e-7, 1e300, -0.0, 12345678901234567890u, true, false, nullptr})}},
      {{"nested", {{"deeper", {{"x", json::array({json::object(), json::array(), json::array({1})})}}}}}},
      {{"unicode", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf\xed\x9f\xbf\xf4\x8f\xbf\xbf"}},
      {{"\xc3\xa9", 1}, {"Z", 2}, {"a", 3}, {"", 4}},  // key order: bytes, unsigned
      {{"invalid", std::string("\xff\xc3\x28")}},      // replaced by the dump, then canonical
      json("a string"),
      json(0.1),
      json(-7),
      json::array({0, 123456789012345678, -123456789012345678, 1234567890123456789, -1234567890123456789}),
      json(nullptr),
  };
}

TEST(CanonicalJson, TakesWhatTheCompactDumpWritesAndIndentsItAsThePrettyDump) {
  for (const json& value : samples()) {
    const std::string text = compact(value);
    EXPECT_EQ(value_length(text, kDepth), text.size()) << text;
    const json parsed = json::parse(text);  // the replaced strings: the document the text holds
    for (const unsigned indent : {0u, 3u}) {
      std::string expected;
      nlohmann::detail::serializer<json> out(nlohmann::detail::output_adapter<char, std::string>(expected), ' ',
                                             json::error_handler_t::strict);
      out.dump(parsed, true, false, 1, indent);
      EXPECT_EQ(indented(text, indent), expected) << text;
    }
    // A value is measured where it starts, whatever follows.
    EXPECT_EQ(value_length(text + ",\"x\":1}", kDepth), text.size());
  }
}

// JSON that nlohmann reads but writes otherwise, and what it does not read: never taken as canonical.
TEST(CanonicalJson, RefusesWhatTheDumpWouldWriteOtherwise) {
  const std::vector<std::string> texts = {R"({"b":1,"a":2})",
                                          R"({"a":1,"a":2})",
                                          R"({"a":1, "b":2})",
                                          R"({ "a":1})",
                                          R"([1, 2])",
                                          R"(["\/"])",
                                          R"(["\u0041"])",
                                          R"(["\u000a"])",
                                          R"(["\u001F"])",
                                          R"(["\u0008"])",
                                          R"(["\u0100"])",
                                          R"(["\ud83d\ude00"])",
                                          R"([1E5])",
                                          R"([1e5])",
                                          R"([00])",
                                          R"([-01])",
                                          R"([99999999999999999999])",
                                          R"([1.50])",
                                          R"([-0])",
                                          R"([01])",
                                          R"([1.])",
                                          R"([.5])",
                                          R"([+1])",
                                          R"([1e999])",
                                          R"([0.10000000000000001])",
                                          R"([NaN])",
                                          R"([True])",
                                          R"({"a":1)",
                                          R"([1,])",
                                          R"({"a":})",
                                          R"({"a"})",
                                          R"({"a\"b":1})",
                                          std::string("[\"\x01\"]"),
                                          std::string("[\"\xff\"]"),
                                          std::string("[\"\xc0\xaf\"]"),
                                          std::string("[\"\xed\xa0\x80\"]"),
                                          std::string("[\"\xf4\x90\x80\x80\"]"),
                                          std::string("[\"\xe2\x82\"]"),
                                          std::string("\xef\xbb\xbf[]"),
                                          "",
                                          "x"};
  for (const std::string& text : texts) EXPECT_EQ(value_length(text, kDepth), 0u) << text;
}

TEST(CanonicalJson, RefusesNestingDeeperThanAsked) {
  EXPECT_EQ(value_length(R"({"a":{"b":[1]}})", 3), 15u);
  EXPECT_EQ(value_length(R"({"a":{"b":[1]}})", 2), 0u);
  EXPECT_EQ(value_length(R"({"a":{"b":[]}})", 2), 14u);  // an empty one adds no level the dump recurses into
}

TEST(CanonicalJson, FindsAMemberOfTheObjectItReads) {
  std::string_view member;
  const std::string text = R"({"a":{"timeout":1},"timeout":{"s":2.5},"z":[]})";
  EXPECT_EQ(value_length(text, kDepth, "timeout", member), text.size());
  EXPECT_EQ(member, R"({"s":2.5})");  // the object's own, not a nested object's
  member = {};
  EXPECT_EQ(value_length(R"({"a":1})", kDepth, "timeout", member), 7u);
  EXPECT_TRUE(member.empty());
}

TEST(CanonicalJson, PlainStringsHoldNoEscape) {
  EXPECT_EQ(plain_string_length(R"("results/m0.s0-d8ee.parity",)"), 27u);
  EXPECT_EQ(plain_string_length("\"\xc3\xa9\""), 4u);
  const std::vector<std::string> texts = {
      R"("a\"b")",           R"("a\\b")",     R"("a\nb")", std::string("\"a\tb\""), std::string("\"\xff\""),
      std::string("\"open"), std::string("x")};
  for (const std::string& text : texts) EXPECT_EQ(plain_string_length(text), 0u) << text;
}

// Strings are stepped over eight bytes at a time where all eight are plain: a byte that is not (a quote, a backslash,
// a control character, any byte of UTF-8 or not) at every place in and around those eight, in strings of every length
// up to three words, is taken exactly where nlohmann's parse and dump give the text back, and copied whole by the
// pretty form.
TEST(CanonicalJson, EveryByteAtEveryPlaceOfAStringIsSeen) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  std::size_t taken = 0;
  for (std::size_t length = 1; length <= 24; ++length)
    for (std::size_t at = 0; at < length; ++at)
      for (const char b : bytes) {
        std::string text = "\"" + std::string(length, 'a') + "\"";
        text[1 + at] = b;
        bool canonical = false;
        try {
          canonical = compact(json::parse(text)) == text;
        } catch (const json::exception&) {
        }
        ASSERT_EQ(value_length(text, kDepth) == text.size(), canonical) << "byte " << int(Byte(b)) << " at " << at;
        ASSERT_EQ(plain_string_length(text) == text.size(), canonical && b != '\\') << int(Byte(b)) << " at " << at;
        if (canonical) {
          ASSERT_EQ(indented(text, 3), text) << int(Byte(b)) << " at " << at;  // a string is copied whole
        }
        taken += canonical;
      }
  EXPECT_EQ(taken, 300u * (128 - 32 - 2));  // the printable ASCII bytes but '"' and '\\', at each of 300 places
  // Two bytes to look at in one word (an escape, a UTF-8 sequence, a quote after either): each is found in turn.
  const std::string special = std::string("\"\\nu0\x01\x7f\x80\xa9\xc3\xff");
  for (std::size_t at = 0; at < 17; ++at)
    for (std::size_t second = at + 1; second < 17; ++second)
      for (const char a : special)
        for (const char b : special) {
          std::string text = "\"" + std::string(17, 'a') + "\"";
          text[1 + at] = a, text[1 + second] = b;
          bool canonical = false;
          try {
            canonical = compact(json::parse(text)) == text;
          } catch (const json::exception&) {
          }
          ASSERT_EQ(value_length(text, kDepth) == text.size(), canonical) << at << " " << second;
          if (canonical) {
            ASSERT_EQ(indented("[" + text + "]", 0), "[\n " + text + "\n]") << at << " " << second;
          }
        }
}

// Whatever it takes, among many small changes of canonical texts, is what nlohmann's parse and dump give back, and its
// pretty form is theirs: the proof every caller rests on, tried on texts a scenario could forge.
TEST(CanonicalJson, WhatItTakesIsWhatTheParseGivesBack) {
  const std::string alphabet = std::string("{}[]\",:\\/-+.eE0159aub tnrfl") + "\x01\x7f\xc3\xa9\xed\xa0\xff";
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return static_cast<std::size_t>(state >> 33);
  };
  std::size_t taken = 0, tried = 0;
  for (const json& value : samples()) {
    const std::string text = compact(value);
    for (int round = 0; round < 3000; ++round) {
      std::string changed = text;
      for (int edits = 1 + static_cast<int>(next() % 3); edits > 0; --edits) {
        const std::size_t at = changed.empty() ? 0 : next() % (changed.size() + 1);
        const char ch = alphabet[next() % alphabet.size()];
        switch (next() % 3) {
          case 0:
            changed.insert(at, 1, ch);
            break;
          case 1:
            if (at < changed.size()) changed.erase(at, 1);
            break;
          default:
            if (at < changed.size()) changed[at] = ch;
            break;
        }
      }
      ++tried;
      if (changed.empty() || value_length(changed, kDepth) != changed.size()) continue;  // 0: refused
      ++taken;
      const json parsed = json::parse(changed);  // throws: it took what is not JSON
      ASSERT_EQ(compact(parsed), changed);
      std::string expected;
      nlohmann::detail::serializer<json> out(nlohmann::detail::output_adapter<char, std::string>(expected), ' ',
                                             json::error_handler_t::strict);
      out.dump(parsed, true, false, 1, 3);
      ASSERT_EQ(indented(changed, 3), expected) << changed;
    }
  }
  EXPECT_GT(taken, tried / 100);  // the changes are small enough that some stay canonical
}

}  // namespace
