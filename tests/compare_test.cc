// Unit tests of the leaf-by-leaf checks (compare_outputs) and of scenario verdicts (compare_runs).
#include "compare.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <pugixml.hpp>
#include <set>
#include <string>
#include <vector>

#include "codec.h"
#include "compare_internal.h"
#include "deadline.h"
#include "json_report.h"
#include "junit.h"
#include "manifest.h"
#include "test_support.h"

namespace py = pybind11;
namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace parity;
using parity::testing::contains;
using parity::testing::TempDir;

namespace {

// Leaked on purpose: the interpreter is never finalized, so nothing may be released after main returns.
py::dict& scope() {
  static py::dict* s = [] {
    auto* d = new py::dict();
    (*d)["__name__"] = "parity_test";
    py::exec(R"(
import numpy as np
class MyArray(np.ndarray):
    pass
def readonly(a):
    a.setflags(write=False)
    return a
# Importable by name, as a backend's module is, so that the subclass-ok policy can find MyArray's class.
import sys, types
sys.modules["parity_test"] = types.ModuleType("parity_test")
sys.modules["parity_test"].MyArray = MyArray
)",
             *d);
    return d;
  }();
  return *s;
}

py::object eval(const std::string& expr) { return py::eval(expr, scope()); }

// Nodes come from the codec, so each test compares exactly what `parity compare` would read from disk.
class CompareOutputs : public ::testing::Test {
 protected:
  Node node(const std::string& expr) {
    const fs::path file = dir_.path() / ("n" + std::to_string(count_++) + ".parity");
    write_result(file, eval(expr));
    return read_result(file);
  }
  CheckList check(const std::string& gold, const std::string& candidate, const Policy& policy = {}) {
    return compare_outputs(node(gold), node(candidate), policy);
  }

  TempDir dir_;
  int count_ = 0;
};

std::vector<Check> of_kind(const CheckList& list, const std::string& check) {
  std::vector<Check> out;
  std::copy_if(list.failures.begin(), list.failures.end(), std::back_inserter(out),
               [&](const Check& c) { return c.check == check; });
  return out;
}

std::string describe(const CheckList& list) {
  std::string s;
  for (const Check& c : list.failures) s += "[" + c.check + "] " + c.path + ": " + c.message + "\n";
  return s;
}

// Passed to one_failure for a check kind or path that the test does not pin down.
const std::string kAny;

// Passes when `list` has exactly one failure, of kind `check` at `path` (kAny: either one unchecked), whose message
// contains every one of `parts`; otherwise says what differs and lists the failures.
::testing::AssertionResult one_failure(const CheckList& list, const std::string& check, const std::string& path,
                                       const std::vector<std::string>& parts = {}) {
  if (list.failures.size() != 1)
    return ::testing::AssertionFailure() << list.failures.size() << " failures, expected 1:\n" << describe(list);
  const Check& f = list.failures[0];
  std::string wrong;
  if (!check.empty() && f.check != check) wrong += "check is '" + f.check + "', expected '" + check + "'\n";
  if (!path.empty() && f.path != path) wrong += "path is " + f.path + ", expected " + path + "\n";
  for (const std::string& part : parts)
    if (!contains(f.message, part)) wrong += "message lacks '" + part + "'\n";
  if (wrong.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << "in:\n" << describe(list);
}

// ---------------------------------------------------------------------------------------------------------
// Zero strides and time limits (issue #16, D6)

TEST_F(CompareOutputs, BroadcastsAreComparedByTheirDistinctElements) {
  // 10^12 elements each; walked one by one this would take hours.
  const CheckList list = check("np.broadcast_to(np.arange(3.0), (10**6, 10**6, 3))",
                               "np.broadcast_to(np.array([0.0, 1.0, 2.5]), (10**6, 10**6, 3))");
  const auto values = of_kind(list, "values");
  ASSERT_EQ(values.size(), 1u) << describe(list);
  EXPECT_EQ(values[0].details.at("total"), 3'000'000'000'000LL);
  EXPECT_EQ(values[0].details.at("mismatched"), 1'000'000'000'000LL);
  EXPECT_EQ(values[0].details.at("first").at(0).at("index"), json::array({0, 0, 2}));
  EXPECT_TRUE(contains(values[0].message, "Mismatched elements: 1000000000000 / 3000000000000"));
}

TEST_F(CompareOutputs, AWalkPastItsDeadlineStops) {
  const Node g = node("np.broadcast_to(np.zeros((1, 4000)), (4000, 4000))");
  const Node c = node("np.broadcast_to(np.zeros((4000, 1)), (4000, 4000))");  // no axis both repeat
  const ScopedDeadline deadline(1e-9);
  EXPECT_THROW(compare_outputs(g, c, Policy{}), TimeLimitExceeded);
}

// ---------------------------------------------------------------------------------------------------------
// Trees that agree

TEST_F(CompareOutputs, IdenticalTreesPassEveryCheck) {
  const std::string tree =
      "{'a': np.arange(6.0).reshape(2, 3), 'l': [1, 2.5, 'x', b'y', None, True],"
      " 't': (np.float32(1.5), 1+2j), 'n': float('nan')}";
  const CheckList r = check(tree, tree);
  EXPECT_TRUE(r.failures.empty()) << describe(r);
  // Ten leaves, each with a values check; thirteen nodes, each with a type check; one array pair with
  // layout checks.
  EXPECT_EQ(r.passed.at("values"), 10);
  EXPECT_EQ(r.passed.at("type"), 13);
  EXPECT_GE(r.passed.at("structure"), 3);
  EXPECT_EQ(r.passed.at("shape"), 1);
  EXPECT_EQ(r.passed.at("layout"), 1);
  EXPECT_EQ(r.passed.at("writeable"), 1);
  EXPECT_GE(r.passed.at("dtype"), 1);
}

TEST_F(CompareOutputs, PolicyToleranceIsUsed) {
  Policy loose;
  loose.tolerance.rtol = 0.1;
  EXPECT_TRUE(check("{'x': np.array([1.0]), 'y': 1.0}", "{'x': np.array([1.05]), 'y': 1.05}", loose).failures.empty());
  const CheckList strict = check("{'x': np.array([1.0]), 'y': 1.0}", "{'x': np.array([1.05]), 'y': 1.05}");
  EXPECT_EQ(of_kind(strict, "values").size(), 2u) << describe(strict);
}

// ---------------------------------------------------------------------------------------------------------
// structure

TEST_F(CompareOutputs, DictKeysOnOneSideAreNamed) {
  Policy policy;
  policy.gold_name = "numpy", policy.candidate_name = "fsproxy";
  const CheckList r = check("{'a': 1, 'b': 2, 'c': 3}", "{'a': 1, 'd': 4}", policy);
  ASSERT_TRUE(one_failure(r, "structure", "outputs", {"only in numpy: 'b', 'c'", "only in fsproxy: 'd'"}));
  const Check& f = r.failures[0];
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.details.at("only_gold"), json({"b", "c"}));
  EXPECT_EQ(f.details.at("only_candidate"), json({"d"}));
  EXPECT_EQ(r.passed.at("values"), 1);  // the shared key is still compared
}

TEST_F(CompareOutputs, NestedPathsNameEveryLevel) {
  const CheckList r = check("{'x': {'y': [0, (1, 2)]}}", "{'x': {'y': [0, (1, 3)]}}");
  ASSERT_TRUE(one_failure(r, "values", "outputs['x']['y'][1][1]"));
}

TEST_F(CompareOutputs, ListLengthDiffersAndCommonPrefixIsStillCompared) {
  const CheckList r = check("{'l': [1, 2, 3]}", "{'l': [1, 5]}");
  const auto structure = of_kind(r, "structure");
  ASSERT_EQ(structure.size(), 1u) << describe(r);
  EXPECT_EQ(structure[0].path, "outputs['l']");
  EXPECT_TRUE(contains(structure[0].message, "list length differs")) << structure[0].message;
  EXPECT_TRUE(contains(structure[0].message, "gold 3, candidate 2")) << structure[0].message;
  const auto values = of_kind(r, "values");
  ASSERT_EQ(values.size(), 1u) << describe(r);
  EXPECT_EQ(values[0].path, "outputs['l'][1]");
}

TEST_F(CompareOutputs, TupleLengthDiffers) {
  const CheckList r = check("(1, 2)", "(1, 2, 3)");
  ASSERT_TRUE(one_failure(r, "structure", kAny, {"tuple length differs"}));
}

TEST_F(CompareOutputs, ContainerAgainstLeaf) {
  const CheckList r = check("{'a': [1]}", "{'a': 1}");
  ASSERT_TRUE(one_failure(r, "structure", "outputs['a']", {"list", "int"}));

  const CheckList reverse = check("{'a': np.zeros(2)}", "{'a': {'b': 1}}");
  ASSERT_EQ(of_kind(reverse, "structure").size(), 1u) << describe(reverse);
}

TEST_F(CompareOutputs, ListAgainstTuple) {
  const CheckList r = check("[1, 2]", "(1, 2)");
  ASSERT_EQ(of_kind(r, "structure").size(), 1u) << describe(r);
  EXPECT_TRUE(contains(r.failures[0].message, "container kind differs")) << r.failures[0].message;
}

// ---------------------------------------------------------------------------------------------------------
// type

TEST_F(CompareOutputs, NumpyScalarAgainstPythonFloatIsATypeDifferenceOnly) {
  const CheckList r = check("{'x': np.float64(1.0)}", "{'x': 1.0}");
  ASSERT_TRUE(one_failure(r, "type", "outputs['x']", {"numpy.float64", "builtins.float"}));
}

TEST_F(CompareOutputs, IntAgainstFloatIsATypeDifference) { ASSERT_TRUE(one_failure(check("1", "1.0"), "type", kAny)); }

TEST_F(CompareOutputs, SubclassNeedsTypeMapEntry) {
  const std::string gold = "{'a': np.arange(3.0)}", cand = "{'a': np.arange(3.0).view(MyArray)}";
  const CheckList unmapped = check(gold, cand);
  ASSERT_TRUE(one_failure(unmapped, "type", kAny, {"parity_test.MyArray"}));

  Policy mapped;
  mapped.type_map = {{"numpy.ndarray", "parity_test.MyArray"}};
  const CheckList r = check(gold, cand, mapped);
  EXPECT_TRUE(r.failures.empty()) << describe(r);
  EXPECT_EQ(r.passed.at("values"), 1);
}

