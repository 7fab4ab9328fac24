// Unit tests of the values kernel: compare_values and close_enough against numpy.testing's allclose semantics.
#include "values.h"

#include <gtest/gtest.h>
#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <limits>
#include <string>
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
// Not comparable

TEST(ValuesNotComparable, DatetimeAgainstInteger) {
  ValueReport r;
  ASSERT_NO_THROW(r = compare("np.array(['2020-01-01'], dtype='M8[D]')", "np.array([18262], dtype=np.int64)"));
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.not_comparable.empty());
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

}  // namespace
