// Element-wise comparison of two same-shape arrays in one buffered NpyIter pass, without temporaries.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

namespace parity {

/// allclose criterion with gold as the reference: |candidate - gold| <= atol + rtol * |gold|.
/// NaN equals NaN; an infinity equals only the same infinity; signed zeros are equal.
struct Tolerance {
  double rtol = 1e-7;
  double atol = 0.0;
};

/// One differing element: its index and both values as Python's repr shows them.
struct Mismatch {
  std::vector<std::int64_t> index;
  std::string gold, candidate;
};

struct ValueReport {
  std::string criterion;  ///< "allclose" (floating and complex) or "exact" (everything else)
  std::int64_t total = 0;
  std::int64_t mismatched = 0;
  std::int64_t nan_mismatched = 0;  ///< NaN on one side only (included in `mismatched`)
  double max_abs = 0, max_rel = 0;  ///< among violations with finite difference
  std::vector<Mismatch> first;      ///< the first violations in C order
  std::string not_comparable;       ///< set when the dtypes have no common type to compare in
  bool ok() const { return mismatched == 0 && not_comparable.empty(); }
};

inline constexpr std::size_t kFirstMismatches = 5;

/// The scalar predicate of the allclose criterion; the array kernel applies the same rule.
bool close_enough(double gold, double candidate, const Tolerance& tol);

/// Compares `gold` and `candidate` (numpy.ndarray, same shape, any byte order, strides or alignment).
/// Floating or complex on either side: allclose in float64/complex128. Otherwise exact, in the types'
/// common native dtype. Structured dtypes are compared by the caller, field by field.
ValueReport compare_values(pybind11::handle gold, pybind11::handle candidate, const Tolerance& tol);

}  // namespace parity