TEST_F(CompareOutputs, TypeMapExpectationIsEnforced) {
  Policy mapped;
  mapped.type_map = {{"numpy.ndarray", "parity_test.MyArray"}};
  const CheckList r = check("np.arange(3.0)", "np.arange(3.0)", mapped);
  ASSERT_TRUE(one_failure(r, "type", kAny, {"TYPE_MAP"}));
  EXPECT_EQ(r.failures[0].details.at("expected"), "parity_test.MyArray");
}

// ---------------------------------------------------------------------------------------------------------
// shape, dtype, layout, writeable

TEST_F(CompareOutputs, ShapeDiffersAndValuesAreNotCompared) {
  const CheckList r = check("{'a': np.zeros(3)}", "{'a': np.ones(4)}");
  ASSERT_TRUE(one_failure(r, "shape", kAny, {"(3,)", "(4,)"}));
  EXPECT_EQ(r.passed.count("values"), 0u);

  const CheckList transposed = check("np.zeros((2, 3))", "np.zeros((3, 2))");
  ASSERT_EQ(of_kind(transposed, "shape").size(), 1u) << describe(transposed);
}

TEST_F(CompareOutputs, ByteOrderIsADtypeDifference) {
  const CheckList r = check("{'a': np.arange(4.0).astype('>f8')}", "{'a': np.arange(4.0).astype('<f8')}");
  ASSERT_TRUE(one_failure(r, "dtype", "outputs['a']", {"big-endian", "little-endian"}));
  EXPECT_EQ(r.passed.at("values"), 1);  // equal values despite the byte order
}

TEST_F(CompareOutputs, PrecisionIsADtypeDifference) {
  const CheckList r = check("np.arange(4.0)", "np.arange(4.0, dtype=np.float32)");
  ASSERT_TRUE(one_failure(r, "dtype", kAny, {"float64", "float32"}));
}

TEST_F(CompareOutputs, COrderAgainstFOrderIsALayoutDifference) {
  const CheckList r =
      check("{'a': np.arange(12.0).reshape(3, 4)}", "{'a': np.asfortranarray(np.arange(12.0).reshape(3, 4))}");
  ASSERT_TRUE(one_failure(r, "layout", "outputs['a']", {"C-contiguous", "F-contiguous"}));
  EXPECT_EQ(r.passed.at("values"), 1);
}

TEST_F(CompareOutputs, StridedViewAgainstCopyIsALayoutDifference) {
  const CheckList r =
      check("np.arange(12.0).reshape(3, 4)[:, ::2]", "np.ascontiguousarray(np.arange(12.0).reshape(3, 4)[:, ::2])");
  ASSERT_TRUE(one_failure(r, "layout", kAny, {"non-contiguous"}));
}

TEST_F(CompareOutputs, WriteableFlagDiffers) {
  const CheckList r = check("{'a': np.arange(3.0)}", "{'a': readonly(np.arange(3.0))}");
  ASSERT_TRUE(one_failure(r, "writeable", kAny, {"read-only"}));
  EXPECT_EQ(r.failures[0].details.at("gold"), true);
  EXPECT_EQ(r.failures[0].details.at("candidate"), false);
}

TEST_F(CompareOutputs, WriteablePolicyIgnoreSkipsTheCheckWithoutCountingIt) {
  Policy policy;
  policy.choice.writeable = "ignore";
  const CheckList r = check("{'a': np.arange(3.0)}", "{'a': readonly(np.arange(3.0))}", policy);
  EXPECT_TRUE(r.failures.empty()) << describe(r);
  EXPECT_EQ(r.passed.count("writeable"), 0u);  // not run, so not a pass either
  // Everything else is still checked.
  ASSERT_TRUE(one_failure(check("np.arange(3.0)", "readonly(np.arange(3.0) * 2)", policy), "values", kAny));
}

// ---------------------------------------------------------------------------------------------------------
// scalar and order policies

TEST_F(CompareOutputs, ScalarPolicyLetsAZeroDArrayStandForANumpyScalarBothWays) {
  Policy relaxed;
  relaxed.choice.scalar = "0d-ok";
  for (const auto& [gold, cand] :
       {std::pair{"np.float64(1.5)", "np.array(1.5)"}, std::pair{"np.array(1.5)", "np.float64(1.5)"}}) {
    SCOPED_TRACE(std::string(gold) + " against " + cand);
    EXPECT_TRUE(one_failure(check(gold, cand), "type", kAny, {"the scalar policy 0d-ok would accept it"}));
    const CheckList r = check(gold, cand, relaxed);
    EXPECT_TRUE(r.failures.empty()) << describe(r);
    EXPECT_EQ(r.passed.at("type"), 1);
    EXPECT_EQ(r.passed.at("values"), 1);
  }
  // Values and dtypes are still compared, and only a 0-d plain array stands for a scalar.
  EXPECT_TRUE(one_failure(check("np.float64(1.5)", "np.array(3.0)", relaxed), "values", kAny));
  EXPECT_TRUE(one_failure(check("np.float64(1.5)", "np.array(1.5, dtype=np.float32)", relaxed), "dtype", kAny));
  EXPECT_TRUE(one_failure(check("np.float64(1.5)", "np.array([1.5])", relaxed), "type", kAny));
}

TEST_F(CompareOutputs, OrderPolicySortedComparesArraysAfterSorting) {
  Policy sorted;
  sorted.choice.order = "sorted";
  const std::string gold = "np.array([3.0, np.nan, 1.0, 2.0])", permuted = "np.array([np.nan, 1.0, 2.0, 3.0])";
  EXPECT_TRUE(one_failure(check(gold, permuted), "values", kAny));
  const CheckList r = check(gold, permuted, sorted);
  EXPECT_TRUE(r.failures.empty()) << describe(r);
  // A wrong value still fails, its index being the sorted order's, and the message says so.
  const CheckList wrong = check(gold, "np.array([np.nan, 1.0, 2.0, 6.0])", sorted);
  ASSERT_TRUE(one_failure(wrong, "values", "outputs",
                          {"compared after sorting (policy order: sorted)", "positions in the sorted order", "[2]:"}));
  EXPECT_EQ(wrong.failures[0].details.at("order"), "sorted");
  // Rows of an N-D array are kept whole: permuted rows pass, values moved between rows fail.
  const std::string rows = "np.array([[2, 1], [1, 5], [1, 2]])";
  EXPECT_TRUE(check(rows, "np.array([[1, 2], [2, 1], [1, 5]])", sorted).failures.empty());
  EXPECT_TRUE(one_failure(check(rows, "np.array([[1, 1], [2, 5], [1, 2]])", sorted), "values", kAny));
  // The layout checks look at the arrays as produced.
  EXPECT_TRUE(one_failure(check("np.ones((2, 2))", "np.asfortranarray(np.ones((2, 2)))", sorted), "layout", kAny));
}

TEST_F(CompareOutputs, OrderPolicySortedComparesSequencesOfScalarsAfterSorting) {
  Policy sorted;
  sorted.choice.order = "sorted";
  EXPECT_FALSE(check("[3, 1, 2]", "[1, 2, 3]").failures.empty());
  for (const auto& [gold, cand] :
       {std::pair{"[3, 1, 2]", "[1, 2, 3]"}, std::pair{"(float('nan'), 0.5, -1.0)", "(-1.0, 0.5, float('nan'))"},
        std::pair{"['b', 'a']", "['a', 'b']"}}) {
    SCOPED_TRACE(std::string(gold) + " against " + cand);
    const CheckList r = check(gold, cand, sorted);
    EXPECT_TRUE(r.failures.empty()) << describe(r);
  }
  ASSERT_TRUE(one_failure(check("[3, 1, 2]", "[1, 2, 4]", sorted), "values", "outputs[2]",
                          {"compared after sorting (policy order: sorted)"}));
  // Elements without a common order are compared as produced.
  EXPECT_FALSE(check("[1, 'a']", "['a', 1]", sorted).failures.empty());
}

// ---------------------------------------------------------------------------------------------------------
// values

TEST_F(CompareOutputs, ValuesMessageFollowsNumpyTesting) {
  Policy policy;
  policy.gold_name = "numpy", policy.candidate_name = "fsproxy";
  const CheckList r = check("{'v': np.arange(4.0)}", "{'v': np.array([0.0, 1.0, 2.5, 3.0])}", policy);
  ASSERT_TRUE(
      one_failure(r, "values", "outputs['v']",
                  {"Not equal to tolerance rtol=1e-07, atol=0", "Mismatched elements: 1 / 4 (25%)",
                   "(index: numpy | fsproxy)", "[2]: 2.0 | 2.5", "Max absolute difference among violations: 0.5",
                   "Max relative difference among violations: 0.25"}));
  const Check& f = r.failures[0];
  EXPECT_NE(f.message.back(), '\n');
  EXPECT_EQ(f.details.at("criterion"), "allclose");
  EXPECT_EQ(f.details.at("mismatched"), 1);
  EXPECT_EQ(f.details.at("total"), 4);
  EXPECT_DOUBLE_EQ(f.details.at("max_abs_diff").get<double>(), 0.5);
  EXPECT_EQ(f.details.at("first").at(0).at("index"), json({2}));
}

TEST_F(CompareOutputs, ValuesDetailsMapWhereTheMismatchesAreAndTheMessageDoesNot) {
  const CheckList r =
      check("{'m': np.arange(6.0).reshape(2, 3)}", "{'m': np.array([[0.0, 1.5, 2.0], [3.0, 4.0, 9.0]])}");
  ASSERT_TRUE(one_failure(r, "values", "outputs['m']"));
  const Check& f = r.failures[0];
  EXPECT_EQ(f.details.at("map"),
            json({{"shape", {2, 3}}, {"grid", {2, 3}}, {"counts", {0, 1, 0, 0, 0, 1}}, {"sizes", {1, 1, 1, 1, 1, 1}}}));
  EXPECT_FALSE(contains(f.message, "map") || contains(f.message, "counts")) << f.message;
  // A Python float is compared as a 0-d array: nothing to draw.
  const CheckList scalar = check("{'x': 1.5}", "{'x': 2.5}");
  ASSERT_TRUE(one_failure(scalar, "values", "outputs['x']"));
  EXPECT_FALSE(scalar.failures[0].details.contains("map"));
}

