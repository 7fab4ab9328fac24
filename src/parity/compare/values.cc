// The comparison kernel (see values.h): casting and alignment are NpyIter's buffering; an operand stored in the
// other byte order than the type it is read as is swapped by the kernel as it loads each element (Plan).
#include "values.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <sched.h>

#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <type_traits>

#include "deadline.h"
#include "numpy_api.h"

namespace py = pybind11;

namespace parity {
namespace {

// How the elements are read and decided. Integer reads each side as int64 or uint64 (by its signedness) and
// compares them as mathematical integers, so int64 against uint64 neither wraps nor rounds.
enum class Rule { Real, RealLong, Complex, ComplexLong, Integer, Datetime, Exact };

using Index = std::vector<std::int64_t>;

// An axis of `length` elements cut into min(length, limit) cells of consecutive indices: index i lies in cell
// floor(i * cells / length), which starts at index ceil(cell * length / cells).
class AxisCells {
 public:
  AxisCells() = default;
  AxisCells(std::int64_t length, std::int64_t limit) : length_(length), cells_(std::min(length, limit)) {
    for (std::int64_t c = 0; c <= cells_; ++c)  // in 128 bits: a broadcast view may claim 2^62 elements
      bounds_[static_cast<std::size_t>(c)] =
          static_cast<std::int64_t>((static_cast<__int128>(c) * length_ + cells_ - 1) / cells_);
  }
  std::int64_t length() const { return length_; }
  std::int64_t cells() const { return cells_; }
  std::int64_t size(std::int64_t cell) const { return bound(cell + 1) - bound(cell); }
  // The cell of index i, searched from `cell` by steps: a pass meets violations in the same or nearby cells, and
  // never more than `cells` away, where a division would cost more than the steps.
  std::int64_t find(std::int64_t i, std::int64_t cell) const {
    while (i >= bound(cell + 1)) ++cell;
    while (i < bound(cell)) --cell;
    return cell;
  }
  std::int64_t bound(std::int64_t cell) const { return bounds_[static_cast<std::size_t>(cell)]; }

 private:
  std::int64_t length_ = 1, cells_ = 1;
  std::array<std::int64_t, std::max(kMapRows, kMapColumns) + 1> bounds_{0, 1};
};

// Counts the violations of a locating pass into MismatchMap cells by their C index, so the map does not depend on
// the order the pass meets them in. A 1-D array is one row. Nothing is computed until the first violation: a
// C-contiguous pair is decided and located in one pass, and most pairs pass.
class MapCounter {
 public:
  MapCounter(int ndim, std::int64_t rows, std::int64_t columns) : ndim_(ndim), rows_length_(rows), length_(columns) {}
  void add(std::int64_t flat) {
    // Violations tend to come in runs, most of them in the cell of the one before: a test and an increment for those.
    if (flat < run_start_ || flat >= run_end_) locate(flat);
    ++counts_[static_cast<std::size_t>(run_cell_)];
  }
  // The map of what was counted; empty when nothing was.
  MismatchMap result() const;
  // Adds what `other`, a counter of the same array, counted (another part of the pass).
  void merge(const MapCounter& other) {
    if (other.counts_.empty()) return;
    if (counts_.empty()) start();
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  }

 private:
  // Out of line, so that the sink's add stays small. A pass moves forward along a row (a C-order pass along the whole
  // row, a slab-wise one along its slab) and then to the next row, so the new cell is found by steps from the last
  // one; only a jump over rows costs a division.
  [[gnu::noinline]] void locate(std::int64_t flat) {
    if (counts_.empty()) start();
    const std::int64_t j = flat - row_start_;
    if (j < 0 || j >= length_) {
      row_ = j >= length_ && j - length_ < length_ ? row_ + 1 : flat / length_;
      row_start_ = row_ * length_;
      row_cell_ = rows_.find(row_, row_cell_);
    }
    column_cell_ = columns_.find(flat - row_start_, column_cell_);
    run_start_ = row_start_ + columns_.bound(column_cell_);
    run_end_ = row_start_ + columns_.bound(column_cell_ + 1);
    run_cell_ = row_cell_ * columns_.cells() + column_cell_;
  }
  void start() {
    rows_ = AxisCells(rows_length_, kMapRows), columns_ = AxisCells(length_, kMapColumns);
    counts_.assign(static_cast<std::size_t>(rows_.cells() * columns_.cells()), 0);
  }

  int ndim_;
  std::int64_t rows_length_, length_;  // the array's rows (1 for 1-D) and the length of each
  AxisCells rows_, columns_;
  std::vector<std::int64_t> counts_;
  // Where the last violation was: row row_ (in row cell row_cell_), starting at C index row_start_; column cell
  // column_cell_ of it, C indices [run_start_, run_end_), which is cell run_cell_ of the map.
  std::int64_t row_ = 0, row_start_ = 0, row_cell_ = 0, column_cell_ = 0, run_start_ = 0, run_end_ = 0, run_cell_ = 0;
};

MismatchMap MapCounter::result() const {
  MismatchMap map;
  if (counts_.empty()) return map;
  map.shape = {rows_length_, length_}, map.grid = {rows_.cells(), columns_.cells()};
  if (ndim_ == 1) map.shape.erase(map.shape.begin()), map.grid.erase(map.grid.begin());
  map.counts = counts_;
  for (std::int64_t r = 0; r < rows_.cells(); ++r)
    for (std::int64_t c = 0; c < columns_.cells(); ++c) map.sizes.push_back(rows_.size(r) * columns_.size(c));
  return map;
}

// A counter for the map of `a`, or none: only arrays of one or two axes with elements have a map.
std::optional<MapCounter> map_counter(PyArrayObject* a) {
  const int ndim = PyArray_NDIM(a);
  if (PyArray_SIZE(a) == 0 || ndim < 1 || ndim > 2) return std::nullopt;
  const std::int64_t rows = ndim == 2 ? PyArray_DIM(a, 0) : 1;
  return MapCounter(ndim, rows, PyArray_DIM(a, ndim - 1));
}

class PassTaps;

// Receives every violation; `stop_at_first` makes a pass a yes/no verdict. Elements may arrive out of C order (slab by
// slab, see compare_values): `first` keeps the smallest C indices, a maximum met twice keeps the smaller index, and the
// map counts by C index, so the result is the one a single C-order pass would give.
struct Sink {
  explicit Sink(ValueReport& r, bool verdict_only = false) : report(r), stop_at_first(verdict_only) {}
  using Located = std::vector<std::pair<std::int64_t, MismatchKind>>;
  ValueReport& report;
  bool stop_at_first;
  Located first, first_nonfinite;
  std::int64_t max_abs_flat = -1, max_rel_flat = -1;
  // A pass over the slab [..., start:start+width] of arrays whose last axis has `row` elements counts its elements
  // in the slab's C order; this maps that count to the C index in the whole array. width 0: no slab.
  std::int64_t slab_start = 0, slab_width = 0, row = 0;
  std::optional<MapCounter> map;   // for a locating pass over an array that has a map
  const PassTaps* taps = nullptr;  // for the one C-order pass over a C-contiguous pair (compare_values)

