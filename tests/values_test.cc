// Unit tests of the values kernel: compare_values and close_enough against allclose semantics, and DigestTaps.
#include "values.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace py = pybind11;
using parity::close_enough;
using parity::compare_values;
using parity::Tolerance;
using parity::ValueReport;

namespace {

using Index = std::vector<std::int64_t>;

// Every expression sees numpy as `np`, so arrays are built exactly as a scenario would build them.
py::object np_eval(const std::string& expr) {
  py::dict scope;
  scope["np"] = py::module_::import("numpy");
  return py::eval(expr, scope);
}

ValueReport compare(const std::string& gold, const std::string& candidate, Tolerance tol = {}) {
  return compare_values(np_eval(gold), np_eval(candidate), tol);
}

std::string show(const Index& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

// Passes when `r` found exactly one mismatch, at `index`, whose values show as `gold` and `candidate`; otherwise says
// what differs.
::testing::AssertionResult one_mismatch(const ValueReport& r, const Index& index, const std::string& gold,
                                        const std::string& candidate) {
  if (r.mismatched != 1 || r.first.size() != 1)
    return ::testing::AssertionFailure() << r.mismatched << " mismatches (" << r.first.size() << " listed), expected 1";
  const parity::Mismatch& m = r.first[0];
  std::string wrong;
  if (m.index != index) wrong += "index " + show(m.index) + ", expected " + show(index) + "\n";
  if (m.gold != gold) wrong += "gold " + m.gold + ", expected " + gold + "\n";
  if (m.candidate != candidate) wrong += "candidate " + m.candidate + ", expected " + candidate + "\n";
  if (wrong.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong;
}

// Spelled here, as values_reference.py spells them, rather than taken from values.cc: a label changed there must not
// make the kernel agree with the reference by accident.
const char* kind_label(parity::MismatchKind kind) {
  switch (kind) {
    case parity::MismatchKind::NaN:
      return "nan";
    case parity::MismatchKind::Inf:
      return "inf";
    case parity::MismatchKind::SignedZero:
      return "signed-zero";
    case parity::MismatchKind::Value:
      break;
  }
  return "value";
}

// Every field of two reports, so that a test can demand that a change of layout changes nothing at all.
::testing::AssertionResult same_report(const ValueReport& a, const ValueReport& b) {
  std::ostringstream wrong;
  auto field = [&](const char* name, const auto& x, const auto& y) {
    if (!(x == y))
      wrong << name << ": " << ::testing::PrintToString(x) << " against " << ::testing::PrintToString(y) << "\n";
  };
  field("criterion", a.criterion, b.criterion);
  field("compared_as", a.compared_as, b.compared_as);
  field("total", a.total, b.total);
  field("mismatched", a.mismatched, b.mismatched);
  field("nan_mismatched", a.nan_mismatched, b.nan_mismatched);
  field("inf_mismatched", a.inf_mismatched, b.inf_mismatched);
  field("signed_zero_mismatched", a.signed_zero_mismatched, b.signed_zero_mismatched);
  field("has_differences", a.has_differences, b.has_differences);
  field("max_abs.value", a.max_abs.value, b.max_abs.value);
  field("max_abs.index", a.max_abs.index, b.max_abs.index);
  field("max_rel.value", a.max_rel.value, b.max_rel.value);
  field("max_rel.index", a.max_rel.index, b.max_rel.index);
  field("not_comparable", a.not_comparable, b.not_comparable);
  field("map.shape", a.map.shape, b.map.shape);
  field("map.grid", a.map.grid, b.map.grid);
  field("map.counts", a.map.counts, b.map.counts);
  field("map.sizes", a.map.sizes, b.map.sizes);
  for (const auto& [name, x, y] : {std::tuple{"first", &a.first, &b.first},
                                   std::tuple{"first_nonfinite", &a.first_nonfinite, &b.first_nonfinite}}) {
    field(name, x->size(), y->size());
    for (std::size_t i = 0; i < std::min(x->size(), y->size()); ++i) {
      const parity::Mismatch &m = (*x)[i], &n = (*y)[i];
      if (m.index != n.index || m.gold != n.gold || m.candidate != n.candidate || m.kind != n.kind)
        wrong << name << "[" << i << "]: " << show(m.index) << " " << m.gold << " " << m.candidate << " "
              << kind_label(m.kind) << " against " << show(n.index) << " " << n.gold << " " << n.candidate << " "
              << kind_label(n.kind) << "\n";
    }
  }
  if (wrong.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong.str();
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------------------
// close_enough: the scalar rule

TEST(ValuesCloseEnough, BoundaryIsInclusiveAndRelativeToGold) {
  const Tolerance tol{0.25, 0.25};
  EXPECT_TRUE(close_enough(1.0, 1.5, tol));  // |0.5| == 0.25 + 0.25 * 1
  EXPECT_FALSE(close_enough(1.0, std::nextafter(1.5, 2.0), tol));
  EXPECT_TRUE(close_enough(1.0, 0.5, tol));
  EXPECT_FALSE(close_enough(1.0, 0.5 - 1e-9, tol));
  // Gold is the reference, so the rule is not symmetric.
  const Tolerance rel{0.4, 0.0};
  EXPECT_FALSE(close_enough(1.0, 1.5, rel));
  EXPECT_TRUE(close_enough(1.5, 1.0, rel));
}

TEST(ValuesCloseEnough, AtolAloneCoversZeroGold) {
  EXPECT_TRUE(close_enough(0.0, 1e-9, {0.0, 1e-8}));
  EXPECT_FALSE(close_enough(0.0, 1e-9, {1e-7, 0.0}));
}

TEST(ValuesCloseEnough, NaNEqualsOnlyNaN) {
  EXPECT_TRUE(close_enough(kNaN, kNaN, {}));
  EXPECT_FALSE(close_enough(kNaN, 1.0, {}));
  EXPECT_FALSE(close_enough(1.0, kNaN, {}));
  EXPECT_FALSE(close_enough(kNaN, 1.0, {1e9, 1e9}));
}

TEST(ValuesCloseEnough, SignedZerosAreEqual) {
  EXPECT_TRUE(close_enough(-0.0, 0.0, {0.0, 0.0}));
  EXPECT_TRUE(close_enough(0.0, -0.0, {0.0, 0.0}));
}

TEST(ValuesCloseEnough, InfinityEqualsOnlyTheSameInfinity) {
  for (const Tolerance tol : {Tolerance{}, Tolerance{0.0, 0.0}, Tolerance{0.5, 1.0}}) {
    SCOPED_TRACE(::testing::Message() << "rtol=" << tol.rtol << " atol=" << tol.atol);
    EXPECT_TRUE(close_enough(kInf, kInf, tol));
    EXPECT_TRUE(close_enough(-kInf, -kInf, tol));
    EXPECT_FALSE(close_enough(kInf, -kInf, tol));
    EXPECT_FALSE(close_enough(-kInf, kInf, tol));
    EXPECT_FALSE(close_enough(kInf, 1.0, tol));
    EXPECT_FALSE(close_enough(1.0, kInf, tol));
    EXPECT_FALSE(close_enough(kInf, kNaN, tol));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Floating point arrays

TEST(ValuesFloat, IdenticalArraysPass) {
  const ValueReport r = compare("np.linspace(-3, 7, 12).reshape(3, 4)", "np.linspace(-3, 7, 12).reshape(3, 4)");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.criterion, "allclose");
  EXPECT_EQ(r.total, 12);
  EXPECT_EQ(r.mismatched, 0);
  EXPECT_EQ(r.nan_mismatched, 0);
  EXPECT_TRUE(r.first.empty());
  EXPECT_TRUE(r.not_comparable.empty());
}

TEST(ValuesFloat, OnePerturbedElementIsLocatedAndMeasured) {
  py::object gold = np_eval("np.arange(12.0).reshape(3, 4)");
  py::object cand = gold.attr("copy")();
  cand[py::make_tuple(1, 2)] = 6.5;
  const ValueReport r = compare_values(gold, cand, {});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.total, 12);
  EXPECT_TRUE(one_mismatch(r, {1, 2}, "6.0", "6.5"));
  EXPECT_EQ(r.nan_mismatched, 0);
  EXPECT_DOUBLE_EQ(r.max_abs.value, 0.5);
  EXPECT_DOUBLE_EQ(r.max_rel.value, 0.5 / 6.0);
}

TEST(ValuesFloat, PerturbationWithinRtolPasses) {
  py::object gold = np_eval("np.arange(1.0, 13.0).reshape(3, 4)");
  py::object cand = np_eval("np.arange(1.0, 13.0).reshape(3, 4) * (1 + 1e-9)");
  EXPECT_TRUE(compare_values(gold, cand, {}).ok());
  EXPECT_FALSE(compare_values(gold, cand, {1e-10, 0.0}).ok());
}

TEST(ValuesFloat, MaxAbsAndMaxRelMayComeFromDifferentElements) {
  const ValueReport r = compare("np.array([1.0, 10.0, 5.0])", "np.array([2.0, 12.0, 5.0])");
  EXPECT_EQ(r.mismatched, 2);
  EXPECT_DOUBLE_EQ(r.max_abs.value, 2.0);  // from element 1
  EXPECT_DOUBLE_EQ(r.max_rel.value, 1.0);  // from element 0
}

TEST(ValuesFloat, ZeroGoldGivesInfiniteRelativeDifference) {
  const ValueReport r = compare("np.array([0.0, 1.0])", "np.array([0.5, 1.0])");
  EXPECT_EQ(r.mismatched, 1);
  EXPECT_DOUBLE_EQ(r.max_abs.value, 0.5);
  EXPECT_TRUE(std::isinf(r.max_rel.value));
}

TEST(ValuesFloat, ToleranceBoundaryIsInclusive) {
  const Tolerance tol{0.25, 0.25};
  EXPECT_TRUE(compare("np.array([1.0, -4.0])", "np.array([1.5, -2.75])", tol).ok());
  const ValueReport r = compare("np.array([1.0, -4.0])", "np.array([np.nextafter(1.5, 2), -2.75])", tol);
  EXPECT_EQ(r.mismatched, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, (Index{0}));
}

TEST(ValuesFloat, NaNOnBothSidesPasses) {
  const ValueReport r = compare("np.array([np.nan, 1.0, np.nan])", "np.array([np.nan, 1.0, -np.nan])");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.nan_mismatched, 0);
}

TEST(ValuesFloat, NaNOnOneSideIsCountedSeparately) {
  const ValueReport r = compare("np.array([1.0, np.nan, 3.0, 4.0])", "np.array([np.nan, np.nan, 3.0, 5.0])");
  EXPECT_EQ(r.mismatched, 2);
  EXPECT_EQ(r.nan_mismatched, 1);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].index, (Index{0}));
  EXPECT_EQ(r.first[0].gold, "1.0");
  EXPECT_EQ(r.first[0].candidate, "nan");
  EXPECT_EQ(r.first[1].index, (Index{3}));
  // The NaN element has no finite difference, so only element 3 contributes to the maxima.
  EXPECT_DOUBLE_EQ(r.max_abs.value, 1.0);
  EXPECT_DOUBLE_EQ(r.max_rel.value, 0.25);
}

TEST(ValuesFloat, NaNInGoldOnlyIsAMismatch) {
  const ValueReport r = compare("np.array([np.nan])", "np.array([0.0])", {1e9, 1e9});
  EXPECT_EQ(r.mismatched, 1);
  EXPECT_EQ(r.nan_mismatched, 1);
}

TEST(ValuesFloat, EqualInfinitiesPass) {
  EXPECT_TRUE(compare("np.array([np.inf, -np.inf, 1.0])", "np.array([np.inf, -np.inf, 1.0])").ok());
  EXPECT_TRUE(compare("np.array([np.inf, -np.inf])", "np.array([np.inf, -np.inf])", {0.0, 0.0}).ok());
}

TEST(ValuesFloat, OppositeInfinitiesFail) {
  for (const Tolerance tol : {Tolerance{}, Tolerance{0.0, 0.0}}) {
    SCOPED_TRACE(::testing::Message() << "rtol=" << tol.rtol);
    const ValueReport r = compare("np.array([np.inf, -np.inf])", "np.array([-np.inf, np.inf])", tol);
    EXPECT_EQ(r.mismatched, 2);
    EXPECT_EQ(r.nan_mismatched, 0);
  }
}

TEST(ValuesFloat, InfinityAgainstFiniteFails) {
  for (const Tolerance tol : {Tolerance{}, Tolerance{0.0, 0.0}}) {
    SCOPED_TRACE(::testing::Message() << "rtol=" << tol.rtol);
    EXPECT_EQ(compare("np.array([np.inf, 1.0])", "np.array([1e308, 1.0])", tol).mismatched, 1);
    EXPECT_EQ(compare("np.array([1.0, 1e308])", "np.array([1.0, np.inf])", tol).mismatched, 1);
    EXPECT_EQ(compare("np.array([-np.inf])", "np.array([0.0])", tol).mismatched, 1);
  }
}

TEST(ValuesFloat, SignedZerosAreEqual) {
  EXPECT_TRUE(compare("np.array([-0.0, 0.0])", "np.array([0.0, -0.0])", {0.0, 0.0}).ok());
}

TEST(ValuesFloat, Float32AgainstFloat64IsComparedInFloat64) {
  // 0.1 in float32 differs from 0.1 in float64 by about 1.5e-9 relative: inside 1e-7, outside 1e-10.
  EXPECT_TRUE(compare("np.array([0.1], dtype=np.float32)", "np.array([0.1])").ok());
  EXPECT_FALSE(compare("np.array([0.1], dtype=np.float32)", "np.array([0.1])", {1e-10, 0.0}).ok());
  EXPECT_TRUE(compare("np.array([1, 2, 3])", "np.array([1.0, 2.0, 3.0])").ok());
}

TEST(ValuesFloat, SignedZerosDifferWhenAskedFor) {
  const Tolerance tol{0.0, 0.0, true};
  const ValueReport r = compare("np.array([-0.0, 0.0, 0.0, -0.0])", "np.array([0.0, -0.0, 0.0, -0.0])", tol);
  EXPECT_EQ(r.mismatched, 2);
  EXPECT_EQ(r.signed_zero_mismatched, 2);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].kind, parity::MismatchKind::SignedZero);
  EXPECT_TRUE(r.max_abs.index.empty());  // no difference in value to measure
  // Any tolerance covers a zero difference; only the flag makes the sign count.
  EXPECT_EQ(compare("np.array([-0.0])", "np.array([0.0])", {0.5, 0.5, true}).signed_zero_mismatched, 1);
  const ValueReport c = compare("np.array([complex(-0.0, 0.0), 0j])", "np.array([0j, complex(0.0, -0.0)])", tol);
  EXPECT_EQ(c.signed_zero_mismatched, 2);
}