TEST_F(CompareOutputs, ExactIntegerMessageMeasuresTheDifference) {
  const CheckList r = check("np.array([[1, 2], [3, 4]])", "np.array([[1, 2], [3, 5]])");
  ASSERT_TRUE(one_failure(r, kAny, kAny,
                          {"Not equal (exact comparison, compared as int)", "Mismatched elements: 1 / 4",
                           "[1, 1]: 4 | 5", "Max absolute difference among violations: 1 at [1, 1]"}));
}

// The name an inexact kind is compared as is NumPy's str() of it (looked up once per type), in the message and the
// details alike.
TEST_F(CompareOutputs, InexactMessagesNameTheTypeAsNumPyPrintsIt) {
  for (const auto& [values, name] :
       std::vector<std::pair<std::string, std::string>>{{"np.array([1.0, {}], dtype=np.float32)", "float64"},
                                                        {"np.array([1.0, {}], dtype=np.longdouble)", "float128"},
                                                        {"np.array([1.0, {}], dtype=np.complex64)", "complex128"},
                                                        {"np.array([1.0, {}], dtype=np.clongdouble)", "complex256"}}) {
    const auto with = [&](const char* x) {
      return values.substr(0, values.find("{}")) + x + values.substr(values.find("{}") + 2);
    };
    for (int twice = 0; twice < 2; ++twice) {
      const CheckList r = check(with("2.0"), with("3.0"));
      ASSERT_TRUE(one_failure(r, "values", kAny, {"compared as " + name + ")"})) << values;
      EXPECT_EQ(r.failures[0].details.at("compared_as"), name) << values;
    }
  }
}

TEST_F(CompareOutputs, ExactStringMessageHasNoDifferences) {
  const CheckList r = check("np.array(['a', 'b'])", "np.array(['a', 'c'])");
  ASSERT_TRUE(one_failure(r, kAny, kAny, {"Not equal (exact comparison, compared as <U1)", "[1]: 'b' | 'c'"}));
  EXPECT_FALSE(contains(r.failures[0].message, "Max absolute difference")) << r.failures[0].message;
  EXPECT_FALSE(r.failures[0].details.contains("max_abs_diff"));
}

TEST_F(CompareOutputs, NaNAndInfLocationsAreReportedApartFromValues) {
  const CheckList r = check("np.array([1.0, 2.0, np.inf, 4.0, 5.0])", "np.array([1.0, np.nan, -np.inf, 4.5, 5.0])");
  ASSERT_TRUE(
      one_failure(r, "values", kAny,
                  {"Mismatched elements: 3 / 5 (60%)",
                   "NaN/inf locations differ at 2 (NaN on one side only: 1, infinity differs: 1)",
                   "  [1]: 2.0 | nan\n  [2]: inf | -inf\n", "Max absolute difference among violations: 0.5 at [3]"}));
  const json& d = r.failures[0].details;
  EXPECT_EQ(d.at("nan_mismatched"), 1);
  EXPECT_EQ(d.at("inf_mismatched"), 1);
  EXPECT_EQ(d.at("first_nonfinite").size(), 2u);
  EXPECT_EQ(d.at("first_nonfinite").at(0).at("kind"), "nan");
  EXPECT_EQ(d.at("first").at(2).at("kind"), "value");
  EXPECT_EQ(d.at("max_abs_index"), json({3}));
}

TEST_F(CompareOutputs, OnlyNaNLocationsDifferingHasNoMaxDifference) {
  const CheckList r = check("np.array([1.0, 2.0])", "np.array([1.0, np.nan])");
  ASSERT_TRUE(one_failure(r, kAny, kAny, {"NaN on one side only: 1"}));
  EXPECT_FALSE(contains(r.failures[0].message, "Max absolute")) << r.failures[0].message;
}

// ---------------------------------------------------------------------------------------------------------
// Tolerances: per dtype, per scenario, per path; signed zeros

TEST_F(CompareOutputs, Float16DefaultToleranceIsLooserThanFloat64s) {
  EXPECT_TRUE(check("np.array([1.0], np.float16)", "np.array([1.0009765625], np.float16)").failures.empty());
  EXPECT_EQ(of_kind(check("np.array([1.0])", "np.array([1.0009765625])"), "values").size(), 1u);
  EXPECT_TRUE(check("np.array([1.0], np.float32)", "np.array([1.0000005], np.float32)").failures.empty());
  const CheckList r = check("np.array([1.0], np.float32)", "np.array([1.00001], np.float32)");
  ASSERT_TRUE(one_failure(r, "values", kAny, {"rtol=1e-06"}));
}

TEST_F(CompareOutputs, ScenarioToleranceOverridesTheDtypeDefault) {
  Policy policy;
  policy.tolerance.rtol = 0.0;
  EXPECT_EQ(
      of_kind(check("np.array([1.0], np.float16)", "np.array([1.0009765625], np.float16)", policy), "values").size(),
      1u);
}

TEST_F(CompareOutputs, PathToleranceCoversItsSubtreeOnly) {
  Policy policy;
  policy.by_path["outputs['loose']"].rtol = 0.1;
  const CheckList r =
      check("{'loose': [np.array([1.0])], 'loosely': np.array([1.0]), 'strict': np.array([1.0])}",
            "{'loose': [np.array([1.05])], 'loosely': np.array([1.05]), 'strict': np.array([1.05])}", policy);
  std::set<std::string> paths;
  for (const Check& f : of_kind(r, "values")) paths.insert(f.path);
  EXPECT_EQ(paths, (std::set<std::string>{"outputs['loosely']", "outputs['strict']"})) << describe(r);
}

TEST_F(CompareOutputs, LongestPathToleranceWins) {
  Policy policy;
  policy.tolerance.rtol = 0.5;
  policy.by_path["outputs['a']"].rtol = 0.0;
  policy.by_path["outputs['a']['b']"].atol = 1.0;  // rtol still 0 from outputs['a']? no: each path is applied alone
  const CheckList r = check("{'a': {'b': np.array([1.0]), 'c': np.array([1.0])}}",
                            "{'a': {'b': np.array([1.5]), 'c': np.array([1.25])}}", policy);
  ASSERT_TRUE(one_failure(r, "values", "outputs['a']['c']", {"rtol=0, atol=0"}));
}

TEST_F(CompareOutputs, APathToleranceThatAppliesToNothingIsAnErrorNamingIt) {
  Policy policy;
  policy.by_path["outputs['x']"].rtol = 0.1;   // applies
  policy.by_path["outputs['xs']"].rtol = 0.1;  // a typo: no such output
  const CheckList r = check("{'x': np.array([1.0])}", "{'x': np.array([1.05])}", policy);
  ASSERT_TRUE(one_failure(r, "error", "outputs['xs']", {"tolerances name outputs['xs']", "no values compared"}));
  EXPECT_EQ(r.failures[0].details.at("tolerances_path"), "outputs['xs']");
}

TEST_F(CompareOutputs, SignedZerosAreEqualUnlessTheScenarioAsks) {
  EXPECT_TRUE(check("np.array([0.0, -0.0])", "np.array([-0.0, 0.0])").failures.empty());
  Policy policy;
  policy.signed_zeros = true;
  const CheckList r = check("np.array([0.0, -0.0, 1.0])", "np.array([-0.0, -0.0, 1.0])", policy);
  ASSERT_TRUE(one_failure(r, "values", kAny, {"signed zeros distinct", "Signed zeros differ at 1", "[0]: 0.0 | -0.0"}));
  EXPECT_EQ(r.failures[0].details.at("signed_zero_mismatched"), 1);
}

// ---------------------------------------------------------------------------------------------------------
// Policies: dtype, layout (and strides), type

// Each relaxing policy value: a pair it lets pass, and a pair that still fails it with the policy named.
struct PolicyCase {
  const char* name;
  const char* value;
  const char* passing_gold;
  const char* passing_candidate;
  const char* failing_gold;
  const char* failing_candidate;
  const char* check;
  const char* message;
};

TEST_F(CompareOutputs, RelaxingPoliciesPassWhatTheyAllowAndNoMore) {
  const PolicyCase cases[] = {
      {"dtype", "native-order-ok", "np.arange(3.0)", "np.arange(3.0).astype('>f8')", "np.arange(3.0)",
       "np.arange(3.0).astype('>f4')", "dtype", "(policy native-order-ok)"},
      {"dtype", "kind", "np.arange(3.0)", "np.arange(3.0).astype('>f4')", "np.arange(3)", "np.arange(3.0)", "dtype",
       "(policy kind)"},
      // The other way round is no subclass: still a type failure, and the message says why.
      {"type", "subclass-ok", "np.arange(3.0)", "np.arange(3.0).view(MyArray)", "np.arange(3.0).view(MyArray)",
       "np.arange(3.0)", "type", "policy subclass-ok"},
  };
  for (const PolicyCase& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " " + c.value);
    Policy policy;
    policy.choice.set(c.name, c.value);
    EXPECT_TRUE(check(c.passing_gold, c.passing_candidate, policy).failures.empty());
    EXPECT_FALSE(check(c.passing_gold, c.passing_candidate).failures.empty());  // the default policy fails it
    EXPECT_TRUE(one_failure(check(c.failing_gold, c.failing_candidate, policy), c.check, kAny, {c.message}));
  }
}

// The same values, both non-contiguous (so the contiguity check passes): strides (32, 16) against (48, 24).
const char* const kStridedGold = "np.arange(12.0).reshape(3, 4)[:, ::2]";
const char* const kStridedOther = "(np.arange(12.0).reshape(3, 4)[:, ::2]).repeat(3, 1)[:, ::3]";

TEST_F(CompareOutputs, StridesAreNotComparedByDefault) {
  EXPECT_TRUE(check(kStridedGold, kStridedOther).failures.empty()) << describe(check(kStridedGold, kStridedOther));
}

TEST_F(CompareOutputs, StridesPolicyComparesExactStrides) {
  Policy policy;
  policy.choice.layout = "strides";
  EXPECT_TRUE(check(kStridedGold, kStridedGold, policy).failures.empty());
  const CheckList r = check(kStridedGold, kStridedOther, policy);
  ASSERT_TRUE(
      one_failure(r, "strides", "outputs", {"strides differ (policy strides): gold (32, 16), candidate (48, 24)"}));
  EXPECT_EQ(r.passed.at("layout"), 1);
}