  // A NaN difference is one that cannot be measured (a complex value's finite part beside equal NaN parts, an
  // exact comparison); it counts, but takes no part in the maxima.
  void add(std::int64_t count, MismatchKind kind, double abs_diff = NAN, double rel_diff = NAN) {
    const std::int64_t flat = slab_width ? count / slab_width * row + slab_start + count % slab_width : count;
    ++report.mismatched;
    if (kind == MismatchKind::NaN) ++report.nan_mismatched;
    if (kind == MismatchKind::Inf) ++report.inf_mismatched;
    if (kind == MismatchKind::SignedZero) ++report.signed_zero_mismatched;
    if (kind == MismatchKind::Value && report.has_differences) {
      keep_max(report.max_abs, max_abs_flat, abs_diff, flat);
      keep_max(report.max_rel, max_rel_flat, rel_diff, flat);
    }
    if (map) map->add(flat);
    keep_first(first, flat, kind);
    if (kind == MismatchKind::NaN || kind == MismatchKind::Inf) keep_first(first_nonfinite, flat, kind);
  }
  // A value violation of measured size `diff` against gold's magnitude `ref` (a zero gold: infinitely relative).
  template <class T>
  void add_difference(std::int64_t count, T diff, T ref) {
    add(count, MismatchKind::Value, static_cast<double>(diff), ref > 0 ? static_cast<double>(diff / ref) : HUGE_VAL);
  }
  bool done() const { return stop_at_first && report.mismatched > 0; }
  // Takes in what `later` found over elements all after this sink's (the second part of a split pass), so that the
  // result is the one pass's over both: counts add, the first stay the first in C order, ties keep the smaller index.
  void merge(const Sink& later) {
    const ValueReport& r = later.report;
    report.mismatched += r.mismatched, report.nan_mismatched += r.nan_mismatched;
    report.inf_mismatched += r.inf_mismatched, report.signed_zero_mismatched += r.signed_zero_mismatched;
    if (r.max_abs.found) keep_max(report.max_abs, max_abs_flat, r.max_abs.value, later.max_abs_flat);
    if (r.max_rel.found) keep_max(report.max_rel, max_rel_flat, r.max_rel.value, later.max_rel_flat);
    for (const auto& [flat, kind] : later.first) keep_first(first, flat, kind);
    for (const auto& [flat, kind] : later.first_nonfinite) keep_first(first_nonfinite, flat, kind);
    if (map && later.map) map->merge(*later.map);
  }

 private:
  static void keep_max(Extreme& extreme, std::int64_t& at, double value, std::int64_t flat) {
    if (std::isnan(value) || (extreme.found && (value < extreme.value || (value == extreme.value && flat > at))))
      return;
    extreme.value = value, extreme.found = true, at = flat;
  }
  static void keep_first(Located& list, std::int64_t flat, MismatchKind kind) {
    if (list.size() == kFirstMismatches && flat > list.back().first) return;
    auto at =
        std::upper_bound(list.begin(), list.end(), flat, [](std::int64_t f, const auto& e) { return f < e.first; });
    list.insert(at, {flat, kind});
    if (list.size() > kFirstMismatches) list.pop_back();
  }
};

// The hashers (DigestTaps) of both arrays of a pass in C order over C-contiguous arrays, where the pass's element
// count is the memory offset in items: each is given the bytes its array has just given the pass, still in cache.
class PassTaps {
 public:
  PassTaps(const DigestTaps* taps, PyArrayObject* g, PyArrayObject* c) {
    if (!taps) return;
    for (PyArrayObject* a : {g, c})
      for (const DigestTaps::Tap& tap : taps->of(reinterpret_cast<PyObject*>(a)))
        feeds_.push_back({tap, PyArray_BYTES(a), static_cast<std::uint64_t>(PyArray_ITEMSIZE(a))});
  }
  // Elements [flat, flat + n) of both arrays were compared.
  void compared(std::int64_t flat, npy_intp n) const {
    if (feeds_.empty()) return;
    for (const Feed& f : feeds_) {
      const std::uint64_t offset = static_cast<std::uint64_t>(flat) * f.itemsize;
      DigestTaps::feed(f.tap, f.base + offset, offset, static_cast<std::uint64_t>(n) * f.itemsize);
    }
  }

