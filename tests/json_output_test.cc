// Tests of json_output.h: dump_json writes what nlohmann's dump writes, byte for byte, for any value and indentation.
#include "json_output.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

using json = nlohmann::json;

namespace {

// nlohmann's text of `value`: what dump_json must equal.
std::string nlohmann_text(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

void expect_same_text(const json& value) {
  for (const int indent : {-1, 0, 1, 2, 3}) {
    SCOPED_TRACE("indent " + std::to_string(indent));
    EXPECT_EQ(parity::dump_json(value, indent), nlohmann_text(value, indent));
  }
}

// Random values built as values, not parsed: strings (and keys) of bytes that need an escape, a replacement or nothing
// (quotes, backslashes, control characters, DEL, UTF-8 whole and broken), numbers at the edges of their three types
// (NaN and the infinities too, which nlohmann writes as null), empty and nested containers.
class RandomValue {
 public:
  explicit RandomValue(unsigned seed) : random_(seed) {}

  json value(int depth) {
    switch (depth > 0 ? pick(8) : pick(5)) {
      case 0:
        return text();
      case 1:
        return integer();
      case 2:
        return real();
      case 3:
        return pick(3) == 0 ? json(nullptr) : json(pick(2) == 0);
      case 4:
        return text();
      case 5:
      case 6: {
        json object = json::object();
        for (std::size_t n = pick(5); n > 0; --n) object[text()] = value(depth - 1);
        return object;
      }
      default: {
        json array = json::array();
        for (std::size_t n = pick(5); n > 0; --n) array.push_back(value(depth - 1));
        return array;
      }
    }
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_); }

  std::string text() {
    static const char* const pieces[] = {"a",    "outputs",      " ",    "\"",   "\\", "/",
                                         "\x7f", "\x1f",         "\n",   "\t",   "é",  "\xf0\x9f\x98\x80",
                                         "\xc3", "\xed\xa0\x80", "\xff", "\x80", "\0", "~"};
    std::string out;
    for (std::size_t n = pick(6); n > 0; --n) {
      const std::size_t i = pick(std::size(pieces));
      out += i == 16 ? std::string(1, '\0') : std::string(pieces[i]);
    }
    return out;
  }

  json integer() {
    switch (pick(6)) {
      case 0:
        return std::numeric_limits<std::int64_t>::min();
      case 1:
        return std::numeric_limits<std::int64_t>::max();
      case 2:
        return std::numeric_limits<std::uint64_t>::max();
      case 3:
        return -static_cast<std::int64_t>(pick(1000));
      default:
        return static_cast<std::uint64_t>(pick(100000));
    }
  }

  json real() {
    static const double values[] = {0.0,
                                    -0.0,
                                    0.1,
                                    1e-300,
                                    4.9e-324,
                                    1.7976931348623157e308,
                                    -2.5e-3,
                                    0.30000000000000004,
                                    1e21,
                                    123456.789,
                                    std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity()};
    return pick(3) == 0 ? json(std::uniform_real_distribution<double>(-1e6, 1e6)(random_))
                        : json(values[pick(std::size(values))]);
  }

  std::mt19937 random_;
};

TEST(DumpJson, WritesNlohmannsTextOfEachKindOfValue) {
  expect_same_text(json::object());
  expect_same_text(json::array());
  expect_same_text("plain text");
  expect_same_text("needs \"escapes\"\\ and a\ttab and a \x7f DEL");
  expect_same_text("not UTF-8: \xc3 \xff, and UTF-8: é");
  expect_same_text(json{{"k\"ey", 1}, {"\xff", 2}, {"plain", {{"nested", json::array({1, "two", nullptr, 3.5})}}}});
  expect_same_text(json::array({json::object(), json::array(), json::array({json::array()})}));
  expect_same_text(json::binary({1, 2, 3}));  // never in parity's documents; nlohmann's writer takes it anyway
}

TEST(DumpJson, WritesNlohmannsTextOfRandomValues) {
  RandomValue make(20261205);
  for (int i = 0; i < 3000; ++i) {
    const json value = make.value(4);
    SCOPED_TRACE(nlohmann_text(value, -1));
    expect_same_text(value);
    if (HasFailure()) return;
  }
}

}  // namespace