TEST_F(CompareOutputs, StridesOfLengthOneAxesAndEmptyArraysDoNotCount) {
  Policy policy;
  policy.choice.layout = "strides";
  EXPECT_TRUE(
      check("np.ones((3, 1))", "np.lib.stride_tricks.as_strided(np.ones(3), (3, 1), (8, 0))", policy).failures.empty());
  EXPECT_TRUE(check("np.ones((0, 4))", "np.ones((4, 0)).T", policy).failures.empty());
}

TEST_F(CompareOutputs, LayoutPolicyIgnoreSkipsLayoutButNotWriteable) {
  Policy policy;
  policy.choice.layout = "ignore";
  EXPECT_TRUE(check("np.ones((2, 3))", "np.asfortranarray(np.ones((2, 3)))", policy).failures.empty());
  ASSERT_TRUE(one_failure(check("np.ones(2)", "readonly(np.ones(2))", policy), "writeable", kAny));
}

TEST_F(CompareOutputs, LayoutFailureShowsBothSidesSideBySide) {
  const CheckList r = check("{'m': np.ones((2, 3))}", "{'m': np.asfortranarray(np.ones((2, 3)))}");
  ASSERT_TRUE(one_failure(r, "layout", "outputs['m']",
                          {"gold", "candidate", "  dtype         <f8", "  strides       (24, 8)", "(8, 16)\n",
                           "  c_contiguous  yes", "  f_contiguous  no", "  aligned       yes", "  writeable     yes",
                           "  type          numpy.ndarray", "  memmap        no"}));
  const json& table = r.failures[0].details.at("table");
  EXPECT_EQ(table.at("gold").at("strides"), "(24, 8)");
  EXPECT_EQ(table.at("candidate").at("f_contiguous"), true);
  EXPECT_EQ(table.at("gold").at("attributes"), "none");
}

TEST_F(CompareOutputs, LayoutFailureOfASubclassListsItsAttributesOnEachSide) {
  const CheckList r = check("np.ma.masked_array(np.ones((2, 3)), mask=[[0, 1, 0], [0, 0, 0]])",
                            "np.ma.masked_array(np.asfortranarray(np.ones((2, 3))), mask=[[0, 1, 0], [0, 0, 0]])");
  ASSERT_FALSE(r.failures.empty());
  const Check& layout = r.failures[0];
  ASSERT_EQ(layout.check, "layout") << layout.message;
  const std::string attributes = layout.details.at("table").at("gold").at("attributes");
  EXPECT_NE(attributes.find("mask"), std::string::npos) << attributes;
  EXPECT_NE(layout.message.find("  attributes    "), std::string::npos) << layout.message;
}

TEST_F(CompareOutputs, TypePolicyIgnore) {
  Policy policy;
  policy.choice.type = "ignore";
  EXPECT_TRUE(check("np.arange(3.0)", "np.arange(3.0).view(MyArray)", policy).failures.empty());
  EXPECT_EQ(check("[1]", "(1,)", policy).failures.size(), 1u);  // a container kind is structure, not type
}

TEST(PolicyChoice, RejectsUnknownNamesAndValues) {
  PolicyChoice choice;
  choice.set("layout", "strides");
  EXPECT_EQ(choice.layout, "strides");
  EXPECT_THROW(choice.set("layout", "loose"), std::invalid_argument);
  EXPECT_THROW(choice.set("colour", "exact"), std::invalid_argument);
}

TEST_F(CompareOutputs, PythonScalars) {
  EXPECT_TRUE(check("[1, 'x', b'y', None, True, 1.0, 2j, float('nan')]",
                    "[1, 'x', b'y', None, True, 1.0 + 1e-12, 2j, float('nan')]")
                  .failures.empty());
  for (const auto& [gold, cand] : std::vector<std::pair<std::string, std::string>>{{"1", "2"},
                                                                                   {"10**30", "10**30 + 1"},
                                                                                   {"'abc'", "'abd'"},
                                                                                   {"b'a'", "b'b'"},
                                                                                   {"True", "False"},
                                                                                   {"1.0", "1.1"},
                                                                                   {"1j", "2j"},
                                                                                   {"float('nan')", "0.0"}}) {
    SCOPED_TRACE(gold + " vs " + cand);
    ASSERT_TRUE(one_failure(check(gold, cand), "values", "outputs"));
  }
}

TEST_F(CompareOutputs, IntValuesMessageShowsBothNumbers) {
  ASSERT_TRUE(one_failure(check("{'n': 41}", "{'n': 42}"), kAny, kAny, {"gold 41, candidate 42"}));
}

TEST_F(CompareOutputs, StructuredDtypeIsComparedFieldByField) {
  const std::string dt = "np.dtype([('x', 'f8'), ('y', 'i4')])";
  const CheckList y = check("{'s': np.array([(1.0, 1), (2.0, 2)], dtype=" + dt + ")}",
                            "{'s': np.array([(1.0, 1), (2.0, 3)], dtype=" + dt + ")}");
  ASSERT_TRUE(one_failure(y, "values", "outputs['s'].field('y')", {"exact", "[1]: 2 | 3"}));
  EXPECT_EQ(y.failures[0].details.at("map").at("counts"), json({0, 1}));  // the field's own

  const CheckList x = check("{'s': np.array([(1.0, 1), (2.0, 2)], dtype=" + dt + ")}",
                            "{'s': np.array([(1.5, 1), (2.0, 2)], dtype=" + dt + ")}");
  ASSERT_TRUE(one_failure(x, kAny, "outputs['s'].field('x')", {"tolerance"}));

  Policy loose;
  loose.tolerance.rtol = 0.6;  // float field within tolerance, int field still exact
  EXPECT_TRUE(compare_outputs(node("np.array([(1.0, 1)], dtype=" + dt + ")"),
                              node("np.array([(1.5, 1)], dtype=" + dt + ")"), loose)
                  .failures.empty());
}

TEST_F(CompareOutputs, NestedStructuredFieldPath) {
  const std::string dt = "np.dtype([('p', [('q', 'f8'), ('r', 'i2')]), ('z', 'u1')])";
  const CheckList r =
      check("np.array([((1.0, 2), 3)], dtype=" + dt + ")", "np.array([((1.0, 7), 3)], dtype=" + dt + ")");
  ASSERT_TRUE(one_failure(r, kAny, "outputs.field('p').field('r')"));
}

TEST_F(CompareOutputs, StructuredFieldsOfDifferentElementShapesAreReportedNotThrown) {
  // Under the kind policy both dtypes are of kind V with the same names: the field's element shapes (2,) and (3,)
  // had reached the values kernel, which raised a bare NumPy ValueError for the whole compare.
  Policy kind;
  kind.choice.dtype = "kind";
  const CheckList r = compare_outputs(node("np.zeros(2, dtype=[('a', 'f8', (2,)), ('b', 'i4')])"),
                                      node("np.zeros(2, dtype=[('a', 'f8', (3,)), ('b', 'i4')])"), kind);
  ASSERT_TRUE(one_failure(r, "values", "outputs.field('a')", {"values not compared", "(2,)", "(3,)"}));
  // The exact policy reports the dtype, and still says the field's values were not compared.
  const CheckList exact = check("np.zeros(2, dtype=[('a', 'f8', (2,))])", "np.zeros(2, dtype=[('a', 'f8', (3,))])");
  EXPECT_EQ(of_kind(exact, "dtype").size(), 1u) << describe(exact);
  EXPECT_EQ(of_kind(exact, "values").size(), 1u) << describe(exact);
}

TEST_F(CompareOutputs, StructuredDtypeWithoutFieldsHasNothingToDiffer) {
  // np.dtype([]) holds no value: two such arrays of one shape are equal, not "uncompared ... shapes differ".
  const CheckList r = check("np.zeros(3, dtype=[])", "np.zeros(3, dtype=[])");
  EXPECT_TRUE(r.failures.empty()) << describe(r);
}

TEST_F(CompareOutputs, ValuesWithoutACommonDtypeAreReportedNotCompared) {
  const CheckList r = check("np.array(['2020-01-01'], dtype='M8[D]')", "np.array([18262])");
  EXPECT_EQ(of_kind(r, "dtype").size(), 1u) << describe(r);
  const auto values = of_kind(r, "values");
  ASSERT_EQ(values.size(), 1u) << describe(r);
  EXPECT_TRUE(contains(values[0].message, "values not compared")) << values[0].message;
}

TEST_F(CompareOutputs, StringArrayAgainstFloatArrayIsReportedNotThrown) {
  // A candidate returning numbers where gold returned text must fail its checks, not abort the compare.
  CheckList r;
  ASSERT_NO_THROW(r = check("np.array(['abc', 'de'])", "np.array([1.5, 2.5])"));
  EXPECT_EQ(of_kind(r, "dtype").size(), 1u) << describe(r);
  EXPECT_EQ(of_kind(r, "values").size(), 1u) << describe(r);
}

TEST_F(CompareOutputs, StructuredFieldNamesDifferIsADtypeDifference) {
  ASSERT_TRUE(
      one_failure(check("np.zeros(2, dtype=[('x', 'f8')])", "np.zeros(2, dtype=[('y', 'f8')])"), "dtype", kAny));
}

TEST_F(CompareOutputs, PathLocatesTheLeafEvenWithQuotesInKeys) {
  // A failure path read as Python (outputs[...][...]) must lead back to the differing leaf.
  const std::string gold = R"({'plain': {"it's": [0, 1], 'back\\slash': 2}})";
  const std::string cand = R"({'plain': {"it's": [0, 5], 'back\\slash': 3}})";
  const CheckList r = check(gold, cand);
  ASSERT_EQ(r.failures.size(), 2u) << describe(r);
  py::dict locals;
  locals["outputs"] = eval(gold);
  for (const Check& f : r.failures) {
    SCOPED_TRACE(f.path);
    py::object leaf;
    ASSERT_NO_THROW(leaf = py::eval(f.path, scope(), locals));
    EXPECT_TRUE(leaf.equal(py::int_(1)) || leaf.equal(py::int_(2)));
  }
}

// ---------------------------------------------------------------------------------------------------------
// compare_runs: scenario verdicts

class CompareRuns : public ::testing::Test {
 protected:
  CompareRuns() {
    gold_.dir = dir_.path() / "gold";
    cand_.dir = dir_.path() / "candidate";
    gold_.backend = {{"name", "numpy"}, {"spec", "numpy"}, {"version", "2.0"}, {"role", "gold"}};
    cand_.backend = {{"name", "fsproxy"}, {"spec", "fsproxy"}, {"version", "0.1"}, {"role", "candidate"}};
    for (Manifest* m : {&gold_, &cand_}) fs::create_directories(m->dir / kResultsSubdir);
  }