 private:
  struct Feed {
    DigestTaps::Tap tap;
    const char* base;
    std::uint64_t itemsize;
  };
  std::vector<Feed> feeds_;
};

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};

// The element at `p`; Swap: stored in the other byte order (a complex value: each part), which only 8-byte parts are
// (Plan::gold_swapped).
template <class T, bool Swap = false>
T load(const char* p) {
  T v;
  if constexpr (Swap && is_complex<T>::value) {
    using Part = typename T::value_type;
    return T(load<Part, true>(p), load<Part, true>(p + sizeof(Part)));
  } else if constexpr (Swap) {
    static_assert(sizeof(T) == sizeof(std::uint64_t));
    std::uint64_t bits;
    std::memcpy(&bits, p, sizeof bits);
    bits = __builtin_bswap64(bits);
    std::memcpy(&v, &bits, sizeof v);
  } else {
    std::memcpy(&v, p, sizeof v);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------
// Real and complex: the common case is decided by one comparison; everything else goes to `decide_*`.

// Finite gold and candidate within tolerance. NaN fails it (every comparison with NaN is false), and so does an
// infinite gold, whose tolerance would be infinite. With signed zeros on, a zero gold takes the slow path.
template <class T, bool SignedZeros, class R>
bool fast_close(const T& g, const T& c, R atol, R rtol) {
  const R ref = std::abs(g);
  if constexpr (SignedZeros) {
    if (ref == 0) return false;
  }
  return std::abs(c - g) <= atol + rtol * ref && ref < HUGE_VAL;
}

template <class T>
void decide_real(T g, T c, const Tolerance& tol, std::int64_t flat, Sink& out) {
  const bool gn = std::isnan(g), cn = std::isnan(c);
  if (gn || cn) {
    if (!(gn && cn)) out.add(flat, MismatchKind::NaN);
    return;
  }
  if (std::isinf(g) || std::isinf(c)) {  // infinities must match exactly, sign included
    if (g != c) out.add(flat, MismatchKind::Inf);
    return;
  }
  const T diff = std::abs(c - g), ref = std::abs(g);
  if (diff <= static_cast<T>(tol.atol) + static_cast<T>(tol.rtol) * ref) {
    if (tol.signed_zeros && g == 0 && c == 0 && std::signbit(g) != std::signbit(c))
      out.add(flat, MismatchKind::SignedZero);
    return;
  }
  out.add_difference(flat, diff, ref);
}

template <class T>
bool part_same(T a, T b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

template <class T>
bool finite(const std::complex<T>& v) {
  return std::isfinite(v.real()) && std::isfinite(v.imag());
}

// A complex value with a NaN or infinite part matches only a value with the same parts (NaN where it has NaN).
template <class T>
void decide_complex(std::complex<T> g, std::complex<T> c, const Tolerance& tol, std::int64_t flat, Sink& out) {
  if (!finite(g) || !finite(c)) {
    if (part_same(g.real(), c.real()) && part_same(g.imag(), c.imag())) return;
    const bool nan_differs =
        std::isnan(g.real()) != std::isnan(c.real()) || std::isnan(g.imag()) != std::isnan(c.imag());
    const bool has_inf = std::isinf(g.real()) || std::isinf(g.imag()) || std::isinf(c.real()) || std::isinf(c.imag());
    // Equal NaN parts beside a differing finite part: a value difference, though not one to measure.
    out.add(flat, nan_differs ? MismatchKind::NaN : has_inf ? MismatchKind::Inf : MismatchKind::Value);
    return;
  }
  T diff = std::abs(c - g), ref = std::abs(g);
  T atol = static_cast<T>(tol.atol);
  if (!std::isfinite(diff) || !std::isfinite(ref)) {
    // A modulus past the type's range (|1.5e308 + 1.5e308j|) would make the tolerance infinite: decide the
    // criterion on values scaled into range instead (exact: the scale is a power of two).
    const int exponent =
        std::ilogb(std::max({std::abs(g.real()), std::abs(g.imag()), std::abs(c.real()), std::abs(c.imag())}));
    const T scale = std::scalbn(T(1), -exponent);
    diff = std::abs(c * scale - g * scale), ref = std::abs(g * scale), atol *= scale;
    if (diff <= atol + static_cast<T>(tol.rtol) * ref) return;
    out.add(flat, MismatchKind::Value, HUGE_VAL, static_cast<double>(diff / ref));
    return;
  }
  if (diff <= atol + static_cast<T>(tol.rtol) * ref) {
    const bool zero = g == std::complex<T>() && c == std::complex<T>();
    if (tol.signed_zeros && zero &&
        (std::signbit(g.real()) != std::signbit(c.real()) || std::signbit(g.imag()) != std::signbit(c.imag())))
      out.add(flat, MismatchKind::SignedZero);
    return;
  }
  out.add_difference(flat, diff, ref);
}

template <class T>
void decide(T g, T c, const Tolerance& tol, std::int64_t flat, Sink& out) {
  if constexpr (std::is_floating_point_v<T>)
    decide_real(g, c, tol, flat, out);
  else
    decide_complex(g, c, tol, flat, out);
}

#if defined(__SSE2__)
// Two float64 at `p`; Swap: each stored in the other byte order (bytes swapped within 16-bit words, then the words
// reversed within each 64-bit lane: SSE2 has no byte shuffle).
template <bool Swap>
__m128d load_pair(const double* p) {
  __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (Swap) {
    v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
    v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, _MM_SHUFFLE(0, 1, 2, 3)), _MM_SHUFFLE(0, 1, 2, 3));
  }
  return _mm_castsi128_pd(v);
}
#endif

// Whether every pair of a block passes fast_close. The common case, contiguous float64, is tested two at a time
// with SSE2 (the x86-64 baseline, so every build has it): GCC does not vectorize the scalar loop without SSE4.1.
template <class T, bool SignedZeros, bool GS, bool CS, class R>
bool block_close(const char* gp, const char* cp, npy_intp gs, npy_intp cs, npy_intp m, R atol, R rtol) {
  npy_intp i = 0;
  bool all = true;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, double> && !SignedZeros) {
    if (gs == sizeof(double) && cs == sizeof(double)) {
      const __m128d vatol = _mm_set1_pd(atol), vrtol = _mm_set1_pd(rtol), vinf = _mm_set1_pd(HUGE_VAL);
      const __m128d magnitude = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff));
      __m128d ok = _mm_castsi128_pd(_mm_set1_epi64x(-1));
      for (; i + 2 <= m; i += 2) {
        const __m128d g = load_pair<GS>(reinterpret_cast<const double*>(gp) + i);
        const __m128d c = load_pair<CS>(reinterpret_cast<const double*>(cp) + i);
        const __m128d ref = _mm_and_pd(g, magnitude), diff = _mm_and_pd(_mm_sub_pd(c, g), magnitude);
        const __m128d within = _mm_cmple_pd(diff, _mm_add_pd(vatol, _mm_mul_pd(vrtol, ref)));
        ok = _mm_and_pd(ok, _mm_and_pd(within, _mm_cmplt_pd(ref, vinf)));  // NaN compares false: not ok
      }
      all = _mm_movemask_pd(ok) == 3;
    }
  }
