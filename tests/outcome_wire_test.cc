// Unit tests of the bytes a compare --jobs process sends its parent for each outcome
// (src/parity/compare/outcome_wire.h).
#include "outcome_wire.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "test_support.h"

using json = nlohmann::json;
using namespace parity;

namespace {

// Equal and of the same kind all the way down, floats bit for bit: what the parent's reports need to be those one
// process writes.
void expect_same(const json& a, const json& b, const std::string& where = "") {
  EXPECT_EQ(parity::testing::json_difference(a, b, where), "");
}

void expect_same_bits(double a, double b) {
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a), std::bit_cast<std::uint64_t>(b));
}

ScenarioOutcome round_trip(const ScenarioOutcome& o) {
  std::string bytes = "prefix";  // appended: what was there stays
  append_outcome_wire(o, bytes);
  EXPECT_EQ(bytes.substr(0, 6), "prefix");
  return outcome_from_wire(std::string_view(bytes).substr(6));
}

ScenarioOutcome rich_outcome() {
  static constexpr char kMessage[] = "nul \0 and bad UTF-8 \xff\xfe";  // sizeof: its 22 bytes and the final NUL
  ScenarioOutcome o;
  o.id = "mod.s[n=1]", o.status = "fail", o.message = std::string(kMessage, sizeof kMessage - 1);
  o.repro = "parity run ... ; parity compare a b";
  Check failed{"values", false, "outputs['a'][2]", "max abs diff 1e-3", json::object()};
  failed.details = {{"int", -3},
                    {"unsigned", std::numeric_limits<std::uint64_t>::max()},
                    {"float", -0.0},
                    {"nan", std::nan("")},
                    {"inf", -std::numeric_limits<double>::infinity()},
                    {"nested", json::array({nullptr, true, false, json::array(), json::object(), "s", 1.5})},
                    {"binary", json::binary({1, 2, 3}, 7)},
                    {"binary without subtype", json::binary({})}};
  o.checks = {failed, Check{"dtype", true, "outputs", "", {{"leaves", 3}}}};
  o.skipped = {{"pickle", "candidate", "unverified-pickle", "its MAC is not the user's"}};
  o.meta = {{"module", "mod"}, {"params", {{"n", 1}}}, {"tags", json::array({"slow"})}, {"line", 12u}};
  o.policy = {{"dtype", "exact"}, {"signed_zeros", false}};
  o.coverage = Coverage{4, {{"values", 3}, {"dtype", 4}}};
  o.gold_seconds = std::nan(""), o.candidate_seconds = -0.0, o.compare_seconds = 0.1;
  return o;
}

TEST(OutcomeWire, AnOutcomeComesBackAsItWasSentDownToEveryByteAndBit) {
  const ScenarioOutcome o = rich_outcome();
  const ScenarioOutcome back = round_trip(o);
  EXPECT_EQ(back.id, o.id);
  EXPECT_EQ(back.status, o.status);
  EXPECT_EQ(back.message, o.message);
  EXPECT_EQ(back.message.size(), 22u);
  EXPECT_EQ(back.repro, o.repro);
  ASSERT_EQ(back.checks.size(), o.checks.size());
  for (std::size_t i = 0; i < o.checks.size(); ++i) {
    EXPECT_EQ(back.checks[i].check, o.checks[i].check);
    EXPECT_EQ(back.checks[i].ok, o.checks[i].ok);
    EXPECT_EQ(back.checks[i].path, o.checks[i].path);
    EXPECT_EQ(back.checks[i].message, o.checks[i].message);
    expect_same(back.checks[i].details, o.checks[i].details, "details");
  }
  ASSERT_EQ(back.skipped.size(), 1u);
  EXPECT_EQ(back.skipped[0].check, "pickle");
  EXPECT_EQ(back.skipped[0].side, "candidate");
  EXPECT_EQ(back.skipped[0].kind, "unverified-pickle");
  EXPECT_EQ(back.skipped[0].reason, o.skipped[0].reason);
  expect_same(back.meta, o.meta, "meta");
  expect_same(back.policy, o.policy, "policy");
  ASSERT_TRUE(back.coverage.has_value());
  EXPECT_EQ(back.coverage->leaves, 4);
  EXPECT_EQ(back.coverage->checks, o.coverage->checks);
  expect_same_bits(back.gold_seconds, o.gold_seconds);
  expect_same_bits(back.candidate_seconds, o.candidate_seconds);
  expect_same_bits(back.compare_seconds, o.compare_seconds);
}

TEST(OutcomeWire, AnOutcomeWithoutCoverageOrChecksStaysWithout) {
  ScenarioOutcome o;
  o.id = "m.s", o.status = "error", o.message = "its compare process died comparing it (signal 6)";
  const ScenarioOutcome back = round_trip(o);
  EXPECT_EQ(back.id, "m.s");
  EXPECT_TRUE(back.checks.empty());
  EXPECT_TRUE(back.skipped.empty());
  EXPECT_FALSE(back.coverage.has_value());
  expect_same(back.meta, json());
  expect_same(back.policy, json());
}

TEST(OutcomeWire, BytesCutShortOrWithMoreAfterThemAreRefused) {
  std::string bytes;
  append_outcome_wire(rich_outcome(), bytes);
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(outcome_from_wire(std::string_view(bytes).substr(0, n)), std::runtime_error) << n;
  EXPECT_THROW(outcome_from_wire(bytes + "x"), std::runtime_error);
}

}  // namespace