  static json meta(const std::string& id, json extra = json::object()) {
    json m = {{"module", id.substr(0, id.rfind('.'))},
              {"function", id.substr(id.rfind('.') + 1)},
              {"params", json::object()},
              {"source", "scenarios/sample.py"}};
    m.update(extra);
    return m;
  }

  // Records one scenario; an "ok" record gets a result file holding `outputs`.
  ScenarioRecord& add(Manifest& m, const std::string& id, const std::string& status, const std::string& outputs = "",
                      json error = nullptr, json extra_meta = json::object()) {
    ScenarioRecord r;
    r.id = id;
    r.status = status;
    r.error = std::move(error);
    r.meta = meta(id, std::move(extra_meta));
    r.seconds = 0.25;
    if (!outputs.empty()) {
      r.file = std::string(kResultsSubdir) + "/" + id + ".parity";
      write_result(m.dir / r.file, eval(outputs));
    }
    m.scenarios.push_back(std::move(r));
    return m.scenarios.back();
  }

  const ScenarioOutcome& only(const CompareReport& report) {
    EXPECT_EQ(report.scenarios.size(), 1u);
    return report.scenarios.at(0);
  }

  CompareReport run(CompareOptions options = {}) { return compare_runs(gold_, cand_, options); }

  TempDir dir_;
  Manifest gold_, cand_;
};

TEST_F(CompareRuns, EqualOutputsPass) {
  add(gold_, "m.f", "ok", "{'a': np.arange(3.0)}");
  add(cand_, "m.f", "ok", "{'a': np.arange(3.0)}");
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.id, "m.f");
  EXPECT_EQ(s.status, "pass");
  EXPECT_EQ(s.message, "");
  ASSERT_FALSE(s.checks.empty());
  for (const Check& c : s.checks) EXPECT_TRUE(c.ok) << c.check;
  EXPECT_DOUBLE_EQ(s.gold_seconds, 0.25);
  EXPECT_FALSE(report.failed());
}

TEST_F(CompareRuns, DifferentOutputsFailWithTheValuesCheckFirst) {
  add(gold_, "m.f", "ok", "{'a': np.arange(3.0)}");
  add(cand_, "m.f", "ok", "{'a': np.array([0.0, 1.0, 2.5])}");
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "fail");
  EXPECT_EQ(s.message, "failed checks: values");
  ASSERT_FALSE(s.checks.empty());
  EXPECT_EQ(s.checks[0].check, "values");
  EXPECT_FALSE(s.checks[0].ok);
  EXPECT_EQ(s.checks[0].path, "outputs['a']");
  // The backends' names label the sides; the repro command is the scenario's field, not part of the message.
  EXPECT_TRUE(contains(s.checks[0].message, "(index: numpy | fsproxy)")) << s.checks[0].message;
  EXPECT_FALSE(contains(s.checks[0].message, "Repro:")) << s.checks[0].message;
  EXPECT_TRUE(contains(s.repro, "--only m.f")) << s.repro;
  EXPECT_TRUE(report.failed());
}

TEST_F(CompareRuns, ToleranceComesFromTheScenarioMeta) {
  add(gold_, "m.loose", "ok", "np.array([1.0])", nullptr, {{"rtol", 0.1}});
  add(cand_, "m.loose", "ok", "np.array([1.05])", nullptr, {{"rtol", 0.1}});
  add(gold_, "m.strict", "ok", "np.array([1.0])");
  add(cand_, "m.strict", "ok", "np.array([1.05])");
  add(gold_, "m.atol", "ok", "np.array([0.0])", nullptr, {{"atol", 0.01}});
  add(cand_, "m.atol", "ok", "np.array([0.005])", nullptr, {{"atol", 0.01}});
  const CompareReport report = run();
  ASSERT_EQ(report.scenarios.size(), 3u);
  EXPECT_EQ(report.scenarios[0].status, "pass");
  EXPECT_EQ(report.scenarios[1].status, "fail");
  EXPECT_EQ(report.scenarios[2].status, "pass");
}

TEST_F(CompareRuns, TypeMapComesFromTheCandidateBackend) {
  add(gold_, "m.f", "ok", "np.arange(3.0)");
  add(cand_, "m.f", "ok", "np.arange(3.0).view(MyArray)");
  EXPECT_EQ(only(run()).status, "fail");
  cand_.backend["type_map"] = {{"numpy.ndarray", "parity_test.MyArray"}};
  EXPECT_EQ(only(run()).status, "pass");
}

TEST_F(CompareRuns, ScenarioAbsentFromOneSideIsMissing) {
  add(gold_, "m.only_gold", "ok", "1");
  add(cand_, "m.only_cand", "ok", "1");
  const CompareReport report = run();
  ASSERT_EQ(report.scenarios.size(), 2u);
  // The union of ids, gold's first.
  EXPECT_EQ(report.scenarios[0].id, "m.only_gold");
  EXPECT_EQ(report.scenarios[1].id, "m.only_cand");
  for (const ScenarioOutcome& s : report.scenarios) {
    EXPECT_EQ(s.status, "fail");
    ASSERT_EQ(s.checks.size(), 1u);
    EXPECT_EQ(s.checks[0].check, "missing");
    EXPECT_FALSE(s.checks[0].ok);
  }
  EXPECT_TRUE(contains(report.scenarios[0].checks[0].message, "absent from the candidate"));
  EXPECT_TRUE(contains(report.scenarios[0].checks[0].message, cand_.dir.string()));
  EXPECT_TRUE(contains(report.scenarios[1].checks[0].message, "absent from the gold"));
  EXPECT_EQ(report.counts().at("fail"), 2);
}

TEST_F(CompareRuns, MissingResultFileIsReported) {
  add(gold_, "m.f", "ok", "1");
  const ScenarioRecord& c = add(cand_, "m.f", "ok", "1");
  fs::remove(cand_.dir / c.file);
  const ScenarioOutcome s = only(run());
  EXPECT_EQ(s.status, "fail");
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].check, "missing");
  EXPECT_TRUE(contains(s.checks[0].message, c.file)) << s.checks[0].message;
}

TEST_F(CompareRuns, UnreadableResultFileIsAnError) {
  add(gold_, "m.f", "ok", "1");
  const ScenarioRecord& c = add(cand_, "m.f", "ok", "1");
  std::ofstream(cand_.dir / c.file, std::ios::trunc) << "not a result file at all";
  const ScenarioOutcome s = only(run());
  EXPECT_EQ(s.status, "error");
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].check, "error");
  EXPECT_TRUE(contains(s.checks[0].message, (cand_.dir / c.file).string())) << s.checks[0].message;
}

TEST_F(CompareRuns, ErrorOnOneSide) {
  add(gold_, "m.f", "ok", "1");
  add(cand_, "m.f", "error", "",
      {{"type", "ZeroDivisionError"},
       {"message", "division by zero"},
       {"traceback", "Traceback (most recent call last):\n  ..."}});
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "error");
  EXPECT_TRUE(contains(s.message, "ZeroDivisionError: division by zero")) << s.message;
  EXPECT_FALSE(contains(s.message, "\n")) << s.message;
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].check, "error");
  EXPECT_EQ(s.checks[0].path, "candidate");
  EXPECT_TRUE(contains(s.checks[0].message, "Traceback")) << s.checks[0].message;
  EXPECT_TRUE(report.failed());
}

TEST_F(CompareRuns, ErrorOnBothSidesReportsBoth) {
  add(gold_, "m.f", "error", "", {{"type", "KeyError"}, {"message", "'k'"}});
  add(cand_, "m.f", "error", "", {{"type", "TypeError"}, {"message", "bad"}});
  const ScenarioOutcome s = only(run());
  EXPECT_EQ(s.status, "error");
  ASSERT_EQ(s.checks.size(), 2u);
  EXPECT_EQ(s.checks[0].path, "gold");
  EXPECT_TRUE(contains(s.checks[0].message, "KeyError"));
  EXPECT_EQ(s.checks[1].path, "candidate");
  EXPECT_TRUE(contains(s.checks[1].message, "TypeError"));
}

TEST_F(CompareRuns, SkipOnEitherSide) {
  add(gold_, "m.g", "skip", "", {{"type", "Skipped"}, {"message", "needs scipy"}});
  add(cand_, "m.g", "ok", "1");
  add(gold_, "m.c", "ok", "1");
  add(cand_, "m.c", "skip", "", {{"type", "Skipped"}, {"message", "no float16"}});
  const CompareReport report = run();
  ASSERT_EQ(report.scenarios.size(), 2u);
  EXPECT_EQ(report.scenarios[0].status, "skip");
  EXPECT_TRUE(contains(report.scenarios[0].message, "needs scipy")) << report.scenarios[0].message;
  EXPECT_EQ(report.scenarios[1].status, "skip");
  EXPECT_TRUE(contains(report.scenarios[1].message, "no float16")) << report.scenarios[1].message;
  EXPECT_FALSE(report.failed());
}

TEST_F(CompareRuns, ExpectedFailureOnTheCandidate) {
  add(gold_, "m.f", "ok", "1");
  add(cand_, "m.f", "xfail", "",
      {{"type", "NotImplementedError"}, {"message", "no"}, {"reason", "linalg is not implemented yet"}},
      {{"xfail", {{"candidate", "linalg is not implemented yet"}}}});
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "xfail");
  EXPECT_TRUE(contains(s.message, "linalg is not implemented yet")) << s.message;
  EXPECT_FALSE(report.failed());
}

TEST_F(CompareRuns, UnexpectedPassOnTheCandidate) {
  add(gold_, "m.f", "ok", "1");
  add(cand_, "m.f", "xpass", "",
      {{"type", "XPASS"}, {"message", "the candidate pass was expected to fail (x) but passed"}});
  const CompareReport report = run();
  EXPECT_EQ(only(report).status, "xpass");
  EXPECT_TRUE(contains(only(report).message, "expected to fail")) << only(report).message;
  EXPECT_TRUE(report.failed());
}

TEST_F(CompareRuns, CompareXfailTurnsAFailureIntoXfail) {
  const json xfail = {{"xfail", {{"compare", "rounding differs in the last place"}}}};
  add(gold_, "m.f", "ok", "np.array([1.0])", nullptr, xfail);
  add(cand_, "m.f", "ok", "np.array([2.0])", nullptr, xfail);
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "xfail");
  EXPECT_TRUE(contains(s.message, "rounding differs in the last place")) << s.message;
  EXPECT_FALSE(report.failed());
}