#endif
  for (; i < m; ++i) all &= fast_close<T, SignedZeros>(load<T, GS>(gp + i * gs), load<T, CS>(cp + i * cs), atol, rtol);
  return all;
}

// The fast test over a block (block_close) has no call in it, so that pointers, strides and tolerances stay in
// registers (a call in the loop made GCC keep the candidate pointer on the stack: a store-to-load chain every element).
// A block with a failing element, which is rare, is walked again to decide each element. GS, CS: gold's, the
// candidate's elements are stored byte-swapped (load).
template <class T, bool SignedZeros, bool GS, bool CS>
void inexact_loop(const char* gp, const char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat,
                  const Tolerance& tol, Sink& out) {
  using R = decltype(std::abs(T()));
  const R atol = static_cast<R>(tol.atol), rtol = static_cast<R>(tol.rtol);
  constexpr npy_intp kBlock = 512;
  for (npy_intp b = 0; b < n; b += kBlock, gp += kBlock * gs, cp += kBlock * cs) {
    const npy_intp m = std::min(kBlock, n - b);
    if (block_close<T, SignedZeros, GS, CS>(gp, cp, gs, cs, m, atol, rtol)) continue;
    for (npy_intp i = 0; i < m; ++i) {
      const T g = load<T, GS>(gp + i * gs), c = load<T, CS>(cp + i * cs);
      if (!fast_close<T, SignedZeros>(g, c, atol, rtol)) decide(g, c, tol, flat + b + i, out);
    }
  }
}

template <class T, bool GS = false, bool CS = false>
void inexact(const char* gp, const char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat,
             const Tolerance& tol, Sink& out) {
  if (tol.signed_zeros)
    inexact_loop<T, true, GS, CS>(gp, cp, gs, cs, n, flat, tol, out);
  else
    inexact_loop<T, false, GS, CS>(gp, cp, gs, cs, n, flat, tol, out);
}

// ---------------------------------------------------------------------------------------------------------
// Integers, datetimes and everything exact.

__int128 widen(std::int64_t v) { return v; }
__int128 widen(std::uint64_t v) { return static_cast<__int128>(v); }

template <class G, class C, bool GS, bool CS>
void integer_loop(const char* gp, const char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat, Sink& out) {
  for (npy_intp i = 0; i < n; ++i, gp += gs, cp += cs) {
    const __int128 g = widen(load<G, GS>(gp)), c = widen(load<C, CS>(cp));
    if (g == c) continue;
    const double diff = static_cast<double>(c > g ? c - g : g - c);  // in 128 bits: no unsigned wrap-around
    const double ref = static_cast<double>(g < 0 ? -g : g);
    out.add_difference(flat + i, diff, ref);
  }
}

constexpr std::int64_t kNaT = std::numeric_limits<std::int64_t>::min();

template <bool GS, bool CS>
void datetime_loop(const char* gp, const char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat, Sink& out) {
  for (npy_intp i = 0; i < n; ++i, gp += gs, cp += cs) {
    const std::int64_t g = load<std::int64_t, GS>(gp), c = load<std::int64_t, CS>(cp);
    if (g == c) continue;
    if (g == kNaT || c == kNaT) {
      out.add(flat + i, MismatchKind::NaN);
      continue;
    }
    const double diff = std::abs(static_cast<double>(static_cast<__int128>(c) - g)), ref = std::abs(double(g));
    out.add_difference(flat + i, diff, ref);
  }
}

void exact_loop(const char* gp, const char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat,
                std::size_t itemsize, Sink& out) {
  for (npy_intp i = 0; i < n; ++i, gp += gs, cp += cs)
    if (std::memcmp(gp, cp, itemsize) != 0) out.add(flat + i, MismatchKind::Value);
}

// ---------------------------------------------------------------------------------------------------------
// Choosing the rule and the dtypes each side is read as.

bool is_inexact(PyArray_Descr* d) { return PyDataType_ISFLOAT(d) || PyDataType_ISCOMPLEX(d); }
bool is_number(PyArray_Descr* d) { return PyDataType_ISBOOL(d) || PyDataType_ISINTEGER(d) || is_inexact(d); }
bool is_long(PyArray_Descr* d) { return d->type_num == NPY_LONGDOUBLE || d->type_num == NPY_CLONGDOUBLE; }

// Values are compared only within one family: a string against a number has no common type (casting would parse
// it), nor bytes against str (casting would decode them).
char family(PyArray_Descr* d) {
  if (is_number(d)) return 'n';
  return d->kind == 'S' ? 'S' : d->kind;
}

py::object descr(int type_num) {
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyArray_DescrFromType(type_num)));
}

// str() of the built-in descriptor of `type_num` ("float64"), asked of NumPy once per type: dtype.__str__ is Python
// code, and every compared array of floats or complexes names the type it was compared as.
const std::string& builtin_name(int type_num) {
  static std::map<int, std::string> names;
  auto found = names.find(type_num);
  if (found == names.end()) found = names.emplace(type_num, py::str(descr(type_num)).cast<std::string>()).first;
  return found->second;
}

struct Plan {
  Rule rule = Rule::Exact;
  py::object gold_dtype, candidate_dtype;              ///< what NpyIter reads each side as
  bool gold_signed = false, candidate_signed = false;  ///< Integer: int64 rather than uint64
  /// The side holds the type it is read as, stored in the other byte order: NpyIter reads it as stored (its dtype is
  /// the side's own) and the kernel swaps each element as it loads it, where NpyIter would copy the array through a
  /// buffer to swap it (a fifth of a big-endian pair's pass). Only 8-byte parts are: float64, complex128, int64,
  /// uint64, datetime64 and timedelta64 read in their own unit. Every other side is read in native byte order.
  bool gold_swapped = false, candidate_swapped = false;
};

// Whether `side` holds exactly `wanted` (a native dtype of 8-byte parts) in the other byte order.
bool stored_swapped(PyArray_Descr* side, const py::object& wanted) {
  if (PyArray_ISNBO(side->byteorder)) return false;
  PyArray_Descr* native = PyArray_DescrNewByteorder(side, NPY_NATIVE);
  if (!native) throw py::error_already_set();
  const bool same = PyArray_EquivTypes(native, reinterpret_cast<PyArray_Descr*>(wanted.ptr()));
  Py_DECREF(native);
  return same;
}