TEST(ValuesFloat, LongDoubleDifferencesBeyondFloat64PrecisionAreFound) {
  // 1 + 4 eps(longdouble) rounds to 1 in float64; compared in float64 the two would be equal.
  const std::string one = "np.array([1.0, 2.0], dtype=np.longdouble)";
  const std::string near_one = "np.array([1 + np.finfo(np.longdouble).eps * 4, 2.0], dtype=np.longdouble)";
  if (!np_eval("np.finfo(np.longdouble).eps < np.finfo(np.float64).eps").cast<bool>())
    GTEST_SKIP() << "long double is float64 on this platform";
  const ValueReport r = compare(one, near_one, {0.0, 0.0});
  EXPECT_EQ(r.mismatched, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, (Index{0}));
  EXPECT_GT(r.max_abs.value, 0.0);
  EXPECT_TRUE(compare(one, near_one, {1e-15, 0.0}).ok());
  // Long double on one side only is enough to compare in long double, complex included.
  EXPECT_EQ(compare("np.array([1.0, 2.0])", near_one, {0.0, 0.0}).mismatched, 1);
  EXPECT_EQ(compare(near_one + ".astype(np.clongdouble)", "np.array([1 + 0j, 2])", {0.0, 0.0}).mismatched, 1);
}

// ---------------------------------------------------------------------------------------------------------
// Independence from byte order, memory order, strides and alignment

TEST(ValuesLayout, BigEndianGoldAgainstNativeCandidate) {
  EXPECT_TRUE(compare("np.arange(6.0).astype('>f8')", "np.arange(6.0)").ok());
  const ValueReport r = compare("np.arange(6.0).astype('>f8')", "np.array([0, 1, 2, 3, 4.25, 5])");
  EXPECT_TRUE(one_mismatch(r, {4}, "4.0", "4.25"));
  EXPECT_DOUBLE_EQ(r.max_abs.value, 0.25);
}

TEST(ValuesLayout, BigEndianIntegersAndComplex) {
  EXPECT_TRUE(compare("np.arange(5, dtype='>i4')", "np.arange(5, dtype='<i8')").ok());
  EXPECT_EQ(compare("np.arange(5, dtype='>i4')", "np.array([0, 1, 2, 3, 5])").mismatched, 1);
  EXPECT_TRUE(compare("np.array([1+2j, 3-4j], dtype='>c16')", "np.array([1+2j, 3-4j])").ok());
}

TEST(ValuesLayout, FortranOrderGivesCOrderIndices) {
  EXPECT_TRUE(compare("np.asfortranarray(np.arange(12.0).reshape(3, 4))", "np.arange(12.0).reshape(3, 4)").ok());
  // In F memory order [1, 0] comes before [0, 3]; the report must still list them in C order.
  py::object gold = np_eval("np.asfortranarray(np.arange(12.0).reshape(3, 4))");
  py::object cand = np_eval("np.asfortranarray(np.arange(12.0).reshape(3, 4))");
  cand[py::make_tuple(1, 0)] = -1.0;
  cand[py::make_tuple(0, 3)] = -1.0;
  const ValueReport r = compare_values(gold, cand, {});
  EXPECT_EQ(r.mismatched, 2);
  ASSERT_EQ(r.first.size(), 2u);
  EXPECT_EQ(r.first[0].index, (Index{0, 3}));
  EXPECT_EQ(r.first[0].gold, "3.0");
  EXPECT_EQ(r.first[1].index, (Index{1, 0}));
  EXPECT_EQ(r.first[1].gold, "4.0");
}

TEST(ValuesLayout, MixedOrderPairsWiderThanOneSlabAreDecidedAndLocated) {
  // F against C over many 64-column slabs: the memory-order pass goes slab by slab (values.cc).
  const std::string gold = "np.asfortranarray(np.arange(3 * 2500.0).reshape(3, 2500))";
  EXPECT_TRUE(compare(gold, "np.arange(3 * 2500.0).reshape(3, 2500)").ok());
  for (const std::string column : {"0", "63", "64", "1024", "2499"}) {
    SCOPED_TRACE("column " + column);
    const ValueReport r = compare(
        gold, "(lambda a: (a.__setitem__((2, " + column + "), -1.0), a)[1])(np.arange(3 * 2500.0).reshape(3, 2500))");
    const std::int64_t col = std::stoll(column);
    EXPECT_TRUE(one_mismatch(r, {2, col}, std::to_string(2 * 2500 + col) + ".0", "-1.0"));
  }
}