TEST_F(CompareRuns, CompareXfailTurnsAPassIntoXpass) {
  const json xfail = {{"xfail", {{"compare", "rounding differs in the last place"}}}};
  add(gold_, "m.f", "ok", "np.array([1.0])", nullptr, xfail);
  add(cand_, "m.f", "ok", "np.array([1.0])", nullptr, xfail);
  const CompareReport report = run();
  EXPECT_EQ(only(report).status, "xpass");
  EXPECT_TRUE(contains(only(report).message, "rounding differs in the last place")) << only(report).message;
  EXPECT_TRUE(report.failed());
}

// Per-check xfail: one expected layout failure alongside passing values.
const json kLayoutXfail = {{"xfail", {{"compare", {{"layout", "known issue #12"}}}}}};

// Against gold np.ones((2, 3)): what each candidate makes of the expected layout failure.
TEST_F(CompareRuns, CheckXfailIsStrictAndHidesNoOtherCheck) {
  struct Case {
    const char* candidate;
    const char* status;
    const char* message;
  };
  const Case cases[] = {
      {"np.asfortranarray(np.ones((2, 3)))", "xfail", "expected check failures: layout"},
      {"np.asfortranarray(np.full((2, 3), 2.0))", "fail", "failed checks: values"},
      {"np.ones((2, 3))", "xpass", "checks expected to fail passed: layout (known issue #12)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.candidate);
    gold_.scenarios.clear(), cand_.scenarios.clear();
    add(gold_, "m.f", "ok", "np.ones((2, 3))", nullptr, kLayoutXfail);
    add(cand_, "m.f", "ok", c.candidate, nullptr, kLayoutXfail);
    const CompareReport report = run();
    const ScenarioOutcome& s = only(report);
    EXPECT_EQ(s.status, c.status);
    EXPECT_EQ(s.message, c.message);
    EXPECT_EQ(report.failed(), std::string(c.status) != "xfail");
    for (const Check& check : s.checks) {
      if (!check.ok && check.check == "layout") {
        EXPECT_EQ(check.details.at("xfail"), "known issue #12");
      }
    }
  }
}

TEST_F(CompareRuns, ScenarioPolicyOverridesTheRunsPolicy) {
  const std::string gold = "np.ones((2, 3))", cand = "np.asfortranarray(np.ones((2, 3)))";
  add(gold_, "m.own", "ok", gold, nullptr, {{"policy", {{"layout", "contiguity"}}}});
  add(cand_, "m.own", "ok", cand, nullptr, {{"policy", {{"layout", "contiguity"}}}});
  add(gold_, "m.run", "ok", gold);
  add(cand_, "m.run", "ok", cand);
  CompareOptions options;
  options.policy.layout = "ignore";
  const CompareReport report = run(options);
  EXPECT_EQ(report.scenarios.at(0).status, "fail");
  EXPECT_EQ(report.scenarios.at(1).status, "pass");
  EXPECT_TRUE(contains(report.scenarios.at(0).repro,
                       "compare /tmp/parity-repro/gold /tmp/parity-repro/candidate "
                       "--layout-policy ignore"))
      << report.scenarios.at(0).repro;
}

// Precedence: defaults < the candidate backend's POLICY < the run's flags (given) < the scenario's policy=.
TEST_F(CompareRuns, BackendPolicyAppliesUnderTheRunsFlagsAndTheScenarios) {
  const std::string gold = "np.arange(3.0)", cand = "readonly(np.arange(3.0))";
  add(gold_, "m.plain", "ok", gold);
  add(cand_, "m.plain", "ok", cand);
  add(gold_, "m.own", "ok", gold, nullptr, {{"policy", {{"writeable", "exact"}}}});
  add(cand_, "m.own", "ok", cand, nullptr, {{"policy", {{"writeable", "exact"}}}});
  EXPECT_EQ(run().scenarios.at(0).status, "fail");
  cand_.backend["policy"] = {{"writeable", "ignore"}};
  CompareReport report = run();
  EXPECT_EQ(report.scenarios.at(0).status, "pass");
  EXPECT_EQ(report.scenarios.at(0).policy.at("writeable"), "ignore");  // the report shows the effective value
  EXPECT_EQ(report.scenarios.at(1).status, "fail");                    // the scenario's own policy wins
  CompareOptions explicit_flag;  // --writeable-policy exact, given: it wins over the backend's POLICY
  explicit_flag.policies_given.insert("writeable");
  report = run(explicit_flag);
  EXPECT_EQ(report.scenarios.at(0).status, "fail");
  EXPECT_EQ(report.scenarios.at(0).policy.at("writeable"), "exact");
  EXPECT_TRUE(contains(report.scenarios.at(0).repro, "--writeable-policy exact")) << report.scenarios.at(0).repro;
  cand_.backend["policy"] = {{"writeable", "loose"}};
  EXPECT_TRUE(contains(run().scenarios.at(0).checks.at(0).message, "policy writeable cannot be 'loose'"));
}

TEST_F(CompareRuns, DeclaredDifferencesAreTheLoadedBackendsCurrentOnes) {
  add(gold_, "m.f", "ok", "np.arange(3.0)");
  add(cand_, "m.f", "ok", "readonly(np.arange(3.0))");
  // The built-in fsproxy declares none now; its run recorded one.
  cand_.backend["differences"] = json::array({{{"id", "read-only"}, {"check", "writeable"}, {"reason", "r"}}});
  CompareReport report = run();
  EXPECT_TRUE(report.differences.empty());
  EXPECT_EQ(only(report).status, "fail");  // the stale declaration no longer explains it
  ASSERT_EQ(report.notices.size(), 1u);
  EXPECT_EQ(report.notices[0].kind, "changed-differences");
  EXPECT_TRUE(contains(report.notices[0].message, "changed since its run")) << report.notices[0].message;
  EXPECT_TRUE(contains(report.notices[0].message, "removed read-only")) << report.notices[0].message;
  // A backend compare does not load: its recorded declarations, as of its run.
  cand_.backend["spec"] = (dir_.path() / "not_trusted.py").string();
  report = run();
  ASSERT_EQ(report.differences.size(), 1u);
  EXPECT_EQ(only(report).status, "xfail");
  ASSERT_EQ(report.notices.size(), 1u);
  EXPECT_EQ(report.notices[0].kind, "recorded-differences");
  EXPECT_TRUE(contains(report.notices[0].message, "as of its run")) << report.notices[0].message;
}

TEST_F(CompareRuns, UnknownPolicyInTheManifestIsAnErrorNamingIt) {
  add(gold_, "m.f", "ok", "1", nullptr, {{"policy", {{"layout", "loose"}}}});
  add(cand_, "m.f", "ok", "1", nullptr, {{"policy", {{"layout", "loose"}}}});
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "error");
  EXPECT_TRUE(contains(s.checks.at(0).message, "policy layout cannot be 'loose'")) << s.checks.at(0).message;
}

TEST_F(CompareRuns, PathTolerancesAndSignedZerosComeFromTheMeta) {
  const json extra = {{"tolerances", {{"outputs['a']", {{"rtol", 0.1}}}}}, {"signed_zeros", true}};
  add(gold_, "m.f", "ok", "{'a': np.array([1.0]), 'z': np.array([0.0])}", nullptr, extra);
  add(cand_, "m.f", "ok", "{'a': np.array([1.05]), 'z': np.array([-0.0])}", nullptr, extra);
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "fail");
  ASSERT_FALSE(s.checks.empty());
  EXPECT_EQ(s.checks[0].path, "outputs['z']");
  EXPECT_EQ(s.checks[0].details.at("signed_zero_mismatched"), 1);
}

// The repro is a field of the scenario: no message carries it (nothing has to strip it again), and the JUnit
// failure built from the report's JSON still ends with it, once.
TEST_F(CompareRuns, NoFailureMessageCarriesTheReproWhichTheFieldAndJunitDo) {
  add(gold_, "m.f", "ok", "{'a': np.ones((2, 2)), 'b': 1}");
  add(cand_, "m.f", "ok", "{'a': np.asfortranarray(np.ones((2, 2))).astype('>f8'), 'b': 2}");
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  ASSERT_EQ(s.status, "fail");
  EXPECT_TRUE(contains(s.repro, "--only m.f") && contains(s.repro, " compare ")) << s.repro;
  int failures = 0;
  for (const Check& c : s.checks) {
    if (c.ok) continue;
    ++failures;
    EXPECT_FALSE(contains(c.message, "Repro")) << c.check << ": " << c.message;
    EXPECT_FALSE(contains(c.message, s.repro)) << c.check << ": " << c.message;
  }
  EXPECT_EQ(failures, 3);  // dtype, layout, values of b
  EXPECT_FALSE(contains(s.message, "Repro")) << s.message;
  const json doc = report_to_json(report);
  EXPECT_EQ(doc.at("scenarios").at(0).at("repro"), s.repro);
  const std::string xml = report_to_junit(doc);
  pugi::xml_document parsed;
  ASSERT_TRUE(parsed.load_string(xml.c_str())) << xml;
  const std::string text = parsed.select_node("//testcase/failure").node().text().get();
  EXPECT_EQ(text.find("Repro: "), text.rfind("Repro: ")) << "once: " << text;
  EXPECT_TRUE(text.ends_with("Repro: " + s.repro + "\n")) << text;
}

TEST_F(CompareRuns, RequiredAttributesMustSurviveTheReload) {
  py::module_::import("parity.reducers").attr("allow_module")("parity_test");
  py::exec("def wrapped(keep):\n    a = np.arange(3.0).view(MyArray)\n    if keep: a.wrapped = 1\n    return a\n",
           scope());
  add(gold_, "m.f", "ok", "{'kept': np.arange(3.0), 'lost': np.arange(3.0)}");
  add(cand_, "m.f", "ok", "{'kept': wrapped(True), 'lost': wrapped(False)}");
  cand_.backend["type_map"] = {{"numpy.ndarray", "parity_test.MyArray"}};
  cand_.backend["required_attrs"] = {{"parity_test.MyArray", {"wrapped"}}};
  const CompareReport report = run();
  const ScenarioOutcome& s = only(report);
  EXPECT_EQ(s.status, "fail");
  ASSERT_FALSE(s.checks.empty());
  EXPECT_EQ(s.checks[0].check, "attrs");
  EXPECT_EQ(s.checks[0].path, "outputs['lost']");
  EXPECT_TRUE(contains(s.checks[0].message, "has no attribute 'wrapped' after the reload")) << s.checks[0].message;
  EXPECT_FALSE(s.checks.size() > 1 && !s.checks[1].ok) << s.checks[1].message;
}