// Reads a side stored in the other byte order as stored, where the rule's loops swap as they load (Plan).
void read_swapped_as_stored(PyArray_Descr* side, py::object& dtype, bool& swapped) {
  swapped = stored_swapped(side, dtype);
  if (swapped) dtype = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(side));
}

Rule rule_for(PyArray_Descr* gd, PyArray_Descr* cd) {
  if (family(gd) == 'n') {
    const bool complex = PyDataType_ISCOMPLEX(gd) || PyDataType_ISCOMPLEX(cd);
    const bool longd = is_long(gd) || is_long(cd);
    if (complex) return longd ? Rule::ComplexLong : Rule::Complex;
    if (is_inexact(gd) || is_inexact(cd)) return longd ? Rule::RealLong : Rule::Real;
    return Rule::Integer;
  }
  return gd->kind == 'M' || gd->kind == 'm' ? Rule::Datetime : Rule::Exact;
}

// The common native dtype of two arrays of one family; null (with not_comparable set) when there is none.
py::object promoted(PyArray_Descr* gd, PyArray_Descr* cd, ValueReport& report) {
  PyArray_Descr* common = PyArray_PromoteTypes(gd, cd);
  if (!common) {
    PyErr_Clear();
    report.not_comparable = "no common dtype to compare values in";
    return py::object();
  }
  PyArray_Descr* native = PyArray_DescrNewByteorder(common, NPY_NATIVE);
  Py_DECREF(common);
  if (!native) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(native));
}

bool make_plan(PyArray_Descr* gd, PyArray_Descr* cd, Plan& plan, ValueReport& report) {
  if (family(gd) != family(cd)) {
    report.not_comparable = family(gd) == 'n' || family(cd) == 'n'
                                ? "a number and a non-number have no common type to compare values in"
                                : "values of different kinds have no common type to compare values in";
    return false;
  }
  plan.rule = rule_for(gd, cd);
  switch (plan.rule) {
    case Rule::Real:
      plan.gold_dtype = descr(NPY_DOUBLE);
      report.compared_as = builtin_name(NPY_DOUBLE);
      break;
    case Rule::RealLong:
      plan.gold_dtype = descr(NPY_LONGDOUBLE);
      report.compared_as = builtin_name(NPY_LONGDOUBLE);
      break;
    case Rule::Complex:
      plan.gold_dtype = descr(NPY_CDOUBLE);
      report.compared_as = builtin_name(NPY_CDOUBLE);
      break;
    case Rule::ComplexLong:
      plan.gold_dtype = descr(NPY_CLONGDOUBLE);
      report.compared_as = builtin_name(NPY_CLONGDOUBLE);
      break;
    case Rule::Integer:
      plan.gold_signed = PyDataType_ISSIGNED(gd), plan.candidate_signed = PyDataType_ISSIGNED(cd);
      plan.gold_dtype = descr(plan.gold_signed ? NPY_INT64 : NPY_UINT64);
      plan.candidate_dtype = descr(plan.candidate_signed ? NPY_INT64 : NPY_UINT64);
      report.compared_as = "int";
      break;
    case Rule::Datetime:
    case Rule::Exact:
      plan.gold_dtype = promoted(gd, cd, report);
      if (!plan.gold_dtype) return false;
  }
  if (!plan.candidate_dtype) plan.candidate_dtype = plan.gold_dtype;
  if (report.compared_as.empty()) report.compared_as = py::str(plan.gold_dtype).cast<std::string>();
  report.criterion = plan.rule == Rule::Real || plan.rule == Rule::RealLong || plan.rule == Rule::Complex ||
                             plan.rule == Rule::ComplexLong
                         ? "allclose"
                         : "exact";
  report.has_differences = plan.rule != Rule::Exact;
  if (plan.rule == Rule::Real || plan.rule == Rule::Complex || plan.rule == Rule::Integer ||
      plan.rule == Rule::Datetime) {
    read_swapped_as_stored(gd, plan.gold_dtype, plan.gold_swapped);
    read_swapped_as_stored(cd, plan.candidate_dtype, plan.candidate_swapped);
  }
  return true;
}

// Calls f(gold_swapped, candidate_swapped) with each as a std::bool_constant, for the loops' template arguments.
template <class F>
void with_swaps(const Plan& plan, F&& f) {
  if (plan.gold_swapped && plan.candidate_swapped) return f(std::true_type(), std::true_type());
  if (plan.gold_swapped) return f(std::true_type(), std::false_type());
  if (plan.candidate_swapped) return f(std::false_type(), std::true_type());
  f(std::false_type(), std::false_type());
}

void run_loop(const Plan& plan, char** data, const npy_intp* strides, npy_intp n, std::int64_t flat,
              const Tolerance& tol, std::size_t itemsize, Sink& out) {
  const char *gp = data[0], *cp = data[1];
  const npy_intp gs = strides[0], cs = strides[1];
  const bool gs_signed = plan.gold_signed, cs_signed = plan.candidate_signed;
  switch (plan.rule) {
    case Rule::Real:
      return with_swaps(plan, [&](auto g, auto c) {
        inexact<double, decltype(g)::value, decltype(c)::value>(gp, cp, gs, cs, n, flat, tol, out);
      });
    case Rule::RealLong:
      return inexact<long double>(gp, cp, gs, cs, n, flat, tol, out);
    case Rule::Complex:
      return with_swaps(plan, [&](auto g, auto c) {
        inexact<std::complex<double>, decltype(g)::value, decltype(c)::value>(gp, cp, gs, cs, n, flat, tol, out);
      });
    case Rule::ComplexLong:
      return inexact<std::complex<long double>>(gp, cp, gs, cs, n, flat, tol, out);
    case Rule::Datetime:
      return with_swaps(plan, [&](auto g, auto c) {
        datetime_loop<decltype(g)::value, decltype(c)::value>(gp, cp, gs, cs, n, flat, out);
      });
    case Rule::Exact:
      return exact_loop(gp, cp, gs, cs, n, flat, itemsize, out);
    case Rule::Integer:
      return with_swaps(plan, [&](auto g, auto c) {
        constexpr bool GS = decltype(g)::value, CS = decltype(c)::value;
        using S = std::int64_t;
        using U = std::uint64_t;
        if (gs_signed && cs_signed) return integer_loop<S, S, GS, CS>(gp, cp, gs, cs, n, flat, out);
        if (gs_signed) return integer_loop<S, U, GS, CS>(gp, cp, gs, cs, n, flat, out);
        if (cs_signed) return integer_loop<U, S, GS, CS>(gp, cp, gs, cs, n, flat, out);
        return integer_loop<U, U, GS, CS>(gp, cp, gs, cs, n, flat, out);
      });
  }
}

