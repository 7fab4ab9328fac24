// The comparison kernel (see values.h): casting, byte swapping and alignment are NpyIter's buffering.
#include "values.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <memory>

#include "numpy_api.h"

namespace py = pybind11;

namespace parity {
namespace {

enum class Rule { Real, Complex, Exact };

struct Violations {
  ValueReport& report;
  std::vector<std::int64_t> first_flat;

  void add(std::int64_t flat, double abs_diff, double rel_diff, bool nan_only_one_side) {
    ++report.mismatched;
    if (nan_only_one_side) {
      ++report.nan_mismatched;
    } else {
      report.max_abs = std::max(report.max_abs, abs_diff);
      report.max_rel = std::max(report.max_rel, rel_diff);
    }
    if (first_flat.size() < kFirstMismatches) first_flat.push_back(flat);
  }
};

template <class T>
bool is_nan(const T& v) {
  if constexpr (std::is_same_v<T, double>) {
    return std::isnan(v);
  } else {
    return std::isnan(v.real()) || std::isnan(v.imag());
  }
}

// The common case, decided with one comparison: finite gold and candidate within tolerance. NaN fails it
// (every comparison with NaN is false), and so does an infinite gold, whose tolerance would be infinite.
template <class T>
bool fast_close(const T& g, const T& c, const Tolerance& tol) {
  const double ref = std::abs(g);
  return std::abs(c - g) <= tol.atol + tol.rtol * ref && ref < HUGE_VAL;
}

// Decides one element that failed the fast test |c - g| <= atol + rtol|g| (which NaN and inf always fail).
template <class T>
void classify(const T& g, const T& c, const Tolerance& tol, std::int64_t flat, Violations& out) {
  const bool gn = is_nan(g), cn = is_nan(c);
  if (gn || cn) {
    if (!(gn && cn)) out.add(flat, 0, 0, true);
    return;
  }
  if (g == c) return;  // equal infinities
  const double diff = std::abs(c - g), ref = std::abs(g);
  if (ref < HUGE_VAL && diff <= tol.atol + tol.rtol * ref) return;  // infinities must match exactly
  out.add(flat, diff, ref > 0 ? diff / ref : HUGE_VAL, false);
}

template <class T>
void compare_loop(char* gp, char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat, const Tolerance& tol,
                  Violations& out) {
  for (npy_intp i = 0; i < n; ++i, gp += gs, cp += cs) {
    T g, c;
    std::memcpy(&g, gp, sizeof g);
    std::memcpy(&c, cp, sizeof c);
    if (!fast_close(g, c, tol)) classify(g, c, tol, flat + i, out);
  }
}

void exact_loop(char* gp, char* cp, npy_intp gs, npy_intp cs, npy_intp n, std::int64_t flat, std::size_t itemsize,
                Violations& out) {
  for (npy_intp i = 0; i < n; ++i, gp += gs, cp += cs)
    if (std::memcmp(gp, cp, itemsize) != 0) out.add(flat + i, NAN, NAN, false);
}

bool is_inexact(PyArray_Descr* d) { return PyDataType_ISFLOAT(d) || PyDataType_ISCOMPLEX(d); }
// Only numbers are compared in floating point; anything else against a number has no common type
// (casting a string array to float64 would parse it).
bool is_number(PyArray_Descr* d) { return PyDataType_ISBOOL(d) || PyDataType_ISINTEGER(d) || is_inexact(d); }

// The dtype both sides are cast to; null (with not_comparable set) when there is none.
py::object common_dtype(PyArrayObject* g, PyArrayObject* c, Rule rule, ValueReport& report) {
  if (rule == Rule::Real)
    return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyArray_DescrFromType(NPY_DOUBLE)));
  if (rule == Rule::Complex)
    return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyArray_DescrFromType(NPY_CDOUBLE)));
  PyArray_Descr* promoted = PyArray_PromoteTypes(PyArray_DESCR(g), PyArray_DESCR(c));
  if (!promoted) {
    PyErr_Clear();
    report.not_comparable = "no common dtype to compare values in";
    return py::object();
  }
  PyArray_Descr* native = PyArray_DescrNewByteorder(promoted, NPY_NATIVE);
  Py_DECREF(promoted);
  if (!native) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(native));
}

std::vector<std::int64_t> unravel(std::int64_t flat, PyArrayObject* a) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(PyArray_NDIM(a)));
  for (int d = PyArray_NDIM(a) - 1; d >= 0; --d) {
    const npy_intp n = PyArray_DIM(a, d);
    index[static_cast<std::size_t>(d)] = flat % n;
    flat /= n;
  }
  return index;
}