TEST_F(CompareRuns, XfailOfARunPassDoesNotAffectTheComparison) {
  const json xfail = {{"xfail", {{"gold", "irrelevant to compare"}}}};
  add(gold_, "m.f", "ok", "1", nullptr, xfail);
  add(cand_, "m.f", "ok", "1", nullptr, xfail);
  EXPECT_EQ(only(run()).status, "pass");
}

TEST_F(CompareRuns, CountsAndFailed) {
  add(gold_, "m.pass", "ok", "1");
  add(cand_, "m.pass", "ok", "1");
  add(gold_, "m.skip", "skip", "", {{"message", "s"}});
  add(cand_, "m.skip", "skip", "", {{"message", "s"}});
  add(gold_, "m.xfail", "ok", "1");
  add(cand_, "m.xfail", "xfail", "", {{"reason", "r"}});
  {
    const CompareReport report = run();
    const auto n = report.counts();
    EXPECT_EQ(n.at("pass"), 1);
    EXPECT_EQ(n.at("skip"), 1);
    EXPECT_EQ(n.at("xfail"), 1);
    EXPECT_EQ(n.at("fail"), 0);
    EXPECT_EQ(n.at("error"), 0);
    EXPECT_EQ(n.at("xpass"), 0);
    EXPECT_FALSE(report.failed());
  }
  add(gold_, "m.fail", "ok", "1");
  add(cand_, "m.fail", "ok", "2");
  add(gold_, "m.error", "ok", "1");
  add(cand_, "m.error", "error", "", {{"type", "E"}, {"message", "m"}});
  const CompareReport report = run();
  const auto n = report.counts();
  EXPECT_EQ(n.at("pass"), 1);
  EXPECT_EQ(n.at("fail"), 1);
  EXPECT_EQ(n.at("error"), 1);
  EXPECT_TRUE(report.failed());

  CompareOptions options;
  options.only = {"m.pass", "m.skip"};
  const CompareReport selected = run(options);
  ASSERT_EQ(selected.scenarios.size(), 2u);
  EXPECT_FALSE(selected.failed());
}

TEST_F(CompareRuns, HooksSeeEachComparedScenarioInOrderWithItsPositionAndVerdict) {
  add(gold_, "m.a", "ok", "1");
  add(cand_, "m.a", "ok", "1");
  add(gold_, "m.b", "ok", "1");
  add(cand_, "m.b", "ok", "2");
  add(cand_, "m.c", "ok", "1");
  EXPECT_EQ(compared_ids(gold_, cand_, {}), (std::vector<std::string>{"m.a", "m.b", "m.c"}));
  std::vector<std::string> events;
  CompareOptions options;
  options.only = {"m.c", "m.b"};
  options.on_start = [&events](const std::string& id, std::size_t index, std::size_t total) {
    events.push_back("start " + id + " " + std::to_string(index) + "/" + std::to_string(total));
  };
  options.on_outcome = [&events](const ScenarioOutcome& s) { events.push_back("end " + s.id + " " + s.status); };
  const CompareReport report = run(options);
  EXPECT_EQ(events, (std::vector<std::string>{"start m.b 0/2", "end m.b fail", "start m.c 1/2", "end m.c fail"}));
  EXPECT_EQ(report.scenarios.size(), 2u);
}

TEST_F(CompareRuns, ErrorAloneMakesTheReportFailed) {
  add(gold_, "m.f", "error", "", {{"type", "E"}, {"message", "m"}});
  add(cand_, "m.f", "error", "", {{"type", "E"}, {"message", "m"}});
  EXPECT_TRUE(run().failed());
}

TEST_F(CompareRuns, ReproCommandNamesTheScenarioAndBothBackends) {
  gold_.backend["spec"] = "numpy";
  cand_.backend["spec"] = "my_backend:Backend";
  add(gold_, "pkg.mod.test_f[n=3]", "ok", "1");
  add(cand_, "pkg.mod.test_f[n=3]", "ok", "2");
  CompareOptions options;
  options.program = "/opt/bin/parity";
  const ScenarioOutcome s = only(run(options));
  EXPECT_TRUE(contains(s.repro, "pkg.mod.test_f[n=3]")) << s.repro;
  EXPECT_TRUE(contains(s.repro, "--backend numpy")) << s.repro;
  EXPECT_TRUE(contains(s.repro, "--backend my_backend:Backend")) << s.repro;
  EXPECT_TRUE(contains(s.repro, "scenarios/sample.py")) << s.repro;
  EXPECT_EQ(s.repro.rfind("/opt/bin/parity", 0), 0u) << s.repro;
  EXPECT_TRUE(contains(s.repro, " compare ")) << s.repro;
}

TEST_F(CompareRuns, ReproCompareTrustsWhatThisCompareTrusts) {
  // Without them the repro's compare would skip the probes this compare ran (an untrusted scenario module).
  add(gold_, "m.f", "ok", "1");
  add(cand_, "m.f", "ok", "2");
  CompareOptions options;
  options.trusted_backends = {"my/backend.py"};
  options.trusted_scenarios = {"my scenarios"};
  const ScenarioOutcome s = only(run(options));
  const std::string compare = s.repro.substr(s.repro.rfind(" ; "));
  EXPECT_TRUE(contains(compare, "--trust-backend my/backend.py")) << s.repro;
  EXPECT_TRUE(contains(compare, "--scenarios 'my scenarios'")) << s.repro;
}

TEST_F(CompareRuns, ReproCommandIsShellQuoted) {
  // The id's brackets and space must survive a shell: run it through Python's shlex.
  add(gold_, "m.f[a b]", "ok", "1");
  add(cand_, "m.f[a b]", "ok", "1");
  const ScenarioOutcome s = only(run());
  py::list words = py::module_::import("shlex").attr("split")(s.repro);
  bool found = false;
  for (py::handle w : words) found = found || w.cast<std::string>() == "m.f[a b]";
  EXPECT_TRUE(found) << s.repro;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// Subclass state (attrs)

namespace {

TEST_F(CompareOutputs, MaskedArraysWithDifferentMasksFailAttrsAtTheMask) {
  const CheckList r = check("{'m': np.ma.MaskedArray(np.arange(4.0), mask=[0, 1, 0, 0])}",
                            "{'m': np.ma.MaskedArray(np.arange(4.0), mask=[0, 0, 1, 0])}");
  ASSERT_TRUE(one_failure(r, "attrs", "outputs['m'].mask", {"[values]", "Mismatched elements: 2 / 4"}));
  EXPECT_EQ(r.failures[0].details.at("inner_check"), "values");
}

TEST_F(CompareOutputs, MaskedArrayFillValueIsCompared) {
  const CheckList r =
      check("np.ma.MaskedArray([1.0, 2.0], fill_value=-1.0)", "np.ma.MaskedArray([1.0, 2.0], fill_value=5.0)");
  ASSERT_TRUE(one_failure(r, "attrs", "outputs.fill_value"));
}

TEST_F(CompareOutputs, MemmapModeAndOffsetAreComparedButNotItsFileName) {
  py::exec(R"(
def mapped(name, mode="r+", offset=0):
    out = np.arange(3.0).view(np.memmap)
    out.filename, out.mode, out.offset = name, mode, offset
    return out
)",
           scope());
  EXPECT_TRUE(check("mapped('/tmp/gold.dat')", "mapped('/tmp/candidate.dat')").failures.empty());
  ASSERT_TRUE(one_failure(check("mapped('/a')", "mapped('/a', 'r')"), "attrs", "outputs.mode"));
  ASSERT_TRUE(one_failure(check("mapped('/a')", "mapped('/a', offset=8)"), "attrs", "outputs.offset"));
  ASSERT_TRUE(one_failure(check("mapped('/a')", "mapped(None)"), "attrs", "outputs['filename']",
                          {"'filename' is set for gold but None for candidate"}));
}

TEST_F(CompareOutputs, EqualSubclassStatePassesAttrs) {
  const std::string m = "np.ma.MaskedArray(np.arange(4.0), mask=[0, 1, 0, 0], fill_value=3.0)";
  const CheckList r = check(m, m);
  EXPECT_TRUE(r.failures.empty()) << describe(r);
  EXPECT_EQ(r.passed.at("attrs"), 1);
}

TEST_F(CompareOutputs, InstanceAttributesOfAGenericSubclassAreCompared) {
  py::exec("def tagged(tag):\n    a = np.arange(3.0).view(MyArray)\n    a.tag = tag\n    return a\n", scope());
  ASSERT_TRUE(one_failure(check("tagged('x')", "tagged('y')"), "attrs", "outputs.tag", {"'x'", "'y'"}));
}

// A reduced object that is no array (a Quantity, a frame) is its state: a part that differs fails the ordinary check
// at the part's own path, not `attrs` and not a digest.
TEST_F(CompareOutputs, PartsOfAReducedObjectFailTheirOwnCheckAtTheirPath) {
  py::exec(R"(
import parity.reducers
class Quantity:
    def __init__(self, magnitude, units):
        self.magnitude, self.units = magnitude, units
if not parity.reducers.registered(Quantity):
    parity.reducers.register(Quantity, lambda q: {"magnitude": q.magnitude, "units": q.units},
                             lambda s: Quantity(s["magnitude"], s["units"]), name="parity_test.Quantity")
)",
           scope());
  const CheckList same = check("{'q': Quantity(np.arange(3.0), 'm')}", "{'q': Quantity(np.arange(3.0), 'm')}");
  EXPECT_TRUE(same.failures.empty()) << describe(same);
  EXPECT_EQ(same.passed.at("values"), 2);
  ASSERT_TRUE(one_failure(check("{'q': Quantity(np.arange(3.0), 'm')}", "{'q': Quantity(2 * np.arange(3.0), 'm')}"),
                          "values", "outputs['q'].magnitude", {"Mismatched elements: 2 / 3"}));
  ASSERT_TRUE(one_failure(check("{'q': Quantity(np.arange(3.0), 'm')}", "{'q': Quantity(np.arange(3.0), 'cm')}"),
                          "values", "outputs['q'].units", {"'m'", "'cm'"}));
}