// Elements compared at a time: 128 kB of float64 per side, which stays in the cache for the hashers (PassTaps).
constexpr npy_intp kPiece = 1 << 14;

using IterPtr = std::unique_ptr<NpyIter, int (*)(NpyIter*)>;

// An iterator over both arrays in `order`, over elements [begin, end) of its pass when end >= 0 (C order), else all;
// null when there are none.
IterPtr make_iter(PyArrayObject* g, PyArrayObject* c, const Plan& plan, NPY_ORDER order, std::int64_t begin = 0,
                  std::int64_t end = -1) {
  PyArrayObject* ops[2] = {g, c};
  const npy_uint32 read = NPY_ITER_READONLY | NPY_ITER_ALIGNED;  // a side the kernel swaps is read as stored
  npy_uint32 op_flags[2] = {plan.gold_swapped ? read : read | NPY_ITER_NBO,
                            plan.candidate_swapped ? read : read | NPY_ITER_NBO};
  PyArray_Descr* dtypes[2] = {reinterpret_cast<PyArray_Descr*>(plan.gold_dtype.ptr()),
                              reinterpret_cast<PyArray_Descr*>(plan.candidate_dtype.ptr())};
  const npy_uint32 ranged = end >= 0 ? NPY_ITER_RANGED : 0;
  NpyIter* it = NpyIter_MultiNew(
      2, ops, NPY_ITER_EXTERNAL_LOOP | NPY_ITER_BUFFERED | NPY_ITER_GROWINNER | NPY_ITER_ZEROSIZE_OK | ranged, order,
      NPY_UNSAFE_CASTING, op_flags, dtypes);
  if (!it) throw py::error_already_set();
  IterPtr guard(it, NpyIter_Deallocate);
  if (NpyIter_GetIterSize(it) == 0 || (end >= 0 && begin >= end)) return IterPtr(nullptr, NpyIter_Deallocate);
  if (ranged && NpyIter_ResetToIterIndexRange(it, begin, end, nullptr) != NPY_SUCCEED) throw py::error_already_set();
  return guard;
}

// Walks `it`, whose first element is element `flat` of the pass. Nothing here calls Python unless a cast needs it.
void walk(NpyIter* it, const Plan& plan, const Tolerance& tol, std::int64_t flat, Sink& out) {
  // errmsg nullptr: no Python error is set, so this may run on the split pass's second thread, without the GIL.
  NpyIter_IterNextFunc* next = NpyIter_GetIterNext(it, nullptr);
  if (!next) throw std::runtime_error("NumPy cannot iterate over the compared arrays");
  char** data = NpyIter_GetDataPtrArray(it);
  npy_intp* strides = NpyIter_GetInnerStrideArray(it);
  npy_intp* size = NpyIter_GetInnerLoopSizePtr(it);
  const std::size_t itemsize = static_cast<std::size_t>(PyDataType_ELSIZE(NpyIter_GetDescrArray(it)[0]));
  do {
    // In pieces, so that the hashers fed after each (Sink::taps) read bytes the comparison has just brought into cache.
    for (npy_intp done = 0, n = 0; done < *size && !out.done(); done += n, flat += n) {
      check_deadline("array values");
      n = std::min(kPiece, *size - done);
      char* at[2] = {data[0] + done * strides[0], data[1] + done * strides[1]};
      run_loop(plan, at, strides, n, flat, tol, itemsize, out);
      if (out.taps) out.taps->compared(flat, n);
    }
  } while (!out.done() && next(it));
}

// One pass over both arrays. In C order the running element count is the flat C index, which locates
// mismatches; in NPY_KEEPORDER the iterator follows memory order, which is faster for F-ordered operands.
void iterate(PyArrayObject* g, PyArrayObject* c, const Plan& plan, NPY_ORDER order, const Tolerance& tol, Sink& out) {
  const IterPtr it = make_iter(g, c, plan, order);
  if (!it) return;
  // Nothing in the pass calls Python unless a cast needs it: it runs without the GIL, as the digests' hashing did.
  std::optional<py::gil_scoped_release> unlocked;
  if (!NpyIter_IterationNeedsAPI(it.get())) unlocked.emplace();
  walk(it.get(), plan, tol, 0, out);
}

// The locating C-order pass over a C-contiguous pair, feeding `tapped`'s hashers. A pair of `split_from` bytes or more
// is compared in two halves at once, the second on a thread of its own (values only); this thread compares the first
// half and feeds the hashers, then gives them the second half's bytes (XXH3 takes bytes only in order), while the
// other thread may still be comparing. One part is the unsplit pass.
void iterate_parts(PyArrayObject* g, PyArrayObject* c, const Plan& plan, const Tolerance& tol, const PassTaps& tapped,
                   std::int64_t split_from, Sink& out) {
  const std::int64_t n = PyArray_SIZE(g);
  const bool split = n >= 2 && PyArray_NBYTES(g) + PyArray_NBYTES(c) >= split_from && usable_cores() > 1;
  std::int64_t mid = split ? n / 2 : n;
  IterPtr first = make_iter(g, c, plan, NPY_CORDER, 0, mid), second(nullptr, NpyIter_Deallocate);
  if (!first) return;
  const bool api = NpyIter_IterationNeedsAPI(first.get());
  if (split && !api) second = make_iter(g, c, plan, NPY_CORDER, mid, n);
  if (split && !second) first = make_iter(g, c, plan, NPY_CORDER, 0, mid = n);  // a cast that needs Python: one part
  ValueReport later_report;
  later_report.has_differences = out.report.has_differences;
  Sink later(later_report);
  later.map = map_counter(g);
  out.taps = &tapped;
  {
    std::optional<py::gil_scoped_release> unlocked;
    if (!api) unlocked.emplace();
    std::exception_ptr failed;
    std::jthread other;  // joined before the GIL is taken back, also when this thread's part throws
    if (second)
      other = std::jthread([&] {
        try {
          walk(second.get(), plan, tol, mid, later);
        } catch (...) {
          failed = std::current_exception();
        }
      });
    walk(first.get(), plan, tol, 0, out);
    for (std::int64_t flat = mid; flat < n; flat += kPiece)
      tapped.compared(flat, std::min<std::int64_t>(kPiece, n - flat));
    if (other.joinable()) other.join();
    if (failed) std::rethrow_exception(failed);
  }
  out.merge(later);
}