TEST(ValuesLayout, SlabWiseLocatingGivesTheCOrderAnswer) {
  // F-ordered pairs wider than one 64-column slab are located slab by slab: mismatches arrive out of C order, and
  // ties of the largest difference (all +1 here) must still name the first element in C order.
  const std::string base = "np.arange(3 * 200.0).reshape(3, 200)";
  const std::string changed =
      "(lambda a: [a.__setitem__(i, a[i] + 1) for i in [(2, 5), (0, 150), (1, 70), (0, 199), (2, 0), (0, 3)]] and a)(" +
      base + ")";
  const Index expected[] = {{0, 3}, {0, 150}, {0, 199}, {1, 70}, {2, 0}};
  for (const auto& [gold, candidate] : std::vector<std::pair<std::string, std::string>>{
           {"np.asfortranarray(" + base + ")", "np.asfortranarray(" + changed + ")"},  // F against F
           {"np.asfortranarray(" + base + ")", changed},                               // F against C
           {base, changed}}) {                                                         // C against C: the reference
    SCOPED_TRACE(gold + " vs " + candidate);
    const ValueReport r = compare(gold, candidate, {0.0, 0.0});
    EXPECT_EQ(r.mismatched, 6);
    ASSERT_EQ(r.first.size(), parity::kFirstMismatches);
    for (std::size_t i = 0; i < r.first.size(); ++i) EXPECT_EQ(r.first[i].index, expected[i]) << i;
    EXPECT_EQ(r.max_abs.index, (Index{0, 3}));
    EXPECT_DOUBLE_EQ(r.max_abs.value, 1.0);
    EXPECT_EQ(r.max_rel.index, (Index{0, 3}));  // 1/3, the largest ratio
  }
}

TEST(ValuesLayout, NegativeAndNonUnitStrides) {
  py::object base = np_eval("np.arange(48.0).reshape(6, 8)");
  py::object view = base[py::make_tuple(py::slice(py::none(), py::none(), py::int_(-1)),
                                        py::slice(py::none(), py::none(), py::int_(2)))];
  ASSERT_FALSE(view.attr("flags").attr("c_contiguous").cast<bool>());
  py::object copy = py::module_::import("numpy").attr("ascontiguousarray")(view);
  EXPECT_TRUE(compare_values(view, copy, {}).ok());
  EXPECT_TRUE(compare_values(copy, view, {}).ok());

  copy[py::make_tuple(0, 1)] = 1000.0;
  const ValueReport r = compare_values(view, copy, {});
  EXPECT_EQ(r.total, 24);
  EXPECT_TRUE(one_mismatch(r, {0, 1}, "42.0", "1000.0"));  // gold is base[5, 2]
}

TEST(ValuesLayout, TransposedViewAgainstCopy) {
  py::object gold = np_eval("np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1)");
  py::object cand = np_eval("np.ascontiguousarray(np.arange(24).reshape(2, 3, 4).transpose(2, 0, 1))");
  EXPECT_TRUE(compare_values(gold, cand, {}).ok());
  cand[py::make_tuple(3, 1, 2)] = -1;
  const ValueReport r = compare_values(gold, cand, {});
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, (Index{3, 1, 2}));
  EXPECT_EQ(r.first[0].gold, "23");  // [b, c, a] of the transpose is original [1, 2, 3]
}

TEST(ValuesLayout, MisalignedBuffer) {
  // A float64 array starting at an odd address, as the codec reproduces recorded misalignment.
  py::object gold = np_eval("np.frombuffer(bytearray(b'\\0' + np.arange(7.0).tobytes()), dtype='<f8', offset=1)");
  ASSERT_FALSE(gold.attr("flags").attr("aligned").cast<bool>());
  EXPECT_TRUE(compare_values(gold, np_eval("np.arange(7.0)"), {}).ok());
  const ValueReport r = compare_values(gold, np_eval("np.array([0, 1, 2, 3, 4, 5, 7.0])"), {});
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, (Index{6}));
  EXPECT_EQ(r.first[0].gold, "6.0");
}

std::string layout_of(py::handle array) {
  const py::object flags = array.attr("flags");
  return py::str("{} strides {} aligned {}")
      .format(array.attr("dtype").attr("str"), array.attr("strides"), flags.attr("aligned"))
      .cast<std::string>();
}