TEST_F(CompareOutputs, ATypeMapProxyAgainstAPlainArrayHasNoAttrsToCompare) {
  py::exec("def proxy():\n    a = np.arange(3.0).view(MyArray)\n    a.wrapped = 1\n    return a\n", scope());
  Policy mapped;
  mapped.type_map = {{"numpy.ndarray", "parity_test.MyArray"}};
  const CheckList r = check("np.arange(3.0)", "proxy()", mapped);
  EXPECT_TRUE(r.failures.empty()) << describe(r);
  EXPECT_EQ(r.passed.count("attrs"), 0u);
}

}  // namespace

namespace {

TEST_F(CompareOutputs, ObjectArraysAreComparedElementByElementAtIndexPaths) {
  const CheckList r =
      check("np.array([[1, 'a'], [2.0, None]], dtype=object)", "np.array([[1, 'b'], [2.0, None]], dtype=object)");
  ASSERT_TRUE(one_failure(r, "values", "outputs[0, 1]", {"'a'", "'b'"}));
  EXPECT_TRUE(check("np.array([1.0, 'x'], dtype=object)", "np.array([1.0, 'x'], dtype=object)").failures.empty());
  ASSERT_TRUE(one_failure(check("np.array([1.0], dtype=object)", "np.array([1.0])"), "dtype", "outputs"));
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------------------
// Across TYPE_MAP, `uncompared` and coverage (issue #17, items 1 and 2)

// Wrapper stands for an ndarray through __array__; Opaque has no array form; Other is a second mapped type.
// Defined once per process: a second definition would be new classes under names already registered.
void define_wrappers() {
  static const bool defined = [] {
    py::exec(R"(
import parity.reducers
class Wrapper:
    def __init__(self, data):
        self.data = data
    def __array__(self, dtype=None, copy=None):
        return self.data
class Other(Wrapper):
    pass
class Opaque:
    def __init__(self, data):
        self.data = data
for cls in (Wrapper, Other, Opaque):
    if not parity.reducers.registered(cls):
        parity.reducers.register(cls, lambda w: {"data": w.data}, lambda s, cls=cls: cls(s["data"]),
                                 name=f"parity_test.{cls.__name__}")
parity.reducers.set_array_form(["parity_test.Wrapper", "parity_test.Other", "parity_test.Opaque"])
sys.modules["parity_test"].Wrapper, sys.modules["parity_test"].Other = Wrapper, Other
)",
             scope());
    return true;
  }();
  (void)defined;
}

Policy mapped_to(const std::string& type) {
  Policy p;
  p.type_map = {{"numpy.ndarray", type}};
  return p;
}

TEST_F(CompareOutputs, AMappedWrapperIsComparedThroughItsArrayForm) {
  define_wrappers();
  const Policy mapped = mapped_to("parity_test.Wrapper");
  const CheckList same = check("np.arange(3.0)", "Wrapper(np.arange(3.0))", mapped);
  EXPECT_TRUE(same.failures.empty()) << describe(same);
  EXPECT_EQ(same.passed.at("values"), 1);
  EXPECT_EQ(same.passed.at("shape"), 1);
  // Doubled values passed before: an Object leaf against an Array one had "no common state to compare".
  ASSERT_TRUE(one_failure(check("np.arange(3.0)", "Wrapper(2 * np.arange(3.0))", mapped), "values", "outputs",
                          {"Mismatched elements: 2 / 3"}));
  ASSERT_TRUE(one_failure(check("{'a': np.arange(3.0)}", "{'a': Wrapper(np.arange(4.0))}", mapped), "shape",
                          "outputs['a']", {"(3,)", "(4,)", "parity_test.Wrapper"}));
  ASSERT_TRUE(one_failure(check("np.arange(3.0)", "Wrapper(np.arange(3))", mapped), "dtype", "outputs"));
  ASSERT_TRUE(
      one_failure(check("readonly(np.arange(3.0))", "Wrapper(np.arange(3.0))", mapped), "writeable", "outputs"));
}

TEST_F(CompareOutputs, AStrAgainstOtherKindsNamesBothTypes) {
  // A str or bytes node had no type name: the message read "type differs: gold , candidate builtins.NoneType", and a
  // str against bytes passed the type check.
  ASSERT_TRUE(one_failure(check("{'f': 'D'}", "{'f': None}"), "type", "outputs['f']",
                          {"gold builtins.str, candidate builtins.NoneType"}));
  const CheckList r = check("{'f': 'D'}", "{'f': b'D'}");
  ASSERT_EQ(of_kind(r, "type").size(), 1u) << describe(r);
  EXPECT_TRUE(contains(of_kind(r, "type")[0].message, "gold builtins.str, candidate builtins.bytes"));
}

TEST_F(CompareOutputs, ANumpyScalarAgainstAMappedWrapperComparesValues) {
  define_wrappers();
  const Policy mapped = mapped_to("parity_test.Wrapper");
  // The type differs (the TYPE_MAP maps ndarrays, not scalars), and the values are still compared: they were
  // `uncompared` before.
  const CheckList same = check("np.float64(3.0)", "Wrapper(np.array(3.0))", mapped);
  EXPECT_EQ(of_kind(same, "uncompared").size(), 0u) << describe(same);
  EXPECT_EQ(same.passed.at("values"), 1) << describe(same);
  const CheckList doubled = check("np.float64(3.0)", "Wrapper(np.array(6.0))", mapped);
  ASSERT_EQ(of_kind(doubled, "values").size(), 1u) << describe(doubled);
  EXPECT_TRUE(contains(of_kind(doubled, "values")[0].message, "Mismatched elements: 1 / 1"));
}

TEST_F(CompareOutputs, TwoMappedTypesCompareTheirArrayForms) {
  define_wrappers();
  ASSERT_TRUE(
      one_failure(check("Wrapper(np.arange(3.0))", "Other(np.arange(3.0))", mapped_to("x")), "type", "outputs"));
  Policy any;
  any.choice.type = "ignore";
  EXPECT_TRUE(check("Wrapper(np.arange(3.0))", "Other(np.arange(3.0))", any).failures.empty());
  ASSERT_TRUE(one_failure(check("Wrapper(np.arange(3.0))", "Other(np.arange(3.0) + 1)", any), "values", "outputs"));
}

TEST_F(CompareOutputs, ALeafNoValuesReachFailsUncomparedSayingWhy) {
  define_wrappers();
  ASSERT_TRUE(one_failure(
      check("{'a': np.arange(3.0)}", "{'a': Opaque(np.arange(3.0))}", mapped_to("parity_test.Opaque")), "uncompared",
      "outputs['a']", {"parity_test.Opaque has no array form", "to_numpy(obj)", "__array__", "numpy.ndarray"}));
  Policy any;
  any.choice.type = "ignore";
  ASSERT_TRUE(one_failure(check("1", "'1'", any), "uncompared", "outputs", {"int", "str", "type policy ignore"}));
  ASSERT_TRUE(one_failure(check("Opaque(1)", "Wrapper(np.arange(3.0))", any), "uncompared", "outputs",
                          {"gold's parity_test.Opaque has no array form"}));
  // A failed check that says why no values were compared is enough: no `uncompared` beside it.
  ASSERT_TRUE(one_failure(check("np.arange(3.0)", "Opaque(np.arange(3.0))"), "type", "outputs"));
  ASSERT_TRUE(one_failure(check("np.arange(3.0)", "np.arange(4.0)"), "shape", "outputs"));
  // Object arrays are their elements: an empty one has nothing to compare, and that is no failure.
  EXPECT_TRUE(check("np.empty(0, dtype=object)", "np.empty(0, dtype=object)").failures.empty());
}

TEST_F(CompareOutputs, CoverageCountsTheLeavesEachCheckReached) {
  define_wrappers();
  const Policy opaque = mapped_to("parity_test.Opaque");
  const CheckList r = check("{'a': np.arange(3.0), 'b': [1, 'x'], 'c': np.arange(2.0), 'gone': [1, 2]}",
                            "{'a': np.arange(3.0), 'b': [1, 'x'], 'c': Opaque(np.arange(2.0))}", opaque);
  EXPECT_EQ(r.coverage.leaves, 6);  // a, b[0], b[1], c, and gone's two on one side only
  EXPECT_EQ(r.coverage.checks.at("values"), 3);
  EXPECT_EQ(r.coverage.checks.at("uncompared"), 1);
  EXPECT_EQ(r.coverage.checks.at("type"), 4);
  EXPECT_EQ(r.coverage.checks.at("shape"), 1);
  EXPECT_EQ(coverage_note(r.coverage.to_json()), "values covered 3 of 6 leaves");
  // A reduced object compared part by part is its parts; an object array is its elements.
  const CheckList parts = check("[Opaque(np.arange(2.0)), np.array([1, 'a'], dtype=object)]",
                                "[Opaque(np.arange(2.0)), np.array([1, 'a'], dtype=object)]");
  EXPECT_TRUE(parts.failures.empty()) << describe(parts);
  EXPECT_EQ(parts.coverage.leaves, 3);
  EXPECT_EQ(parts.coverage.checks.at("values"), 3);
  EXPECT_EQ(coverage_note(parts.coverage.to_json()), "");
  EXPECT_EQ(coverage_note(json()), "");
}

}  // namespace

// compare's to_py builds a JSON value's Python object directly: it must be exactly what json.loads makes of the
// value's text, which it replaced (types, key order, -0.0, numbers nlohmann writes as null, deep values).
TEST(ToPy, IsWhatJsonLoadsMakesOfTheText) {
  std::vector<json> values = {
      json::parse(
          R"({"b": [1, -2, 3.5, -0.0, 1e308, true, false, null, "\u00e9\ud83d\ude00"], "a": {"x": {}}, "": []})"),
      json(std::numeric_limits<std::uint64_t>::max()),
      json(std::numeric_limits<std::int64_t>::min()),
      json(std::nan("")),
      json(std::numeric_limits<double>::infinity()),
      json::object(),
      json::array(),
      json("s")};
  json deep = json::array({1});
  for (int i = 0; i < 200; ++i) deep = json::array({deep, i});
  values.push_back(deep);
  const py::object loads = py::module_::import("json").attr("loads");
  for (const json& value : values)
    EXPECT_EQ(py::repr(to_py(value)).cast<std::string>(), py::repr(loads(value.dump())).cast<std::string>())
        << value.dump().substr(0, 200);
}