Index unravel(std::int64_t flat, PyArrayObject* a) {
  Index index(static_cast<std::size_t>(PyArray_NDIM(a)));
  for (int d = PyArray_NDIM(a) - 1; d >= 0; --d) {
    const npy_intp n = PyArray_DIM(a, d);
    index[static_cast<std::size_t>(d)] = flat % n;
    flat /= n;
  }
  return index;
}

// Python's repr of one element; a value Python cannot show (a code point past U+10FFFF in a hostile file)
// is reported as such rather than ending the comparison.
std::string element_repr(py::handle array, const Index& index) {
  py::tuple key(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) key[i] = py::int_(index[i]);
  try {
    return py::repr(array[key].attr("item")()).cast<std::string>();
  } catch (py::error_already_set& e) {
    return std::string("<cannot show: ") + e.what() + ">";
  }
}

std::vector<Mismatch> located(const std::vector<std::pair<std::int64_t, MismatchKind>>& flats, py::handle gold,
                              py::handle candidate) {
  std::vector<Mismatch> out;
  for (const auto& [flat, kind] : flats) {
    Index index = unravel(flat, reinterpret_cast<PyArrayObject*>(gold.ptr()));
    out.push_back({index, element_repr(gold, index), element_repr(candidate, index), kind});
  }
  return out;
}

// The axis whose neighbours are closest in memory (length-1 axes never count).
int fastest_axis(PyArrayObject* a) {
  int best = -1;
  for (int d = 0; d < PyArray_NDIM(a); ++d)
    if (PyArray_DIM(a, d) > 1 && (best < 0 || std::abs(PyArray_STRIDE(a, d)) < std::abs(PyArray_STRIDE(a, best))))
      best = d;
  return best;
}

bool orders_conflict(PyArrayObject* g, PyArrayObject* c) {
  return PyArray_NDIM(g) >= 2 && fastest_axis(g) != fastest_axis(c);
}

// Whether a C-order walk reads `a` across its rows (its last axis is not its fastest).
bool across_rows(PyArrayObject* a) { return PyArray_NDIM(a) >= 2 && fastest_axis(a) != PyArray_NDIM(a) - 1; }

// One pass over slabs [..., j:j+kSlab] of both arrays (views, no copies), each in `order`. NpyIter walks a pair
// in C order when its operands disagree on memory order, and a C-order walk reads an F-ordered operand one cache
// line and one page per element across a whole row: a slab keeps those lines and pages cached. 64 columns measured
// best (bench/README.md, compare_bench): mixed orders 1.7-2.0x the C-order time, 2.1x with 128-1024.
void iterate_slabs(py::handle gold, py::handle candidate, const Plan& plan, NPY_ORDER order, const Tolerance& tol,
                   Sink& out) {
  constexpr npy_intp kSlab = 64;
  auto* g = reinterpret_cast<PyArrayObject*>(gold.ptr());
  const npy_intp last = PyArray_DIM(g, PyArray_NDIM(g) - 1);
  out.row = last;
  for (npy_intp j = 0; j < last && !out.done(); j += kSlab) {
    const npy_intp width = std::min(kSlab, last - j);
    const py::tuple key = py::make_tuple(py::ellipsis(), py::slice(j, j + width, 1));
    const py::object gs = gold[key], cs = candidate[key];
    out.slab_start = j, out.slab_width = width;
    iterate(reinterpret_cast<PyArrayObject*>(gs.ptr()), reinterpret_cast<PyArrayObject*>(cs.ptr()), plan, order, tol,
            out);
  }
  out.slab_width = 0;
}

// Elements of one side cast at a time by unit_overflow: 512 KiB of datetimes.
constexpr npy_intp kOverflowPiece = 1 << 16;

// Why `side`'s datetimes or timedeltas cannot be read as `as` (its unit made finer for the other side), "" when they
// can: NumPy's cast to a finer unit wraps around on overflow, so 2**40 days read as nanoseconds had compared equal to
// a candidate holding the wrapped value, and 2**47 days had become NaT. A cast there and back that changes a value
// (NaT aside) overflowed.
std::string unit_overflow(PyArrayObject* side, const py::object& as, const char* name) {
  PyArray_Descr* own = PyArray_DESCR(side);
  auto* wanted = reinterpret_cast<PyArray_Descr*>(as.ptr());
  if (PyArray_EquivTypes(own, wanted)) return "";  // read as stored: a swapped side in its own unit (Plan) too
  PyArray_Descr* native = PyArray_DescrNewByteorder(own, NPY_NATIVE);
  if (!native) throw py::error_already_set();
  const bool same = PyArray_EquivTypes(native, wanted);
  Py_DECREF(native);
  if (same) return "";
  const auto array = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(side));
  const py::module_ numpy = py::module_::import("numpy");
  // In buffered pieces: the cast there and back holds two copies and two masks of what it casts, which for a whole
  // side had been more than twice its size (an 800 MB side, ~2 GB; target 5 allows a compare 64 MB).
  const py::object pieces =
      numpy.attr("nditer")(array, py::arg("flags") = py::make_tuple("external_loop", "buffered", "zerosize_ok"),
                           py::arg("op_flags") = py::make_tuple("readonly"), py::arg("buffersize") = kOverflowPiece);
  for (py::handle piece : pieces) {
    check_deadline("array values");
    const py::object back = piece.attr("astype")(as).attr("astype")(piece.attr("dtype"));
    const py::object kept = numpy.attr("logical_or")(numpy.attr("equal")(back, piece), numpy.attr("isnat")(piece));
    if (!kept.attr("all")().cast<bool>())
      return std::string("the ") + name + " values do not fit in " + py::str(as).cast<std::string>() +
             ", the unit both sides are compared in: casting them there overflows";
  }
  return "";
}

}  // namespace