// Python's repr of one element; a value Python cannot show (a code point past U+10FFFF in a hostile file)
// is reported as such rather than ending the comparison.
std::string element_repr(py::handle array, const std::vector<std::int64_t>& index) {
  py::tuple key(index.size());
  for (std::size_t i = 0; i < index.size(); ++i) key[i] = py::int_(index[i]);
  try {
    return py::repr(array[key].attr("item")()).cast<std::string>();
  } catch (py::error_already_set& e) {
    return std::string("<cannot show: ") + e.what() + ">";
  }
}

void iterate(PyArrayObject* g, PyArrayObject* c, py::handle dtype, Rule rule, const Tolerance& tol, Violations& out) {
  PyArrayObject* ops[2] = {g, c};
  npy_uint32 op_flags[2] = {NPY_ITER_READONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED,
                            NPY_ITER_READONLY | NPY_ITER_NBO | NPY_ITER_ALIGNED};
  auto* descr = reinterpret_cast<PyArray_Descr*>(dtype.ptr());
  PyArray_Descr* dtypes[2] = {descr, descr};
  // C order makes the running element count the flat C index, which locates mismatches.
  NpyIter* it =
      NpyIter_MultiNew(2, ops, NPY_ITER_EXTERNAL_LOOP | NPY_ITER_BUFFERED | NPY_ITER_GROWINNER | NPY_ITER_ZEROSIZE_OK,
                       NPY_CORDER, NPY_UNSAFE_CASTING, op_flags, dtypes);
  if (!it) throw py::error_already_set();
  std::unique_ptr<NpyIter, int (*)(NpyIter*)> guard(it, NpyIter_Deallocate);
  if (NpyIter_GetIterSize(it) == 0) return;
  NpyIter_IterNextFunc* next = NpyIter_GetIterNext(it, nullptr);
  if (!next) throw py::error_already_set();
  char** data = NpyIter_GetDataPtrArray(it);
  npy_intp* strides = NpyIter_GetInnerStrideArray(it);
  npy_intp* size = NpyIter_GetInnerLoopSizePtr(it);
  const std::size_t itemsize = static_cast<std::size_t>(PyDataType_ELSIZE(descr));
  std::int64_t flat = 0;
  do {
    if (rule == Rule::Real)
      compare_loop<double>(data[0], data[1], strides[0], strides[1], *size, flat, tol, out);
    else if (rule == Rule::Complex)
      compare_loop<std::complex<double>>(data[0], data[1], strides[0], strides[1], *size, flat, tol, out);
    else
      exact_loop(data[0], data[1], strides[0], strides[1], *size, flat, itemsize, out);
    flat += *size;
  } while (next(it));
}

}  // namespace

bool close_enough(double gold, double candidate, const Tolerance& tol) {
  ValueReport report;
  Violations out{report, {}};
  if (!fast_close(gold, candidate, tol)) classify(gold, candidate, tol, 0, out);
  return report.mismatched == 0;
}

ValueReport compare_values(py::handle gold, py::handle candidate, const Tolerance& tol) {
  auto* g = reinterpret_cast<PyArrayObject*>(gold.ptr());
  auto* c = reinterpret_cast<PyArrayObject*>(candidate.ptr());
  ValueReport report;
  report.total = PyArray_SIZE(g);
  PyArray_Descr *gd = PyArray_DESCR(g), *cd = PyArray_DESCR(c);
  const bool numbers = is_number(gd) && is_number(cd);
  const Rule rule = numbers && (PyDataType_ISCOMPLEX(gd) || PyDataType_ISCOMPLEX(cd)) ? Rule::Complex
                    : numbers && (is_inexact(gd) || is_inexact(cd))                   ? Rule::Real
                                                                                      : Rule::Exact;
  report.criterion = rule == Rule::Exact ? "exact" : "allclose";
  if (PyDataType_REFCHK(gd) || PyDataType_REFCHK(cd)) {  // compare walks object arrays element by element
    report.not_comparable = "arrays of Python objects are compared element by element, not here";
    return report;
  }
  if (is_number(gd) != is_number(cd)) {
    report.not_comparable = "a number and a non-number have no common type to compare values in";
    return report;
  }
  py::object dtype = common_dtype(g, c, rule, report);
  if (!dtype) return report;
  Violations out{report, {}};
  iterate(g, c, dtype, rule, tol, out);
  if (rule == Rule::Exact) report.max_abs = report.max_rel = 0;
  for (std::int64_t flat : out.first_flat) {
    const auto index = unravel(flat, g);
    report.first.push_back({index, element_repr(gold, index), element_repr(candidate, index)});
  }
  return report;
}

}  // namespace parity