TEST(ValuesLayout, NoResultDependsOnWhichSideIsBigEndianStridedOrMisaligned) {
  // Values of every mismatch kind; each side is then rebuilt in other layouts holding the same values.
  const std::string gold = "np.array([[1.0, np.nan, 3.0, -0.0, np.inf], [6.0, 7.0, 8.0, np.nan, -np.inf]])";
  const std::string cand = "np.array([[1.5, 2.0, np.nan, 0.0, -np.inf], [6.0, 7.0, 9.0, np.nan, 1.0]])";
  const std::vector<std::string> layouts = {
      "{}",
      "{}.astype('>' + {}.dtype.str[1:])",
      "np.asfortranarray({})",
      "(lambda a: (lambda b: (b.__setitem__(Ellipsis, a), b)[1])(np.empty(a.shape * np.array([2, 3]), a.dtype)"
      "[::-2, ::3]))({})",
      "(lambda a: (lambda b: (b.__setitem__(Ellipsis, a), b)[1])(np.empty(a.shape[::-1], a.dtype).T))({})",
      "(lambda a: (lambda b: (b.__setitem__(Ellipsis, a), b)[1])(np.empty(a.size * a.itemsize + 1, np.uint8)[1:]"
      ".view(a.dtype).reshape(a.shape)))({})",
  };
  auto in_layout = [](const std::string& layout, const std::string& expr, const std::string& dtype) {
    std::string out = layout, value = "np.asarray(" + expr + ", dtype='" + dtype + "')";
    for (std::size_t at; (at = out.find("{}")) != std::string::npos;) out.replace(at, 2, value);
    return np_eval(out);
  };
  for (const std::string dtype : {"f8", "f4", "c16", "g"}) {
    const Tolerance tol{1e-7, 0.0, true};
    const ValueReport plain = compare_values(in_layout("{}", gold, dtype), in_layout("{}", cand, dtype), tol);
    ASSERT_EQ(plain.mismatched, 7) << dtype;
    for (const std::string& g : layouts)
      for (const std::string& c : layouts) {
        py::object ga = in_layout(g, gold, dtype), ca = in_layout(c, cand, dtype);
        SCOPED_TRACE(::testing::Message() << dtype << ": gold " << layout_of(ga) << ", candidate " << layout_of(ca));
        EXPECT_TRUE(same_report(compare_values(ga, ca, tol), plain));
      }
  }
  for (const std::string dtype : {"i8", "u2", "M8[s]", "U3"}) {
    const std::string ints =
        dtype == "U3" ? "np.array([['a', 'bc', 'def'], ['g', '', 'x']])" : "np.array([[1, 2, 3], [4, 5, 6]])";
    const std::string other =
        dtype == "U3" ? "np.array([['a', 'bd', 'def'], ['g', 'h', 'x']])" : "np.array([[1, 0, 3], [4, 5, 7]])";
    const ValueReport plain = compare_values(in_layout("{}", ints, dtype), in_layout("{}", other, dtype), {});
    ASSERT_EQ(plain.mismatched, 2) << dtype;
    for (const std::string& g : layouts)
      for (const std::string& c : layouts) {
        SCOPED_TRACE(::testing::Message() << dtype << ": gold " << g << ", candidate " << c);
        EXPECT_TRUE(same_report(compare_values(in_layout(g, ints, dtype), in_layout(c, other, dtype), {}), plain));
      }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Byte order: a side stored byte-swapped in the type it is read as is swapped by the kernel as it loads (values.cc,
// Plan::gold_swapped), and gives the report of the same values in native byte order, field by field.

// A gold and a candidate of `dtype` ('f8', 'c16', 'i8', 'u8', 'M8[s]', 'm8[ms]', 'f4', 'i4'), 1,536 native elements
// in C order (three of the kernel's 512-element blocks), with the violations at known places: value differences at 3,
// 511, 512 (the blocks' edges) and 1000, and for floats NaN on one side at 17, an infinity against a finite value at
// 100, -0.0 against 0.0 at 998, and equal NaNs and infinities at 5 and 6. Elements 700 and 701 hold values whose bytes
// read the same in both orders (palindromes), 701 differing: a pass that forgets to swap reads them right and
// everything else wrong, one that swaps a native side reads them right and everything else wrong. Read unswapped,
// these floats' bytes are tiny numbers: within an atol of 1, the second block's violations pass unless swapped.
py::tuple byte_order_pair(const std::string& dtype) {
  py::dict scope;
  scope["np"] = py::module_::import("numpy");
  scope["dtype"] = dtype;
  py::exec(R"(
d = np.dtype(dtype)
n = 1536
if d.kind in 'fc':
    g = np.arange(n) * 1.25 + 1
    pal = np.array([0x4000000000000040, 0x4010000000001040], dtype='<u8').view('<f8')
    if d.itemsize // (2 if d.kind == 'c' else 1) < 8:
        pal = np.array([0x40000040, 0x40100140], dtype='<u4').view('<f4')
    g[5], g[6], g[17], g[100], g[998], g[700], g[701] = np.nan, np.inf, 7.0, 9.0, -0.0, pal[0], pal[0]
    c = g.copy()
    c[3] += 0.5
    c[511], c[512], c[1000] = -c[511], c[512] * 3, 0.0
    c[17], c[100], c[998], c[701] = np.nan, np.inf, 0.0, pal[1]
    if d.kind == 'c':
        g = g + 1j * g[::-1]
        c = c + 1j * g.imag
else:
    g = np.arange(n) * 3 + 1
    pal = [0x0100000000000001, 0x0102000000000201] if d.itemsize == 8 else [0x01000001, 0x01020201]
    g[700], g[701] = pal[0], pal[0]
    c = g.copy()
    c[3] += 1
    c[511], c[512], c[1000], c[701] = 0, c[512] * 5, c[1000] - 2, pal[1]
    if d.kind in 'mM':
        g[5] = c[5] = np.iinfo(np.int64).min  # NaT on both sides: equal
        c[17] = np.iinfo(np.int64).min        # NaT on one side
result = (np.asarray(g).astype(d), np.asarray(c).astype(d))
)",
           scope);
  return scope["result"];
}

py::object with_byte_order(const py::object& array, char order) {
  return array.attr("astype")(array.attr("dtype").attr("newbyteorder")(std::string(1, order)));
}

TEST(ValuesByteOrder, ABigEndianPairFindsTheViolationsAtTheirPlaces) {
  const py::tuple pair = byte_order_pair("f8");
  const ValueReport r = compare_values(with_byte_order(pair[0], '>'), with_byte_order(pair[1], '>'), {});
  EXPECT_EQ(r.mismatched, 7);  // 3, 17, 100, 511, 512, 701 and 1000; -0.0 at 998 only with signed zeros
  EXPECT_EQ(r.nan_mismatched, 1);
  EXPECT_EQ(r.inf_mismatched, 1);
  ASSERT_EQ(r.first.size(), parity::kFirstMismatches);
  const Index expected[] = {{3}, {17}, {100}, {511}, {512}};
  for (std::size_t i = 0; i < r.first.size(); ++i) EXPECT_EQ(r.first[i].index, expected[i]) << i;
  EXPECT_EQ(r.first[0].gold, "4.75");
  EXPECT_EQ(r.first[0].candidate, "5.25");
  EXPECT_EQ(r.first[1].candidate, "nan");
  EXPECT_EQ(r.first[2].candidate, "inf");
  EXPECT_EQ(r.max_abs.index, (Index{512}));  // 641.0 against 1923.0
  EXPECT_DOUBLE_EQ(r.max_abs.value, 1282.0);
  EXPECT_EQ(r.max_rel.index, (Index{511}));  // 639.75 against -639.75
  EXPECT_DOUBLE_EQ(r.max_rel.value, 2.0);
  EXPECT_EQ(r.signed_zero_mismatched, 0);
  EXPECT_EQ(compare_values(with_byte_order(pair[0], '>'), with_byte_order(pair[1], '>'), {1e-7, 0.0, true})
                .signed_zero_mismatched,
            1);
}

TEST(ValuesByteOrder, EitherSideSwappedGivesTheNativeReportFieldByField) {
  for (const std::string dtype : {"f8", "c16", "i8", "u8", "M8[s]", "m8[ms]", "f4", "i4"}) {
    const py::tuple pair = byte_order_pair(dtype);
    for (const Tolerance tol : {Tolerance{}, Tolerance{1e-7, 0.0, true}, Tolerance{0.0, 1.0, false}}) {
      ASSERT_GE(compare_values(pair[0], pair[1], tol).mismatched, 5) << dtype;
      for (const std::string shape : {"(1536,)", "(12, 128)", "F(12, 128)"}) {
        const bool fortran = shape[0] == 'F';
        auto shaped = [&](const py::object& a) {
          py::object s = a.attr("reshape")(np_eval(fortran ? shape.substr(1) : shape));
          return fortran ? py::module_::import("numpy").attr("asfortranarray")(s) : s;
        };
        const ValueReport plain = compare_values(shaped(pair[0]), shaped(pair[1]), tol);
        for (const char g : {'<', '>'})
          for (const char c : {'<', '>'})
            for (const std::int64_t split_from : {std::numeric_limits<std::int64_t>::max(), std::int64_t{0}}) {
              SCOPED_TRACE(::testing::Message()
                           << dtype << " " << shape << " gold " << g << " candidate " << c << " signed_zeros "
                           << tol.signed_zeros << " atol " << tol.atol << " split_from " << split_from);
              const py::object ga = shaped(with_byte_order(pair[0], g)), ca = shaped(with_byte_order(pair[1], c));
              EXPECT_TRUE(same_report(compare_values(ga, ca, tol, nullptr, split_from), plain));
            }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Complex

TEST(ValuesComplex, EqualWithNaNInImaginaryPart) {
  const ValueReport r = compare("np.array([1+2j, complex(3, np.nan)])", "np.array([1+2j, complex(3, np.nan)])");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.criterion, "allclose");
}

TEST(ValuesComplex, NaNInOneImaginaryPartIsANaNMismatch) {
  const ValueReport r = compare("np.array([1+2j, 3+4j])", "np.array([1+2j, complex(3, np.nan)])");
  EXPECT_TRUE(one_mismatch(r, {1}, "(3+4j)", "(3+nanj)"));
  EXPECT_EQ(r.nan_mismatched, 1);
}

TEST(ValuesComplex, DifferenceIsTheModulus) {
  const ValueReport r = compare("np.array([3+4j])", "np.array([6+8j])");
  EXPECT_EQ(r.mismatched, 1);
  EXPECT_DOUBLE_EQ(r.max_abs.value, 5.0);
  EXPECT_DOUBLE_EQ(r.max_rel.value, 1.0);
  // |(3+4j) - (3+4.5j)| = 0.5 <= 0.1 * |3+4j| = 0.5
  EXPECT_TRUE(compare("np.array([3+4j])", "np.array([3+4.5j])", {0.1, 0.0}).ok());
  EXPECT_FALSE(compare("np.array([3+4j])", "np.array([3+4.5j])", {0.09, 0.0}).ok());
}

TEST(ValuesComplex, InfinitiesMatchOnlyExactly) {
  EXPECT_TRUE(compare("np.array([complex(np.inf, 1), complex(-np.inf, -np.inf)])",
                      "np.array([complex(np.inf, 1), complex(-np.inf, -np.inf)])")
                  .ok());
  const ValueReport r = compare("np.array([complex(np.inf, 0), 1+0j, complex(np.inf, 1)])",
                                "np.array([1+0j, complex(np.inf, 0), complex(np.inf, 2)])");
  EXPECT_EQ(r.mismatched, 3);
  EXPECT_EQ(r.nan_mismatched, 0);
}

TEST(ValuesComplex, ComplexAgainstRealComparesInComplex) {
  EXPECT_TRUE(compare("np.array([1+0j, 2+0j])", "np.array([1.0, 2.0])").ok());
  const ValueReport r = compare("np.array([1+0j, 2+1j])", "np.array([1.0, 2.0])");
  EXPECT_EQ(r.criterion, "allclose");
  EXPECT_EQ(r.mismatched, 1);
}

TEST(ValuesComplex, NaNInOnePartOnlyIsANaNMismatchWhicheverPart) {
  const ValueReport r =
      compare("np.array([complex(np.nan, 1), complex(1, np.nan), complex(np.nan, 1), 1+1j])",
              "np.array([complex(1, np.nan), complex(1, np.nan), 1+1j, complex(np.nan, np.nan)])", {0.5, 0.5});
  EXPECT_EQ(r.mismatched, 3);
  EXPECT_EQ(r.nan_mismatched, 3);
  ASSERT_EQ(r.first.size(), 3u);
  EXPECT_EQ(r.first[0].index, (Index{0}));
  EXPECT_EQ(r.first[1].index, (Index{2}));
  EXPECT_EQ(r.first[2].index, (Index{3}));
  EXPECT_TRUE(r.max_abs.index.empty());
}

TEST(ValuesComplex, SameNaNPartsWithADifferentFinitePartAreNoInfinityMismatch) {
  // values.h: inf_mismatched counts "an infinity on one side only, or of the other sign"; neither side here has an
  // infinity, and the NaN is in the same part on both sides, so the mismatch is neither kind.
  const ValueReport r = compare("np.array([complex(np.nan, 1)])", "np.array([complex(np.nan, 2)])");
  EXPECT_EQ(r.mismatched, 1);
  EXPECT_EQ(r.nan_mismatched, 0);
  EXPECT_EQ(r.inf_mismatched, 0);
}

TEST(ValuesComplex, ModulusBeyondFloat64RangeGivesNoInfiniteTolerance) {
  // |1.5e308+1.5e308j| is about 2.1e308, past float64's range: computed naively, rtol * |gold| is infinite and
  // every finite candidate would pass. 0j is 100% off.
  const ValueReport r = compare("np.array([1.5e308+1.5e308j])", "np.array([0j])", {1e-7, 0.0});
  EXPECT_EQ(r.mismatched, 1);
}

TEST(ValuesComplex, LargestRelativeDifferenceDoesNotDependOnElementOrder) {
  // The first element's relative difference is inf / inf (the gold's modulus overflows float64); the second's is 1.
  const ValueReport r = compare("np.array([1.5e308+1.5e308j, 1+0j])", "np.array([0j, 2+0j])", {0.0, 0.0});
  const ValueReport back = compare("np.array([1+0j, 1.5e308+1.5e308j])", "np.array([2+0j, 0j])", {0.0, 0.0});
  EXPECT_EQ(r.mismatched, 2);
  EXPECT_FALSE(std::isnan(r.max_rel.value));
  EXPECT_EQ(r.max_rel.value, back.max_rel.value);
}

// ---------------------------------------------------------------------------------------------------------
// Exact dtypes

TEST(ValuesExact, IntegersDifferingByOneFailWhateverTheTolerance) {
  const ValueReport r =
      compare("np.array([10, 20, 30], dtype=np.int64)", "np.array([10, 20, 31], dtype=np.int64)", {1.0, 100.0});
  EXPECT_EQ(r.criterion, "exact");
  EXPECT_TRUE(one_mismatch(r, {2}, "30", "31"));
}

TEST(ValuesExact, LargeInt64DifferenceInvisibleInFloat64IsFound) {
  const ValueReport r = compare("np.array([2**53 + 1], dtype=np.int64)", "np.array([2**53], dtype=np.int64)");
  EXPECT_EQ(r.mismatched, 1);
}

TEST(ValuesExact, DifferentIntegerWidthsWithEqualValuesPass) {
  const ValueReport r = compare("np.array([-5, 0, 7], dtype=np.int32)", "np.array([-5, 0, 7], dtype=np.int64)");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.criterion, "exact");
  EXPECT_TRUE(compare("np.array([1, 200], dtype=np.uint8)", "np.array([1, 200], dtype=np.int16)").ok());
}

TEST(ValuesExact, Bool) {
  EXPECT_TRUE(compare("np.array([True, False])", "np.array([True, False])").ok());
  const ValueReport r = compare("np.array([True, False])", "np.array([True, True])");
  EXPECT_EQ(r.criterion, "exact");
  EXPECT_TRUE(one_mismatch(r, {1}, "False", "True"));
}

TEST(ValuesExact, UnicodeStringsOfDifferentWidths) {
  EXPECT_TRUE(compare("np.array(['ab', 'abc'], dtype='<U3')", "np.array(['ab', 'abc'], dtype='<U5')").ok());
  EXPECT_TRUE(compare("np.array(['ab', 'abc'], dtype='>U3')", "np.array(['ab', 'abc'], dtype='<U5')").ok());
  const ValueReport r = compare("np.array(['ab', 'abc'], dtype='<U3')", "np.array(['ab', 'abcd'], dtype='<U5')");
  EXPECT_EQ(r.criterion, "exact");
  EXPECT_EQ(r.mismatched, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].gold, "'abc'");
  EXPECT_EQ(r.first[0].candidate, "'abcd'");
}

TEST(ValuesExact, BytesStrings) {
  EXPECT_TRUE(compare("np.array([b'x', b'yz'], dtype='S2')", "np.array([b'x', b'yz'], dtype='S4')").ok());
  EXPECT_EQ(compare("np.array([b'x', b'yz'])", "np.array([b'x', b'zz'])").mismatched, 1);
}

TEST(ValuesExact, DatetimeWithNaT) {
  const std::string gold = "np.array(['2020-01-01', 'NaT', '2021-06-30'], dtype='M8[s]')";
  EXPECT_TRUE(compare(gold, gold).ok());
  // Same instants in a finer unit are equal after promotion.
  EXPECT_TRUE(compare(gold, "np.array(['2020-01-01', 'NaT', '2021-06-30'], dtype='M8[ms]')").ok());
  const ValueReport r = compare(gold, "np.array(['2020-01-01', '2020-01-02', '2021-06-30'], dtype='M8[s]')");
  EXPECT_EQ(r.mismatched, 1);
  ASSERT_EQ(r.first.size(), 1u);
  EXPECT_EQ(r.first[0].index, (Index{1}));
  EXPECT_EQ(r.criterion, "exact");
}

TEST(ValuesExact, TimedeltaNaT) {
  EXPECT_TRUE(compare("np.array([1, 'NaT'], dtype='m8[s]')", "np.array([1000, 'NaT'], dtype='m8[ms]')").ok());
}

TEST(ValuesExact, NaTOnOneSideIsANaNMismatch) {
  const ValueReport r = compare("np.array(['NaT', '2020-01-01', 'NaT'], dtype='M8[s]')",
                                "np.array(['2020-01-01', 'NaT', 'NaT'], dtype='M8[ms]')");
  EXPECT_EQ(r.mismatched, 2);
  EXPECT_EQ(r.nan_mismatched, 2);
  EXPECT_TRUE(r.max_abs.index.empty());  // NaT is no value to measure a difference from
  EXPECT_EQ(compare("np.array([5, 'NaT'], dtype='m8[s]')", "np.array(['NaT', 5], dtype='m8[s]')").nan_mismatched, 2);
}

TEST(ValuesExact, UnsignedDifferencesDoNotWrapAround) {
  // In uint64 (or uint8) arithmetic 0 - max wraps to 1; the report must show the true difference.
  const ValueReport r = compare("np.array([0], dtype=np.uint64)", "np.array([2**64 - 1], dtype=np.uint64)");
  EXPECT_EQ(r.mismatched, 1);
  EXPECT_DOUBLE_EQ(r.max_abs.value, 18446744073709551615.0);
  EXPECT_TRUE(std::isinf(r.max_rel.value));
  const ValueReport back = compare("np.array([2**64 - 1], dtype=np.uint64)", "np.array([0], dtype=np.uint64)");
  EXPECT_DOUBLE_EQ(back.max_abs.value, 18446744073709551615.0);
  EXPECT_DOUBLE_EQ(back.max_rel.value, 1.0);
  const ValueReport u8 = compare("np.array([0, 255], dtype=np.uint8)", "np.array([255, 0], dtype=np.uint8)");
  EXPECT_EQ(u8.mismatched, 2);
  EXPECT_DOUBLE_EQ(u8.max_abs.value, 255.0);
  EXPECT_EQ(u8.max_abs.index, (Index{0}));  // the first element with the largest difference
  EXPECT_TRUE(std::isinf(u8.max_rel.value));
}

TEST(ValuesExact, Int64AgainstUint64AsMathematicalIntegers) {
  // -1 and 2**64 - 1 share their bits, as do -2**63 and 2**63; 2**53 + 1 is not a float64.
  const ValueReport r = compare("np.array([-1, -2**63, 2**63 - 1, 2**53 + 1, 2**53 + 1, 7], dtype=np.int64)",
                                "np.array([2**64 - 1, 2**63, 2**63, 2**53, 2**53 + 1, 7], dtype=np.uint64)");
  EXPECT_EQ(r.criterion, "exact");
  EXPECT_EQ(r.mismatched, 4);
  ASSERT_EQ(r.first.size(), 4u);
  EXPECT_EQ(r.first[0].gold, "-1");
  EXPECT_EQ(r.first[0].candidate, "18446744073709551615");
  EXPECT_EQ(r.first[3].index, (Index{3}));
  EXPECT_DOUBLE_EQ(r.max_abs.value, 18446744073709551616.0);  // 2**64, from -1 and from -2**63
  EXPECT_EQ(r.max_abs.index, (Index{0}));                     // the first of the two
  // uint64 above 2**63 on the gold side, int64 on the candidate's.
  const ValueReport u = compare("np.array([2**63 + 1, 2**53 + 1, 3], dtype=np.uint64)",
                                "np.array([2**63 - 1, 2**53 + 1, 3], dtype=np.int64)");
  EXPECT_EQ(u.mismatched, 1);
  EXPECT_DOUBLE_EQ(u.max_abs.value, 2.0);
}

// ---------------------------------------------------------------------------------------------------------
// Shapes and limits

TEST(ValuesShape, EmptyArrays) {
  const ValueReport r = compare("np.zeros((0, 3))", "np.zeros((0, 3))");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.total, 0);
  EXPECT_TRUE(compare("np.zeros(0, dtype=np.int64)", "np.zeros(0, dtype=np.int32)").ok());
}

TEST(ValuesShape, ZeroDimensionalArrays) {
  EXPECT_TRUE(compare("np.array(1.5)", "np.array(1.5)").ok());
  const ValueReport r = compare("np.array(1.5)", "np.array(2.5)");
  EXPECT_EQ(r.total, 1);
  EXPECT_TRUE(one_mismatch(r, {}, "1.5", "2.5"));  // a 0-d array's one element has an empty index
  EXPECT_EQ(compare("np.array(7)", "np.array(8)").mismatched, 1);
}

TEST(ValuesShape, OneElementArrays) {
  EXPECT_TRUE(compare("np.array([1.5])", "np.array([1.5])").ok());
  EXPECT_TRUE(one_mismatch(compare("np.array([1.5])", "np.array([2.5])"), {0}, "1.5", "2.5"));
  const ValueReport r = compare("np.full((1, 1, 1), 3, dtype='>i2')", "np.full((1, 1, 1), 4, dtype=np.uint8)");
  EXPECT_TRUE(one_mismatch(r, {0, 0, 0}, "3", "4"));
  EXPECT_EQ(r.max_abs.index, (Index{0, 0, 0}));
}

TEST(ValuesShape, LastElementOfALargeStridedArrayIsLocated) {
  // Non-contiguous and past several iterator buffers: found in memory order, located in C order.
  py::object gold = np_eval("np.arange(3 * 8192.0).reshape(3, 8192).T[:, ::-1]");
  py::object cand = np_eval("np.ascontiguousarray(np.arange(3 * 8192.0).reshape(3, 8192).T[:, ::-1])");
  cand[py::make_tuple(8191, 0)] = -1.0;
  const ValueReport r = compare_values(gold, cand, {});
  EXPECT_EQ(r.total, 3 * 8192);
  EXPECT_TRUE(one_mismatch(r, {8191, 0}, "24575.0", "-1.0"));
  EXPECT_EQ(r.max_abs.index, (Index{8191, 0}));
}

TEST(ValuesShape, OnlyTheFirstMismatchesInCOrderAreKept) {
  // F-ordered gold so that memory order and C order disagree.
  const ValueReport r =
      compare("np.asfortranarray(np.arange(20.0).reshape(4, 5))", "np.arange(20.0).reshape(4, 5) + 1");
  EXPECT_EQ(r.mismatched, 20);
  ASSERT_EQ(r.first.size(), parity::kFirstMismatches);
  for (std::size_t i = 0; i < r.first.size(); ++i) {
    EXPECT_EQ(r.first[i].index, (Index{0, static_cast<std::int64_t>(i)}));
    EXPECT_EQ(r.first[i].gold, std::to_string(i) + ".0");
  }
}

TEST(ValuesShape, ManyMismatchesAcrossBufferBoundariesAreAllCounted) {
  // Larger than NpyIter's default buffer, with a cast on both sides, so the count spans several buffers.
  const ValueReport r = compare("np.arange(100000, dtype='>f8')",
                                "np.where(np.arange(100000) % 7 == 0, -1.0, np.arange(100000.0)).astype(np.float32)");
  EXPECT_EQ(r.total, 100000);
  EXPECT_EQ(r.mismatched, (100000 + 6) / 7);  // every multiple of 7, including 0
  ASSERT_EQ(r.first.size(), parity::kFirstMismatches);
  EXPECT_EQ(r.first[0].index, (Index{0}));
  EXPECT_EQ(r.first[4].index, (Index{28}));
}

// ---------------------------------------------------------------------------------------------------------
// The mismatch map of failing 1-D and 2-D pairs

// The map of values.h's definition, element by element, for a boolean array `violations` of one or two axes.
parity::MismatchMap map_by_definition(py::handle violations) {
  const auto shape = violations.attr("shape").cast<Index>();
  const std::int64_t rows = shape.size() == 2 ? shape[0] : 1, columns = shape.back();
  const std::int64_t grid_rows = std::min<std::int64_t>(rows, 16), grid_columns = std::min<std::int64_t>(columns, 64);
  const auto flags = violations.attr("ravel")().attr("tolist")().cast<std::vector<bool>>();
  parity::MismatchMap map;
  map.shape = shape;
  map.grid = shape.size() == 2 ? Index{grid_rows, grid_columns} : Index{grid_columns};
  map.counts.assign(static_cast<std::size_t>(grid_rows * grid_columns), 0);
  map.sizes = map.counts;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < columns; ++j) {
      const auto cell = static_cast<std::size_t>(i * grid_rows / rows * grid_columns + j * grid_columns / columns);
      ++map.sizes[cell];
      map.counts[cell] += flags[static_cast<std::size_t>(i * columns + j)];
    }
  return map;
}

::testing::AssertionResult same_map(const parity::MismatchMap& got, const parity::MismatchMap& want) {
  if (got.shape == want.shape && got.grid == want.grid && got.counts == want.counts && got.sizes == want.sizes)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "shape " << ::testing::PrintToString(got.shape) << " grid "
                                       << ::testing::PrintToString(got.grid) << "\ncounts "
                                       << ::testing::PrintToString(got.counts) << "\nexpected "
                                       << ::testing::PrintToString(want.counts) << "\nsizes "
                                       << ::testing::PrintToString(got.sizes) << "\nexpected "
                                       << ::testing::PrintToString(want.sizes);
}

// `base` plus one where the boolean expression `where` holds, of the C index `i` and, for 2-D, the row and column
// indices `r` and `c`: the violations of a zero-tolerance comparison with `base` are exactly there.
std::string changed_where(const std::string& base, const std::string& where) {
  return "(lambda a: a + np.where((lambda i, r=None, c=None: " + where +
         ")(np.arange(a.size).reshape(a.shape), *(np.indices(a.shape) if a.ndim == 2 else ())), 1, 0))(" + base + ")";
}

TEST(ValuesMap, ShortArraysHaveACellPerElement) {
  const ValueReport r = compare("np.arange(5.0)", "np.array([0, 1.5, 2, 3, 9.0])");
  EXPECT_EQ(r.map.shape, (Index{5}));
  EXPECT_EQ(r.map.grid, (Index{5}));
  EXPECT_EQ(r.map.counts, (Index{0, 1, 0, 0, 1}));
  EXPECT_EQ(r.map.sizes, (Index{1, 1, 1, 1, 1}));
  const ValueReport m = compare("np.arange(6).reshape(2, 3)", "np.array([[0, 1, 2], [3, 0, 0]])");
  EXPECT_EQ(m.map.shape, (Index{2, 3}));
  EXPECT_EQ(m.map.grid, (Index{2, 3}));
  EXPECT_EQ(m.map.counts, (Index{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(m.map.sizes, (Index{1, 1, 1, 1, 1, 1}));
}

TEST(ValuesMap, AHundredElementsFallIntoSixtyFourBins) {
  // Element i lies in bin floor(i * 64 / 100): bins of one or two elements, 100 in all.
  const ValueReport all = compare("np.arange(100.0)", "np.arange(100.0) + 1");
  EXPECT_EQ(all.map.grid, (Index{64}));
  EXPECT_EQ(all.map.counts, all.map.sizes);
  EXPECT_TRUE(same_map(all.map, map_by_definition(np_eval("np.ones(100, bool)"))));
  EXPECT_EQ(all.map.sizes[0], 2);   // elements 0 and 1
  EXPECT_EQ(all.map.sizes[1], 2);   // 2 and 3
  EXPECT_EQ(all.map.sizes[2], 1);   // 4
  EXPECT_EQ(all.map.sizes[63], 1);  // 99
  const ValueReport some = compare("np.arange(100.0)", changed_where("np.arange(100.0)", "np.isin(i, [1, 4, 50, 99])"));
  Index counts(64, 0);
  counts[0] = 1, counts[2] = 1, counts[32] = 1, counts[63] = 1;
  EXPECT_EQ(some.map.counts, counts);
}

TEST(ValuesMap, SeventeenRowsBy130ColumnsAreSixteenBySixtyFourCells) {
  const std::string base = "np.arange(17 * 130.0).reshape(17, 130)";
  const std::string where = "(r * 7 + c * 3) % 11 == 0";
  const ValueReport r = compare(base, changed_where(base, where), {0.0, 0.0});
  EXPECT_EQ(r.map.shape, (Index{17, 130}));
  EXPECT_EQ(r.map.grid, (Index{16, 64}));
  const parity::MismatchMap want = map_by_definition(np_eval(changed_where(base, where) + " != " + base));
  EXPECT_TRUE(same_map(r.map, want));
  // Rows 0 and 1 share the first row of cells, and columns 0-2 the first column: cell [0, 0] holds 6 elements.
  EXPECT_EQ(r.map.sizes[0], 6);
  std::int64_t total = 0, counted = 0;
  for (std::size_t k = 0; k < r.map.sizes.size(); ++k) total += r.map.sizes[k], counted += r.map.counts[k];
  EXPECT_EQ(total, 17 * 130);
  EXPECT_EQ(counted, r.mismatched);
}

TEST(ValuesMap, NoLayoutOrByteOrderChangesTheMap) {
  // Wide pairs are located slab by slab, tall ones jump over rows, long 1-D ones go through several buffers.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"np.arange(17 * 130.0).reshape(17, 130)", "(r * 7 + c * 3) % 11 == 0"},
      {"np.arange(3 * 2500.0).reshape(3, 2500)", "(c % 97 == 5) | (i == 7499)"},
      {"np.arange(1000 * 3.0).reshape(1000, 3)", "np.isin(r, [0, 1, 2, 500, 998, 999]) & (c != 1)"},
      {"np.arange(20000.0)", "(i % 7 == 0) | (i > 19990)"},
  };
  const std::vector<std::string> layouts = {
      "{}",
      "{}.astype('>f8')",
      "np.asfortranarray({})",
      "np.asfortranarray({}.astype('>f8'))",
      "(lambda a, back: np.ascontiguousarray(a[back])[back])({0}, (slice(None, None, -1),) * {0}.ndim)",
      "(lambda a: (lambda b: (b.__setitem__(Ellipsis, a), b)[1])(np.empty(tuple(2 * n for n in a.shape))"
      "[(slice(None, None, -2),) * a.ndim]))({})",
  };
  auto in_layout = [](const std::string& layout, const std::string& expr) {
    std::string out = layout;
    for (const std::string hole : {"{}", "{0}"})
      for (std::size_t at; (at = out.find(hole)) != std::string::npos;) out.replace(at, hole.size(), "(" + expr + ")");
    return np_eval(out);
  };
  for (const auto& [base, where] : cases) {
    const std::string changed = changed_where(base, where);
    const parity::MismatchMap want = map_by_definition(np_eval(changed + " != " + base));
    for (const std::string& g : layouts)
      for (const std::string& c : layouts) {
        py::object ga = in_layout(g, base), ca = in_layout(c, changed);
        SCOPED_TRACE(::testing::Message() << base << ": gold " << layout_of(ga) << ", candidate " << layout_of(ca));
        EXPECT_TRUE(same_map(compare_values(ga, ca, {0.0, 0.0}).map, want));
      }
  }
}

TEST(ValuesMap, EveryKindOfViolationIsCounted) {
  const ValueReport r = compare("np.array([1.0, 2.0, np.inf, -0.0, 5.0, np.nan, 7.0])",
                                "np.array([1.0, np.nan, -np.inf, 0.0, 5.5, np.nan, 7.0])", {0.0, 0.0, true});
  EXPECT_EQ(r.nan_mismatched, 1);
  EXPECT_EQ(r.inf_mismatched, 1);
  EXPECT_EQ(r.signed_zero_mismatched, 1);
  EXPECT_EQ(r.map.counts, (Index{0, 1, 1, 1, 1, 0, 0}));
  const ValueReport t = compare("np.array([['2020-01-01', 'NaT'], ['2020-01-03', '2020-01-04']], dtype='M8[D]')",
                                "np.array([['NaT', 'NaT'], ['2020-01-03', '2020-01-05']], dtype='M8[D]')");
  EXPECT_EQ(t.map.counts, (Index{1, 0, 0, 1}));
  const ValueReport s = compare("np.array(['a', 'b', 'c'])", "np.array(['a', 'x', 'c'])");
  EXPECT_EQ(s.map.counts, (Index{0, 1, 0}));
}

TEST(ValuesMap, OnlyFailingPairsOfOneOrTwoAxesWithElementsHaveAMap) {
  EXPECT_TRUE(compare("np.arange(12.0).reshape(3, 4)", "np.arange(12.0).reshape(3, 4)").map.empty());
  EXPECT_TRUE(compare("np.asfortranarray(np.arange(12.0).reshape(3, 4))", "np.arange(12.0).reshape(3, 4)").map.empty());
  EXPECT_TRUE(compare("np.arange(3.0)", "np.arange(3.0) * (1 + 1e-9)").map.empty());  // within tolerance
  EXPECT_TRUE(compare("np.zeros((0, 3))", "np.zeros((0, 3))").map.empty());
  const ValueReport scalar = compare("np.array(1.5)", "np.array(2.5)");
  EXPECT_EQ(scalar.mismatched, 1);
  EXPECT_TRUE(scalar.map.empty());
  const ValueReport cube = compare("np.zeros((2, 3, 4))", "np.ones((2, 3, 4))");
  EXPECT_EQ(cube.mismatched, 24);
  EXPECT_TRUE(cube.map.empty());
  EXPECT_TRUE(compare("np.array([1.0])", "np.array(['x'])").map.empty());  // not comparable
}

// ---------------------------------------------------------------------------------------------------------
// Not comparable

TEST(ValuesNotComparable, DatetimeAgainstInteger) {
  ValueReport r;
  ASSERT_NO_THROW(r = compare("np.array(['2020-01-01'], dtype='M8[D]')", "np.array([18262], dtype=np.int64)"));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.not_comparable.empty());
}

// NumPy's cast to a finer unit wraps around: 2**40 + 3 days as nanoseconds is the wrapped value a candidate could hold
// (it had compared equal), and 2**47 days becomes NaT (equal to a NaT candidate).
TEST(ValuesNotComparable, DatetimesOverflowingTheCommonUnit) {
  const ValueReport wrapped =
      compare("np.array([2**40 + 3], dtype='m8[D]')",
              "np.array([((2**40 + 3) * 86400 * 10**9 + 2**63) % 2**64 - 2**63], dtype='m8[ns]')");
  EXPECT_FALSE(wrapped.ok());
  EXPECT_NE(wrapped.not_comparable.find("the gold values do not fit in timedelta64[ns]"), std::string::npos)
      << wrapped.not_comparable;
  const ValueReport nat = compare("np.array([2**47, 0], dtype='M8[D]')", "np.array(['NaT', 0], dtype='>M8[ns]')");
  EXPECT_FALSE(nat.ok());
  EXPECT_FALSE(nat.not_comparable.empty());
  EXPECT_TRUE(compare("np.array([2**40 + 3], dtype='m8[ns]')",
                      "np.array([((2**40 + 3) * 86400 * 10**9 + 2**63) % 2**64 - 2**63], dtype='m8[ns]')")
                  .not_comparable.empty());  // one unit: nothing cast
}

TEST(ValuesNotComparable, StringAgainstFloat) {
  ValueReport r;
  ASSERT_NO_THROW(r = compare("np.array(['abc'])", "np.array([1.5])"));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.not_comparable.empty());
}

TEST(ValuesNotComparable, NumericLookingStringAgainstFloat) {
  // A string that parses as the number must not make the values "equal".
  ValueReport r;
  ASSERT_NO_THROW(r = compare("np.array(['1.5'])", "np.array([1.5])"));
  EXPECT_FALSE(r.ok());
}

// ---------------------------------------------------------------------------------------------------------
// Property test: random arrays against tests/values_reference.py, a plain NumPy reading of values.h's rule

// The module is a real file (not an inline string) so that a failing case can be rebuilt by hand from Python.
py::module_ reference_module() {
  static const py::module_ module = [] {
    py::module_::import("sys").attr("path").attr("insert")(0, PARITY_TESTS_DIR);
    return py::module_::import("values_reference");
  }();
  return module;
}

// PARITY_VALUES_SEED and PARITY_VALUES_CASES explore beyond the fixed default without a rebuild.
long env_or(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtol(value, nullptr, 10) : fallback;
}

bool near(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (a == b) return true;  // infinities included
  return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b));
}

