// Unit tests of declared differences: parsing a manifest's declarations, matching failed checks, verdicts, use.
#include "differences.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compare.h"

using json = nlohmann::json;
using parity::Check;
using parity::Difference;
using parity::DifferenceError;
using parity::ScenarioOutcome;

namespace {

std::vector<Difference> parse(const json& differences) {
  return parity::parse_differences({{"name", "lib"}, {"differences", differences}}, "cand/manifest.json");
}

Difference one(const json& entry) { return parse(json::array({entry})).at(0); }

Check layout_failure(bool candidate_c_contiguous) {
  json table = {{"candidate", {{"c_contiguous", candidate_c_contiguous}, {"strides", "(40, 8)"}}}};
  return {"layout", false, "outputs['t']", "layout differs: ...", {{"table", table}}};
}

Check candidate_error(const std::string& type, const std::string& message, const std::string& side = "candidate") {
  return {"error", false, side, "the candidate run raised " + type, {{"type", type}, {"message", message}}};
}

const json kFreshC = {{"id", "fresh-c"},
                      {"check", "layout"},
                      {"reason", "results are new C-contiguous arrays"},
                      {"match", {{"details.table.candidate.c_contiguous", true}}}};

// --- parse_differences -----------------------------------------------------------------------------------------

TEST(ParseDifferences, AbsentMeansNone) {
  EXPECT_TRUE(parity::parse_differences({{"name", "lib"}}, "m.json").empty());
  EXPECT_TRUE(parity::parse_differences(json(), "m.json").empty());
}

TEST(ParseDifferences, ReadsEveryField) {
  const Difference d = one({{"id", "no-eigh"},
                            {"check", "error"},
                            {"reason", "no eigh"},
                            {"match", {{"details.type", "AttributeError"}}},
                            {"scenarios", "linalg.*"}});
  EXPECT_EQ(d.id, "no-eigh");
  EXPECT_EQ(d.check, "error");
  EXPECT_EQ(d.reason, "no eigh");
  EXPECT_EQ(d.match, json({{"details.type", "AttributeError"}}));
  EXPECT_EQ(d.scenarios, std::vector<std::string>{"linalg.*"});
}

void expect_refused(const json& differences, const std::string& fragment) {
  try {
    parse(differences);
    FAIL() << "accepted " << differences.dump();
  } catch (const DifferenceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cand/manifest.json"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(ParseDifferences, RefusesMalformedEntriesNamingThem) {
  expect_refused(json::object(), "not a list");
  expect_refused(json::array({"layout"}), "differences[0] is not an object");
  expect_refused(json::array({{{"id", "a"}, {"check", "layout"}}}), "needs a non-empty string 'reason'");
  expect_refused(json::array({{{"id", "Fresh C"}, {"check", "layout"}, {"reason", "r"}}}), "not lowercase words");
  expect_refused(json::array({{{"id", "a"}, {"check", "fidelity"}, {"reason", "r"}}}),
                 "cannot declare check 'fidelity'");
  expect_refused(json::array({{{"id", "a"}, {"check", "missing"}, {"reason", "r"}}}), "cannot declare check 'missing'");
  expect_refused(json::array({{{"id", "a"}, {"check", "layout"}, {"reason", "r"}, {"when", 1}}}),
                 "unknown field 'when'");
  expect_refused(json::array({{{"id", "a"}, {"check", "layout"}, {"reason", "r"}, {"match", {{"k", {{"x", 1}}}}}}}),
                 "match 'k' is not a value or a list of values");
  expect_refused(json::array({{{"id", "a"}, {"check", "layout"}, {"reason", "r"}, {"scenarios", 3}}}),
                 "scenarios is not a glob");
  expect_refused(json::array({kFreshC, kFreshC}), "differences[1] repeats the id 'fresh-c'");
}

// --- explains ---------------------------------------------------------------------------------------------------

TEST(Explains, MatchesDottedKeysByEqualityOfTheSameType) {
  const Difference d = one(kFreshC);
  EXPECT_TRUE(parity::explains(d, "s.a", layout_failure(true)));
  EXPECT_FALSE(parity::explains(d, "s.a", layout_failure(false)));
  Check one_not_true = layout_failure(true);
  one_not_true.details["table"]["candidate"]["c_contiguous"] = 1;  // 1 is not true
  EXPECT_FALSE(parity::explains(d, "s.a", one_not_true));
}

TEST(Explains, AMissingKeyNeverMatches) {
  Check no_table = layout_failure(true);
  no_table.details.erase("table");
  EXPECT_FALSE(parity::explains(one(kFreshC), "s.a", no_table));
}

TEST(Explains, OnlyItsOwnCheckAndOnlyFailures) {
  Check writeable = layout_failure(true);
  writeable.check = "writeable";
  EXPECT_FALSE(parity::explains(one(kFreshC), "s.a", writeable));
  Check passed = layout_failure(true);
  passed.ok = true;
  EXPECT_FALSE(parity::explains(one(kFreshC), "s.a", passed));
}

TEST(Explains, StringsAreWholeValueGlobsWithClassesAndNoEscapes) {
  const Difference d = one({{"id", "no-linalg"},
                            {"check", "error"},
                            {"reason", "r"},
                            {"match",
                             {{"details.type", "AttributeError"},
                              {"details.message", "module 'dask.array.linalg' has no attribute '[de]*'"}}}});
  EXPECT_TRUE(
      parity::explains(d, "s", candidate_error("AttributeError", "module 'dask.array.linalg' has no attribute 'det'")));
  EXPECT_TRUE(parity::explains(
      d, "s", candidate_error("AttributeError", "module 'dask.array.linalg' has no attribute 'eigh'")));
  EXPECT_FALSE(
      parity::explains(d, "s", candidate_error("AttributeError", "module 'dask.array.linalg' has no attribute 'svd'")));
  EXPECT_FALSE(
      parity::explains(d, "s", candidate_error("TypeError", "module 'dask.array.linalg' has no attribute 'det'")));
  // Whole value: a prefix does not match.
  EXPECT_FALSE(parity::explains(
      d, "s", candidate_error("AttributeError", "module 'dask.array.linalg' has no attribute 'det'!")));
  const Difference backslash =
      one({{"id", "b"}, {"check", "error"}, {"reason", "r"}, {"match", {{"details.message", "a\\*"}}}});
  EXPECT_TRUE(parity::explains(backslash, "s", candidate_error("E", "a\\xyz")));  // '\' is literal, as in fnmatch
}

TEST(Explains, APathPatternReadsBracketsAsThemselves) {
  const Difference d =
      one({{"id", "first-x"}, {"check", "layout"}, {"reason", "r"}, {"match", {{"path", "outputs['x'][0]"}}}});
  Check at_x0 = layout_failure(true), at_x1 = layout_failure(true), glob_reading = layout_failure(true);
  at_x0.path = "outputs['x'][0]", at_x1.path = "outputs['x'][1]";
  glob_reading.path = "outputsx0";  // what the pattern read with glob classes would match
  EXPECT_TRUE(parity::explains(d, "s", at_x0));
  EXPECT_FALSE(parity::explains(d, "s", at_x1));
  EXPECT_FALSE(parity::explains(d, "s", glob_reading));
  // Wildcards stay wildcards, and patterns escaped with glob.escape keep matching.
  for (const char* pattern : {"outputs['x'][*]", "outputs[[]'x'][[]*]", "outputs['x'][?]"}) {
    SCOPED_TRACE(pattern);
    const Difference any = one({{"id", "e"}, {"check", "layout"}, {"reason", "r"}, {"match", {{"path", pattern}}}});
    EXPECT_TRUE(parity::explains(any, "s", at_x0));
    EXPECT_TRUE(parity::explains(any, "s", at_x1));
  }
  // Other keys keep glob classes (the message test above).
}

TEST(DifferenceChanges, NamesTheIdsAddedRemovedAndChanged) {
  const std::vector<Difference> recorded = parse(json::array({kFreshC,
                                                              {{"id", "gone"}, {"check", "error"}, {"reason", "r"}},
                                                              {{"id", "same"}, {"check", "dtype"}, {"reason", "r"}}}));
  json edited = kFreshC;
  edited["match"] = {{"details.table.candidate.c_contiguous", false}};
  const std::vector<Difference> current = parse(json::array({edited,
                                                             {{"id", "same"}, {"check", "dtype"}, {"reason", "r"}},
                                                             {{"id", "new"}, {"check", "values"}, {"reason", "r"}}}));
  EXPECT_EQ(parity::difference_changes(recorded, current), "added new; removed gone; changed fresh-c");
  EXPECT_EQ(parity::difference_changes(recorded, recorded), "");
  EXPECT_EQ(parity::difference_changes({}, {}), "");
}

TEST(Explains, AListMatchesAnyOfItsPatterns) {
  const Difference d = one({{"id", "k"},
                            {"check", "error"},
                            {"reason", "r"},
                            {"match", {{"details.message", {"ptp() got *", "count_nonzero() got *"}}}}});
  EXPECT_TRUE(
      parity::explains(d, "s", candidate_error("TypeError", "ptp() got an unexpected keyword argument 'keepdims'")));
  EXPECT_TRUE(parity::explains(d, "s", candidate_error("TypeError", "count_nonzero() got an unexpected keyword")));
  EXPECT_FALSE(parity::explains(d, "s", candidate_error("TypeError", "sum() got an unexpected keyword")));
}

TEST(Explains, OnlyTheCandidatesErrors) {
  const Difference d = one({{"id", "e"}, {"check", "error"}, {"reason", "r"}});
  EXPECT_TRUE(parity::explains(d, "s", candidate_error("ValueError", "x")));
  EXPECT_FALSE(parity::explains(d, "s", candidate_error("ValueError", "x", "gold")));
}

TEST(Explains, ScenariosAreExactIdsOrGlobs) {
  json entry = kFreshC;
  entry["scenarios"] = {"layouts.*", "stats.iqr[axis=0]"};
  const Difference d = one(entry);
  EXPECT_TRUE(parity::explains(d, "layouts.orders[order=C]", layout_failure(true)));
  EXPECT_TRUE(parity::explains(d, "stats.iqr[axis=0]", layout_failure(true)));  // '[' taken literally as the id
  EXPECT_FALSE(parity::explains(d, "stats.iqr[axis=1]", layout_failure(true)));
  EXPECT_FALSE(parity::explains(d, "views.t", layout_failure(true)));
}

// --- apply_differences and use ----------------------------------------------------------------------------------

ScenarioOutcome failing(std::vector<Check> checks, const std::string& status = "fail") {
  ScenarioOutcome out;
  out.id = "views.t";
  out.status = status;
  out.message = "failed checks: ...";
  out.checks = std::move(checks);
  out.checks.push_back({"values", true, "outputs", "", {{"leaves", 1}}});
  return out;
}

TEST(ApplyDifferences, AllFailuresExplainedMakesAnXfailNamingThem) {
  ScenarioOutcome out = failing({layout_failure(true), layout_failure(true)});
  parity::apply_differences(parse(json::array({kFreshC})), out);
  EXPECT_EQ(out.status, "xfail");
  EXPECT_EQ(out.message, "declared differences of the candidate: fresh-c (layout)");
  for (int i : {0, 1}) {
    EXPECT_EQ(out.checks[i].details.at("difference"), "fresh-c");
    EXPECT_EQ(out.checks[i].details.at("xfail"), "results are new C-contiguous arrays");
  }
  EXPECT_FALSE(out.checks[2].details.contains("difference"));  // a passed check is not marked
}

TEST(ApplyDifferences, AnUnexplainedFailureKeepsTheScenarioFailing) {
  ScenarioOutcome out = failing({layout_failure(true), layout_failure(false)});
  parity::apply_differences(parse(json::array({kFreshC})), out);
  EXPECT_EQ(out.status, "fail");
  EXPECT_EQ(out.message, "failed checks: ...");
  EXPECT_TRUE(out.checks[0].details.contains("difference"));  // still marked, so the report shows which is known
  EXPECT_FALSE(out.checks[1].details.contains("difference"));
}

TEST(ApplyDifferences, ExplainsAnErroredCandidateRun) {
  ScenarioOutcome out = failing({candidate_error("AttributeError", "no flags")}, "error");
  parity::apply_differences(parse(json::array({{{"id", "no-flags"}, {"check", "error"}, {"reason", "r"}}})), out);
  EXPECT_EQ(out.status, "xfail");
}

TEST(ApplyDifferences, LeavesOtherVerdictsAndTheScenariosOwnXfailAlone) {
  for (const char* status : {"pass", "xpass", "skip", "xfail"}) {
    ScenarioOutcome out = failing({layout_failure(true)}, status);
    parity::apply_differences(parse(json::array({kFreshC})), out);
    EXPECT_EQ(out.status, status);
  }
  // A check the scenario's own xfail expects keeps that reason; the rest decides.
  Check expected = layout_failure(true);
  expected.details["xfail"] = "the scenario's reason";
  ScenarioOutcome out = failing({expected, layout_failure(true)});
  parity::apply_differences(parse(json::array({kFreshC})), out);
  EXPECT_EQ(out.status, "xfail");
  EXPECT_EQ(out.checks[0].details.at("xfail"), "the scenario's reason");
  EXPECT_FALSE(out.checks[0].details.contains("difference"));
}

TEST(DifferenceUse, CountsChecksAndScenariosAndFindsStaleOnes) {
  const auto differences = parse(json::array({kFreshC, {{"id", "never"}, {"check", "dtype"}, {"reason", "r"}}}));
  std::vector<ScenarioOutcome> outcomes = {failing({layout_failure(true), layout_failure(true)}),
                                           failing({layout_failure(true)}), failing({layout_failure(false)})};
  for (ScenarioOutcome& o : outcomes) parity::apply_differences(differences, o);
  const auto use = parity::difference_use(differences, outcomes);
  EXPECT_EQ(use.at("fresh-c").checks, 3);
  EXPECT_EQ(use.at("fresh-c").scenarios, 2);
  EXPECT_EQ(use.at("never").checks, 0);

  parity::CompareReport report;
  report.differences = differences;
  report.scenarios = {outcomes[0], outcomes[1]};
  EXPECT_EQ(report.stale_differences(), std::vector<std::string>{"never"});
  report.scenarios[0].status = report.scenarios[1].status = "xfail";
  EXPECT_FALSE(report.failed());  // stale declarations fail a run only when it is strict
  report.strict_differences = true;
  EXPECT_TRUE(report.failed());

  const json j = parity::differences_json(differences, outcomes);
  EXPECT_EQ(j[0].at("checks_explained"), 3);
  EXPECT_EQ(j[0].at("scenarios_explained"), 2);
  EXPECT_EQ(j[1].at("checks_explained"), 0);
  EXPECT_EQ(j[1].at("reason"), "r");
}

}  // namespace