const char* mismatch_kind_name(MismatchKind kind) {
  switch (kind) {
    case MismatchKind::NaN:
      return "nan";
    case MismatchKind::Inf:
      return "inf";
    case MismatchKind::SignedZero:
      return "signed-zero";
    case MismatchKind::Value:
      break;
  }
  return "value";
}

Tolerance default_tolerance(py::handle dtype) {
  auto* d = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
  Tolerance t;
  const std::size_t part = static_cast<std::size_t>(PyDataType_ELSIZE(d)) / (PyDataType_ISCOMPLEX(d) ? 2 : 1);
  if (is_inexact(d) && part <= 2)
    t.rtol = 1e-3;  // float16: 11-bit significand
  else if (is_inexact(d) && part <= 4)
    t.rtol = 1e-6;  // float32, complex64: 24-bit significand
  return t;
}

unsigned usable_cores() {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
  return std::max(1u, std::thread::hardware_concurrency());
}

bool close_enough(double gold, double candidate, const Tolerance& tol) {
  ValueReport report;
  report.has_differences = true;
  Sink out(report);
  char* data[2] = {reinterpret_cast<char*>(&gold), reinterpret_cast<char*>(&candidate)};
  inexact<double>(data[0], data[1], 0, 0, 1, 0, tol, out);
  return report.mismatched == 0;
}

void DigestTaps::add(py::handle array, py::handle hasher) {
  if (!PyArray_Check(array.ptr()) || !PyArray_IS_C_CONTIGUOUS(reinterpret_cast<PyArrayObject*>(array.ptr()))) return;
  auto* a = reinterpret_cast<PyArrayObject*>(array.ptr());
  Xxh3& xxh3 = hasher.cast<Xxh3&>();
  taps_.insert({{PyArray_BYTES(a), static_cast<std::uint64_t>(PyArray_NBYTES(a))}, {&xxh3, xxh3.length()}});
  held_.push_back(py::reinterpret_borrow<py::object>(array));
  held_.push_back(py::reinterpret_borrow<py::object>(hasher));
}

std::vector<DigestTaps::Tap> DigestTaps::of(py::handle array) const {
  std::vector<Tap> found;
  if (taps_.empty() || !PyArray_Check(array.ptr())) return found;
  auto* a = reinterpret_cast<PyArrayObject*>(array.ptr());
  if (!PyArray_IS_C_CONTIGUOUS(a)) return found;
  const auto [first, last] = taps_.equal_range({PyArray_BYTES(a), static_cast<std::uint64_t>(PyArray_NBYTES(a))});
  for (auto at = first; at != last; ++at) found.push_back(at->second);
  return found;
}

void DigestTaps::feed(const Tap& tap, const char* bytes, std::uint64_t offset, std::uint64_t size) {
  if (tap.hasher->length() - tap.start == offset) tap.hasher->add(bytes, size);
}

ValueReport compare_values(py::handle gold, py::handle candidate, const Tolerance& tol, const DigestTaps* taps,
                           std::int64_t split_from) {
  auto* g = reinterpret_cast<PyArrayObject*>(gold.ptr());
  auto* c = reinterpret_cast<PyArrayObject*>(candidate.ptr());
  ValueReport report;
  report.total = PyArray_SIZE(g);
  PyArray_Descr *gd = PyArray_DESCR(g), *cd = PyArray_DESCR(c);
  if (PyDataType_REFCHK(gd) || PyDataType_REFCHK(cd)) {  // compare walks object arrays element by element
    report.criterion = "exact";
    report.not_comparable = "arrays of Python objects are compared element by element, not here";
    return report;
  }
  Plan plan;
  if (!make_plan(gd, cd, plan, report)) return report;
  if (plan.rule == Rule::Datetime)
    for (const auto& [side, as, name] :
         {std::tuple{g, &plan.gold_dtype, "gold"}, {c, &plan.candidate_dtype, "candidate"}})
      if (report.not_comparable = unit_overflow(side, *as, name); !report.not_comparable.empty()) return report;
  // Arrays in C order are located in one pass. Otherwise a memory-order pass decides, and only a failing pair
  // is walked again to locate its mismatches.
  if (!PyArray_IS_C_CONTIGUOUS(g) || !PyArray_IS_C_CONTIGUOUS(c)) {
    Sink verdict(report, true);
    if (orders_conflict(g, c))
      iterate_slabs(gold, candidate, plan, NPY_KEEPORDER, tol, verdict);
    else
      iterate(g, c, plan, NPY_KEEPORDER, tol, verdict);
    if (report.mismatched == 0) return report;
    report.mismatched = report.nan_mismatched = report.inf_mismatched = report.signed_zero_mismatched = 0;
    report.max_abs = report.max_rel = Extreme{};
  }
  Sink out(report);
  out.map = map_counter(g);
  // Walking an operand whose last axis is not its fastest in C order reads a cache line and a page per element;
  // slabs keep them cached, and the sink puts the slabs' mismatches back in C order.
  const PassTaps tapped(taps, g, c);  // C order over a C-contiguous array is its memory order: it can be hashed
  if (across_rows(g) || across_rows(c)) {
    iterate_slabs(gold, candidate, plan, NPY_CORDER, tol, out);
  } else {
    iterate_parts(g, c, plan, tol, tapped, split_from, out);
  }
  report.first = located(out.first, gold, candidate);
  report.first_nonfinite = located(out.first_nonfinite, gold, candidate);
  if (out.max_abs_flat >= 0) report.max_abs.index = unravel(out.max_abs_flat, g);
  if (out.max_rel_flat >= 0) report.max_rel.index = unravel(out.max_rel_flat, g);
  if (out.map) report.map = out.map->result();
  return report;
}

}  // namespace parity