// One line for each fact of `r` that differs from `expected` (a values_reference.reference() dict); empty if none.
std::string disagreements(const ValueReport& r, const py::dict& expected) {
  std::ostringstream wrong;
  auto count = [&](const char* name, std::int64_t got) {
    const auto want = expected[name].cast<std::int64_t>();
    if (got != want) wrong << name << ": kernel " << got << ", reference " << want << "\n";
  };
  if (r.criterion != expected["criterion"].cast<std::string>())
    wrong << "criterion: kernel " << r.criterion << ", reference " << expected["criterion"].cast<std::string>() << "\n";
  if (!r.not_comparable.empty()) wrong << "not_comparable: " << r.not_comparable << "\n";
  count("total", r.total);
  count("mismatched", r.mismatched);
  count("nan_mismatched", r.nan_mismatched);
  count("inf_mismatched", r.inf_mismatched);
  count("signed_zero_mismatched", r.signed_zero_mismatched);
  if (r.has_differences != expected["has_differences"].cast<bool>())
    wrong << "has_differences: kernel " << r.has_differences << "\n";

  const py::list first = expected["first"];
  for (std::size_t i = 0; i < std::max(first.size(), r.first.size()); ++i) {
    std::string got = "none", want = "none";
    if (i < r.first.size()) {
      const parity::Mismatch& m = r.first[i];
      got = show(m.index) + " " + kind_label(m.kind) + " " + m.gold + " vs " + m.candidate;
    }
    if (i < first.size()) {
      const py::tuple e = first[i];
      want = show(e[0].cast<Index>()) + " " + e[1].cast<std::string>() + " " + e[2].cast<std::string>() + " vs " +
             e[3].cast<std::string>();
    }
    if (got != want) wrong << "first[" << i << "]: kernel " << got << ", reference " << want << "\n";
  }
  const auto nonfinite = expected["first_nonfinite"].cast<std::vector<Index>>();
  std::vector<Index> got_nonfinite;
  for (const parity::Mismatch& m : r.first_nonfinite) got_nonfinite.push_back(m.index);
  if (got_nonfinite != nonfinite)
    wrong << "first_nonfinite: kernel " << ::testing::PrintToString(got_nonfinite) << ", reference "
          << ::testing::PrintToString(nonfinite) << "\n";

  auto extreme = [&](const char* name, const parity::Extreme& got) {
    const py::object want = expected[name];
    std::ostringstream kernel;
    kernel << std::setprecision(17) << got.value << " at " << show(got.index);
    if (want.is_none()) {
      if (got.value != 0 || !got.index.empty()) wrong << name << ": kernel " << kernel.str() << ", reference none\n";
      return;
    }
    const auto [value, index] = want.cast<std::pair<double, Index>>();
    if (!near(got.value, value) || got.index != index)
      wrong << name << ": kernel " << kernel.str() << ", reference " << std::setprecision(17) << value << " at "
            << show(index) << "\n";
  };
  extreme("max_abs", r.max_abs);
  extreme("max_rel", r.max_rel);

  const py::object map = expected["map"];
  if (map.is_none() != r.map.empty()) {
    wrong << "map: kernel " << (r.map.empty() ? "none" : "one") << ", reference " << (map.is_none() ? "none" : "one")
          << "\n";
  } else if (!map.is_none()) {
    for (const auto& [name, got] : {std::pair{"shape", &r.map.shape}, std::pair{"grid", &r.map.grid},
                                    std::pair{"counts", &r.map.counts}, std::pair{"sizes", &r.map.sizes}}) {
      const auto want = map[name].cast<Index>();
      if (*got != want)
        wrong << "map " << name << ": kernel " << ::testing::PrintToString(*got) << ", reference "
              << ::testing::PrintToString(want) << "\n";
    }
  }
  return wrong.str();
}

