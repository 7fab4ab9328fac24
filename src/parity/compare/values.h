// Element-wise comparison of two same-shape arrays, streamed through buffered NpyIter passes without temporaries.
#pragma once

#include <pybind11/pytypes.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "digest.h"

namespace parity {

/// allclose criterion with gold as the reference: |candidate - gold| <= atol + rtol * |gold|.
/// NaN equals NaN; an infinity equals only the same infinity; signed zeros are equal unless `signed_zeros`.
struct Tolerance {
  double rtol = 1e-7;
  double atol = 0.0;
  bool signed_zeros = false;  ///< -0.0 against 0.0 is a mismatch
};

/// The default tolerance for floating values of `dtype` (float16 looser than float64; see README "Checks").
Tolerance default_tolerance(pybind11::handle dtype);

/// Why one element differs. NaN and infinity locations are told apart from differences in value.
enum class MismatchKind { Value, NaN, Inf, SignedZero };
const char* mismatch_kind_name(MismatchKind kind);

/// One differing element: its index and both values as Python's repr shows them.
struct Mismatch {
  std::vector<std::int64_t> index;
  std::string gold, candidate;
  MismatchKind kind = MismatchKind::Value;
};

/// The largest absolute or relative difference among violations, and the first element (C order) that has it.
struct Extreme {
  double value = 0;
  std::vector<std::int64_t> index;
  bool found = false;  ///< some violation had a measurable difference (an index may be empty: a 0-d array's)
};

/// Where the violations of a 1-D or 2-D array lie, for a picture of them: the array cut into a coarse grid of cells,
/// with each cell's violations and elements counted. Element i of n lies in cell floor(i * B / n) of B = min(n, 64);
/// element (i, j) of (r, c) in cell (floor(i * R / r), floor(j * C / c)) of R = min(r, 16) by C = min(c, 64).
/// Cells hold runs of consecutive indices whose lengths differ by at most one.
struct MismatchMap {
  std::vector<std::int64_t> shape;   ///< the array's: [n] or [r, c]
  std::vector<std::int64_t> grid;    ///< cells along each axis: [B] or [R, C]; empty when there is no map
  std::vector<std::int64_t> counts;  ///< violations of every kind in each cell, row-major
  std::vector<std::int64_t> sizes;   ///< elements in each cell, row-major
  bool empty() const { return grid.empty(); }
};

/// The most cells a MismatchMap has along rows (2-D only) and along columns (a 1-D array's one axis).
inline constexpr std::int64_t kMapRows = 16, kMapColumns = 64;

struct ValueReport {
  std::string criterion;    ///< "allclose" (floating and complex) or "exact" (everything else)
  std::string compared_as;  ///< the dtype both sides were read as ("float64", "longdouble", "int", "<U5", ...)
  std::int64_t total = 0;
  std::int64_t mismatched = 0;      ///< every violation, of any kind
  std::int64_t nan_mismatched = 0;  ///< NaN (NaT) on one side only, or in different complex parts
  std::int64_t inf_mismatched = 0;  ///< an infinity in different places, or of the other sign (complex: any
                                    ///< differing value with an infinite part)
  std::int64_t signed_zero_mismatched = 0;
  bool has_differences = false;           ///< numbers: max_abs and max_rel measure the value violations
  Extreme max_abs, max_rel;               ///< among value violations (finite differences)
  std::vector<Mismatch> first;            ///< the first violations in C order
  std::vector<Mismatch> first_nonfinite;  ///< the first NaN/inf location differences in C order
  MismatchMap map;                        ///< for a failing 1-D or 2-D pair with elements; none for 0-d or more axes
  std::string not_comparable;             ///< set when the dtypes have no common type to compare in
  bool ok() const { return mismatched == 0 && not_comparable.empty(); }
};

inline constexpr std::size_t kFirstMismatches = 5;

/// The pair size (bytes, both sides) from which compare_values splits its C-order pass over two threads: below it a
/// thread costs more than half the pass saves.
inline constexpr std::int64_t kSplitFrom = std::int64_t{64} << 20;

/// The cores this thread may run on (its CPU affinity mask; std::thread::hardware_concurrency where that cannot be
/// read), at least 1. compare_values splits its pass only where there are two: on one core a second thread only waits.
unsigned usable_cores();

/// The scalar predicate of the allclose criterion; the array kernel applies the same rule.
bool close_enough(double gold, double candidate, const Tolerance& tol);

/// Hashers waiting for the bytes of C-contiguous arrays, fed by compare_values as its one C-order pass over a pair
/// reads them: compare's fidelity digests fused into the values kernel's pass (probes.cc), so that the mapped result
/// files are read once. A hasher takes an array's bytes only in order from the first, so a pass that stops early or
/// walks the array again leaves it short or untouched, and parity.probe then hashes that array in a pass of its own.
class DigestTaps {
 public:
  struct Tap {
    Xxh3* hasher;
    std::uint64_t start;  ///< what the hasher held when added (the leaf's head); the array's bytes follow
  };
  /// Adds `hasher` (a parity.probe Xxh3) for the memory of `array`, a C-contiguous numpy.ndarray (else ignored).
  void add(pybind11::handle array, pybind11::handle hasher);
  /// The hashers waiting for exactly the memory of `array` (none unless it is a C-contiguous numpy.ndarray).
  std::vector<Tap> of(pybind11::handle array) const;
  /// Gives `tap` the `size` bytes at `bytes`, bytes [offset, offset + size) of its array, if they are the next it
  /// waits for.
  static void feed(const Tap& tap, const char* bytes, std::uint64_t offset, std::uint64_t size);

 private:
  std::multimap<std::pair<const char*, std::uint64_t>, Tap> taps_;  // by the memory (start, bytes) they wait for
  std::vector<pybind11::object> held_;  // the arrays and hashers, alive while their taps point at them
};

/// Compares `gold` and `candidate` (numpy.ndarray, same shape, any byte order, strides or alignment).
/// Floating or complex on either side: allclose in float64/complex128 (long double when either side has it).
/// Integers: exact, as mathematical integers (int64 against uint64 included). Datetimes and timedeltas: exact
/// in their common unit, NaT equal to NaT. Anything else: exact, in the common dtype. Structured dtypes are
/// compared by the caller, field by field. The result never depends on byte order or memory layout. `taps`' hashers
/// of either array are fed its bytes when the arrays are compared in one C-order pass (both C-contiguous). A
/// C-contiguous pair of `split_from` bytes or more (both sides together) is compared in two halves on two threads
/// where this thread may run on two cores (usable_cores).
ValueReport compare_values(pybind11::handle gold, pybind11::handle candidate, const Tolerance& tol,
                           const DigestTaps* taps = nullptr, std::int64_t split_from = kSplitFrom);

}  // namespace parity
