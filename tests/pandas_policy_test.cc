// The pandas policies (src/parity/compare/pandas_policy.h): what index: equivalent and names: ignore relax, and nothing
// more.
#include "pandas_policy.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <filesystem>
#include <set>
#include <string>
#include <tuple>

#include "codec.h"
#include "compare.h"
#include "test_support.h"

namespace py = pybind11;

using namespace parity;
using parity::testing::TempDir;

namespace {

class PandasPolicy : public ::testing::Test {
 protected:
  Node node(const std::string& expr) {
    py::dict scope;
    py::exec("import numpy as np\nimport pandas as pd\n", scope);
    const std::filesystem::path file = dir_.path() / ("n" + std::to_string(count_++) + ".parity");
    write_result(file, py::eval(expr, scope));
    return read_result(file);
  }
  // {(check, path)} of the failures comparing the two expressions under `choice`.
  std::set<std::tuple<std::string, std::string>> failures(const std::string& gold, const std::string& candidate,
                                                          const PolicyChoice& choice = {}) {
    Policy policy;
    policy.choice = choice;
    std::set<std::tuple<std::string, std::string>> out;
    for (const Check& c : compare_outputs(node(gold), node(candidate), policy).failures) out.emplace(c.check, c.path);
    return out;
  }
  static PolicyChoice with(const std::string& name, const std::string& value) {
    PolicyChoice choice;
    choice.set(name, value);
    return choice;
  }

  TempDir dir_;
  int count_ = 0;
};

using Failures = std::set<std::tuple<std::string, std::string>>;

const char* const kRange = "{'s': pd.Series([1.0, 2.0, 3.0], index=pd.RangeIndex(3, name='i'), name='s')}";
const char* const kInt = "{'s': pd.Series([1.0, 2.0, 3.0], index=pd.Index([0, 1, 2], name='i'), name='s')}";
const char* const kRenamed = "{'s': pd.Series([1.0, 2.0, 3.0], index=pd.RangeIndex(3, name='j'), name='t')}";

TEST_F(PandasPolicy, ARangeIndexAndAnIntegerIndexDifferInTypeUnlessEquivalent) {
  EXPECT_EQ(failures(kRange, kInt), (Failures{{"type", "outputs['s'].index"}}));
  EXPECT_EQ(failures(kRange, kInt, with("index", "equivalent")), Failures{});
  // Equivalent compares the range's values: another range is a values failure at the index's values.
  EXPECT_EQ(failures(kRange, "{'s': pd.Series([1.0, 2.0, 3.0], index=pd.Index([0, 1, 5], name='i'), name='s')}",
                     with("index", "equivalent")),
            (Failures{{"values", "outputs['s'].index.values"}}));
}

TEST_F(PandasPolicy, NamesIgnoreSkipsNamesOnly) {
  EXPECT_EQ(failures(kRange, kRenamed),
            (Failures{{"values", "outputs['s'].name"}, {"values", "outputs['s'].index.name"}}));
  EXPECT_EQ(failures(kRange, kRenamed, with("names", "ignore")), Failures{});
  EXPECT_EQ(failures(kRange, kInt, with("names", "ignore")), (Failures{{"type", "outputs['s'].index"}}));
}

TEST_F(PandasPolicy, OrderSortedComparesRowsAndColumnsInLabelOrder) {
  const std::string frame =
      "{'df': pd.DataFrame({'a': [1.0, 2.0, 3.0], 'b': ['x', 'y', 'z']}, index=pd.Index([30, 10, 20]))}";
  const std::string reordered =
      "{'df': pd.DataFrame({'b': ['y', 'z', 'x'], 'a': [2.0, 3.0, 1.0]}, index=pd.Index([10, 20, 30]))}";
  EXPECT_EQ(failures(frame, reordered, with("order", "sorted")), Failures{});
  EXPECT_EQ(failures(frame, reordered).count({"values", "outputs['df']['a']"}), 1u);
  // Sorted rows still carry their values: a changed value fails at its column.
  const std::string changed =
      "{'df': pd.DataFrame({'a': [2.0, 3.0, 9.0], 'b': ['y', 'z', 'x']}, index=pd.Index([10, 20, 30]))}";
  EXPECT_EQ(failures(frame, changed, with("order", "sorted")), (Failures{{"values", "outputs['df']['a']"}}));
  // A RangeIndex sorts as its values; a Series sorts too.
  EXPECT_EQ(
      failures("{'s': pd.Series([1.0, 2.0])}", "{'s': pd.Series([2.0, 1.0], index=[1, 0])}", with("order", "sorted")),
      (Failures{{"type", "outputs['s'].index"}}));
}

TEST_F(PandasPolicy, OrderSortedFollowsReferencesToAnIndexWrittenEarlier) {
  // A column taken out of a frame shares its index: the file holds it once, then as a reference.
  const std::string gold =
      "(lambda df: {'df': df, 's': df['a']})(pd.DataFrame({'a': [1.0, 2.0, 3.0]}, index=pd.CategoricalIndex(['c', "
      "'a', 'b'])))";
  const std::string reversed =
      "(lambda df: {'df': df, 's': df['a']})(pd.DataFrame({'a': [3.0, 2.0, 1.0]}, index=pd.CategoricalIndex(['b', "
      "'a', 'c'], categories=['a', 'b', 'c'])))";
  EXPECT_EQ(failures(gold, reversed, with("order", "sorted")), Failures{});
  EXPECT_EQ(failures(gold, reversed).count({"values", "outputs['s'].values"}), 1u);
}

TEST_F(PandasPolicy, ExactPoliciesLeaveNodesAlone) {
  const Node n = node(kRange);
  EXPECT_FALSE(pandas_relaxed(n.items()[0], PolicyChoice{}));
  EXPECT_TRUE(pandas_relaxed(n.items()[0], with("names", "ignore")));
  const Node normalized = pandas_normalized(n.items()[0], with("names", "ignore"), NodeIndex(n));
  EXPECT_FALSE(pandas_relaxed(normalized, with("names", "ignore")));  // compare_leaf normalizes once
}

}  // namespace