TEST(ValuesProperty, KernelAgreesWithANumPyReferenceOnRandomArrays) {
  constexpr long kSeed = 20250611, kCases = 3000;
  constexpr int kShown = 10;  // the rest are counted, so one broken rule does not flood the log
  const py::module_ reference = reference_module();
  const long seed = env_or("PARITY_VALUES_SEED", kSeed), cases = env_or("PARITY_VALUES_CASES", kCases);
  long failed = 0;
  for (long i = 0; i < cases; ++i) {
    const py::tuple c = reference.attr("make_case")(seed, i);
    const Tolerance tol{c[2].cast<double>(), c[3].cast<double>(), c[4].cast<bool>()};
    const ValueReport r = compare_values(c[0], c[1], tol);
    const std::string wrong =
        disagreements(r, reference.attr("reference")(c[0], c[1], tol.rtol, tol.atol, tol.signed_zeros));
    if (wrong.empty() || ++failed > kShown) continue;
    ADD_FAILURE() << "seed " << seed << " case " << i << " (values_reference.make_case(" << seed << ", " << i
                  << ")), rtol=" << tol.rtol << " atol=" << tol.atol << " signed_zeros=" << tol.signed_zeros << "\n"
                  << wrong << "gold: " << reference.attr("describe")(c[0]).cast<std::string>()
                  << "\ncandidate: " << reference.attr("describe")(c[1]).cast<std::string>();
  }
  EXPECT_EQ(failed, 0) << "of " << cases << " cases disagree with the reference (seed " << seed << ")";
}

// parity.probe.begin_digests of a gold and a candidate array, with `taps` given each pending hasher for
// compare_values to feed: what compare's begin_digests does (probes.cc), for the DigestTaps tests below.
py::tuple begin_with_taps(const py::module_& probe, const py::object& gold, const py::object& candidate,
                          parity::DigestTaps& taps) {
  py::list sides;
  for (const py::object& side : {gold, candidate}) sides.append(py::make_tuple(side, py::none(), py::none(), "xxh3:"));
  const py::tuple begun = probe.attr("begin_digests")(sides);
  for (py::handle tap : begun[1]) taps.add(tap[py::int_(0)], tap[py::int_(1)]);
  return begun;
}

// The finished digests of both sides equal parity.probe's own separate pass over each array.
void expect_finished_as_separate(const py::module_& probe, const py::tuple& begun, const py::object& gold,
                                 const py::object& candidate, const std::string& context) {
  const py::list finished = probe.attr("finish_digests")(begun[0]);
  for (std::size_t i = 0; i < 2; ++i) {
    const py::object separate = probe.attr("digests")(i == 0 ? gold : candidate), now = finished[i];
    EXPECT_TRUE(now.equal(separate)) << context << py::str(now).cast<std::string>()
                                     << " != " << py::str(separate).cast<std::string>();
  }
}

// The fidelity digests fused into the kernel's pass (DigestTaps): parity.probe's hasher of each array, fed by
// compare_values, gives the digest parity.probe's own pass gives, in every layout. C order and big-endian (C order in
// memory) are fed whole, across many pieces and sizes that are no multiple of one, mismatching or cast values too; F
// order, strided, a column (compared in slabs) and empty arrays are not, and are hashed in a pass of their own.
TEST(DigestTaps, FusedDigestsEqualTheSeparatePassInEveryLayout) {
  const py::module_ probe = py::module_::import("parity.probe");
  const py::object fused_from = probe.attr("_FUSED_FROM");
  probe.attr("_FUSED_FROM") = 0;  // every array pending, small ones too
  const std::vector<std::tuple<std::string, std::string, bool>> cases = {
      {"np.arange(49157.0)", "np.arange(49157.0)", true},               // 3 pieces of 2^14 and 5 elements
      {"np.arange(100003, dtype='>f8')", "np.arange(100003.0)", true},  // swapped as loaded, hashed as stored
      {"np.arange(100003, dtype='>f8')", "np.arange(100003, dtype='>f8') + 1", true},  // both swapped
      {"np.arange(50001, dtype='>c16') * 1j", "np.arange(50001, dtype='>i8')", true},  // cast and swapped
      {"np.arange(70001, dtype='>i4')", "np.arange(70001, dtype='>i4')", true},        // cast (no 8-byte part)
      {"np.arange(40000.0).reshape(200, 200)", "np.arange(40000.0).reshape(200, 200) + 1", true},     // all differ
      {"np.arange(70000, dtype=np.int8)", "np.arange(70000, dtype=np.int8).astype(np.int64)", true},  // cast
      {"np.full((), 3.5)", "np.full((), 3.5)", true},                                                 // 0-d
      {"np.asfortranarray(np.arange(60000.0).reshape(300, 200))", "np.arange(60000.0).reshape(300, 200)", false},
      {"np.arange(100000.0)[::3]", "np.arange(100000.0)[::3]", false},
      {"np.arange(40000.0).reshape(-1, 1)", "np.arange(40000.0).reshape(-1, 1)", false},
      {"np.zeros((0, 5))", "np.zeros((0, 5))", false},
  };
  for (const auto& [gold_expr, candidate_expr, fed] : cases) {
    SCOPED_TRACE(gold_expr + " against " + candidate_expr);
    const py::object gold = np_eval(gold_expr), candidate = np_eval(candidate_expr);
    parity::DigestTaps taps;
    const py::tuple begun = begin_with_taps(probe, gold, candidate, taps);
    compare_values(gold, candidate, {}, &taps);
    const py::list pending = begun[0][py::int_(0)][py::int_(2)];
    ASSERT_EQ(pending.size(), 1u);
    const bool empty = py::len(gold.attr("ravel")()) == 0;
    EXPECT_EQ(pending[0].attr("fed")().cast<bool>(), fed || empty) << "the kernel fed the gold hasher";
    expect_finished_as_separate(probe, begun, gold, candidate, "");
  }
  probe.attr("_FUSED_FROM") = fused_from;
}

// A hasher takes its array's bytes only in order from the first: a second pass over the same array (the same output
// twice) gives it nothing more, and its digest stays the array's.
TEST(DigestTaps, AnArrayComparedTwiceIsHashedOnce) {
  const py::module_ probe = py::module_::import("parity.probe");
  const py::object gold = np_eval("np.arange(300000.0)"), candidate = np_eval("np.arange(300000.0)");
  const py::tuple begun =
      probe.attr("begin_digests")(py::make_tuple(py::make_tuple(gold, py::none(), py::none(), "xxh3:")));
  parity::DigestTaps taps;
  for (py::handle tap : begun[1]) taps.add(tap[py::int_(0)], tap[py::int_(1)]);
  compare_values(gold, candidate, {}, &taps);
  compare_values(gold, candidate, {}, &taps);
  const py::list finished = probe.attr("finish_digests")(begun[0]);
  const py::object now = finished[0];
  EXPECT_TRUE(now.equal(probe.attr("digests")(gold)));
}

// A large C-contiguous pair is compared in two halves on two threads (split_from, here forced down to 0 bytes): the
// report is the one pass's (counts add, the first mismatches stay the first in C order, a maximum met in both halves
// keeps the smaller index, the map adds up), and the hashers still get every byte in order, for mismatches in either
// half, both, and lengths that are odd and no multiple of the kernel's pieces. (On one core both are the one-part
// pass: usable_cores.)
TEST(DigestTaps, ASplitPassGivesTheOnePassReportAndDigests) {
  const py::module_ probe = py::module_::import("parity.probe");
  const py::object fused_from = probe.attr("_FUSED_FROM");
  probe.attr("_FUSED_FROM") = 0;
  const std::string base = "np.arange(100003.0)";  // halves of 50001 and 50002 elements
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base, base},                                                           // no mismatch
      {base, "np.where(np.arange(100003) % 9973 == 7, 0.5, 1.0) + " + base},  // first half and second half
      {base, "np.where(np.arange(100003) == 3, 2.0, 0.0) + " + base},         // first half only
      {base, "np.where(np.arange(100003) >= 50001, 1.0, 0.0) + " + base},     // second half only, all of it
      {base, "np.where(np.isin(np.arange(100003), [10, 50002, 70000]), 1.0, 0.0) + " + base},  // tied maxima
      {"np.arange(30001, dtype='>f8').reshape(1, 30001)",  // big-endian, one row, NaN
       "np.where(np.arange(30001) % 7 == 0, np.nan, np.arange(30001.0)).reshape(1, 30001)"},
      {"np.arange(3.0)", "np.arange(3.0) + np.array([0, 0, 1.0])"},  // tiny: halves of 1 and 2
      {"np.arange(100003, dtype='>f8')",  // both big-endian, violations in both halves, an infinity and -0.0
       "(np.where(np.arange(100003) % 9973 == 7, 0.5, 1.0) + np.arange(100003.0)).astype('>f8')"},
      {"np.where(np.arange(100003) == 60000, -0.0, np.arange(100003.0)).astype('>f8')",
       "np.where(np.arange(100003) == 80000, np.inf, np.arange(100003.0)).astype('>f8')"},
  };
  for (const auto& [gold_expr, candidate_expr] : cases) {
    SCOPED_TRACE(gold_expr + " against " + candidate_expr);
    const py::object gold = np_eval(gold_expr), candidate = np_eval(candidate_expr);
    std::vector<ValueReport> reports;
    for (const std::int64_t split_from : {std::numeric_limits<std::int64_t>::max(), std::int64_t{0}}) {
      parity::DigestTaps taps;
      const py::tuple begun = begin_with_taps(probe, gold, candidate, taps);
      reports.push_back(compare_values(gold, candidate, {}, &taps, split_from));
      const py::list pending = begun[0][py::int_(0)][py::int_(2)];
      ASSERT_EQ(pending.size(), 1u);
      EXPECT_TRUE(pending[0].attr("fed")().cast<bool>()) << "split_from " << split_from;
      expect_finished_as_separate(probe, begun, gold, candidate, "split_from " + std::to_string(split_from) + ": ");
    }
    EXPECT_TRUE(same_report(reports[0], reports[1]));
  }
  probe.attr("_FUSED_FROM") = fused_from;
}

// compare_values splits its pass only where this thread may run on two cores: usable_cores is the affinity mask's
// count, so a process pinned to one core (taskset, a cpuset) compares on one thread.
TEST(ValuesSplit, UsableCoresFollowsTheAffinityMask) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(parity::usable_cores(), static_cast<unsigned>(CPU_COUNT(&before)));
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const unsigned pinned = parity::usable_cores();
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(pinned, 1u);
}

}  // namespace
