// Times parity's values kernel (compare_values) against np.testing.assert_allclose, np.allclose and np.array_equal.
#include <malloc.h>
#include <pybind11/embed.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "interpreter.h"
#include "measure.h"
#include "values.h"

namespace py = pybind11;
using namespace parity::bench;

namespace {

// The Python side: building each pair of equal arrays and the NumPy methods, called exactly as a user would.
// NumPy's allclose criterion is |a - b| <= atol + rtol * |b| with b the reference, so the candidate goes first and
// gold second: the same criterion as parity's default tolerance (rtol 1e-7, atol 0, gold the reference).
constexpr const char* kPython = R"PY(
import gc
import numpy as np

def side_of(n):
    # The 2-D cases are square with about n elements: 10000 x 10000 for 10^8.
    return max(2, round(n ** 0.5))

def make_case(case, n):
    rng = np.random.default_rng(12345)
    s = side_of(n)
    if case == "c1":
        a = rng.random(n)
        return a, a.copy()
    if case == "swap":
        a = rng.random(n)
        return a, a.astype(">f8")
    if case == "c2":
        a = rng.random((s, s))
        return a, a.copy()
    if case == "fc":
        a = rng.random((s, s))
        return np.asfortranarray(a), a
    if case == "cf":
        a = rng.random((s, s))
        return a, np.asfortranarray(a)
    if case == "ff":
        a = np.asfortranarray(rng.random((s, s)))
        return a, a.copy(order="F")
    base = rng.random((s, 2 * s))  # "strided": every other column of two separate bases
    return base[:, ::2], base.copy()[:, ::2]

def mismatch_index(x):
    # An element in the middle of the array, away from any buffer boundary a pass might special-case.
    return tuple(d // 2 if k == 0 else d // 3 for k, d in enumerate(x.shape))

def describe(x):
    return (f"{x.dtype.str} shape {x.shape} strides {x.strides} C {x.flags.c_contiguous} "
            f"F {x.flags.f_contiguous}, {x.nbytes / 1e6:.0f} MB")

def array_equal(gold, candidate):
    return "" if np.array_equal(gold, candidate) else "np.array_equal returned False on equal arrays"

def allclose(gold, candidate):
    return "" if np.allclose(candidate, gold, rtol=1e-7, atol=0.0) else "np.allclose returned False"

def assert_allclose(gold, candidate):
    np.testing.assert_allclose(candidate, gold, rtol=1e-7, atol=0.0)
    return ""

def make_scratch(x):
    out = np.empty_like(x)
    np.copyto(out, x)  # faulted in here, so that np.copyto's runs time the copy, not the first touch
    return out

def copyto(gold, out):
    np.copyto(out, gold)
    return ""

def perturb(candidate, index):
    old = candidate[index]
    candidate[index] = old * 1.001 + 1.0
    return old

def restore(candidate, index, old):
    candidate[index] = old

def raw(x):
    # What the experimental loops walk (--variants): address, shape and strides as a 2-D array.
    if x.ndim == 1:
        return x.__array_interface__["data"][0], (1, x.shape[0]), (0, x.strides[0])
    return x.__array_interface__["data"][0], x.shape, x.strides

def column_slabs(gold, candidate, width):
    # The pair cut into slabs of `width` columns: views, no copies.
    return [(gold[..., j:j + width], candidate[..., j:j + width]) for j in range(0, gold.shape[-1], width)]

def fastest_axis(x):
    # The axis whose neighbours are closest in memory (length-1 axes never count).
    axes = [k for k in range(x.ndim) if x.shape[k] > 1] or [x.ndim - 1]
    return min(axes, key=lambda k: abs(x.strides[k]))

def orders_conflict(gold, candidate):
    return gold.ndim >= 2 and fastest_axis(gold) != fastest_axis(candidate)

def native_float64(x):
    return x.dtype == np.float64 and x.dtype.isnative and x.flags.aligned

def collect():
    gc.collect()
)PY";

// ---------------------------------------------------------------------------------------------------------
// Measuring (bench/measure.h; the method is bench/README.md's "Method")

struct Point {
  double seconds = 0;
  double peak_mb = 0;  // VmHWM after minus VmRSS before
};

// One measured call: garbage collected and trimmed (a freed block reused unseen would hide an allocation), free
// memory warmed, the peak reset; all of that before the clock starts.
class Window {
 public:
  explicit Window(py::object collect) : collect_(std::move(collect)) {}
  void start(std::size_t warm_bytes) {
    collect_();
    ::malloc_trim(0);
    warm_anonymous_memory(warm_bytes);
    peak_ok_ = reset_peak();
    base_ = read_status();
    t0_ = std::chrono::steady_clock::now();
  }
  Point mark() const {
    const auto t = std::chrono::steady_clock::now();
    const Status s = read_status();
    return {std::chrono::duration<double>(t - t0_).count(), peak_ok_ ? (s.hwm - base_.rss) * 1024.0 / kMB : -1};
  }

 private:
  py::object collect_;
  bool peak_ok_ = false;
  Status base_;
  std::chrono::steady_clock::time_point t0_;
};

struct Runs {
  std::vector<Point> points;
  std::string error;  // the method failed or gave a wrong answer; its figures are not shown
  std::vector<double> all(double Point::*field) const {
    std::vector<double> v;
    for (const Point& p : points) v.push_back(p.*field);
    return v;
  }
  bool ok() const { return error.empty() && !points.empty(); }
  double time() const { return median(all(&Point::seconds)); }
  double peak() const { return median(all(&Point::peak_mb)); }
  double max_peak() const {
    const auto v = all(&Point::peak_mb);
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  }
  double min_s() const {
    const auto v = all(&Point::seconds);
    return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
  }
  double max_s() const {
    const auto v = all(&Point::seconds);
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  }
};

// ---------------------------------------------------------------------------------------------------------
// Formatting

std::string times(double a, double b) { return b > 0 ? fmt("%.2fx", a / b) : "-"; }

std::string python_error(py::error_already_set& e) {
  std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

// ---------------------------------------------------------------------------------------------------------
// Experimental loops (--variants): what src/parity/compare/values.cc could do instead, timed on the same arrays. They
// only count the elements that fail the kernel's fast test (fast_close in src/parity/compare/values.cc, signed zeros
// off), which is all the work of a pass over equal arrays, and they read native, aligned float64 only (not the
// byte-swapped case).

using Extent = std::ptrdiff_t;

struct Raw {  // a 1-D or 2-D array as 2-D: a 1-D array is one row
  const char* data = nullptr;
  Extent shape[2] = {0, 0}, strides[2] = {0, 0};
};

Raw raw(const py::dict& ns, py::handle x) {
  py::tuple t = ns["raw"](x);
  Raw r;
  r.data = reinterpret_cast<const char*>(t[0].cast<std::uintptr_t>());
  for (int k = 0; k < 2; ++k) {
    r.shape[k] = py::tuple(t[1])[k].cast<Extent>();
    r.strides[k] = py::tuple(t[2])[k].cast<Extent>();
  }
  return r;
}

// The axis whose elements are closest in memory (a length-1 axis never counts).
int fastest_axis(const Raw& r) { return r.shape[0] > 1 && std::abs(r.strides[0]) < std::abs(r.strides[1]) ? 0 : 1; }

// The kernel's fast test on a run of elements, alone in its function, so that the pointers, strides and tolerances
// stay in registers (the kernel's loop, inlined into its iterator function, keeps some of them on the stack). noipa:
// the tolerances stay run-time values, as in the kernel, rather than constants folded into the loop.
[[gnu::noipa]] Extent count_not_close(const char* gp, const char* cp, Extent gs, Extent cs, Extent n, double atol,
                                      double rtol) {
  Extent bad = 0;
  for (Extent i = 0; i < n; ++i, gp += gs, cp += cs) {
    double g, c;
    std::memcpy(&g, gp, sizeof g);
    std::memcpy(&c, cp, sizeof c);
    const double ref = std::abs(g);
    bad += !(std::abs(c - g) <= atol + rtol * ref && ref < HUGE_VAL);
  }
  return bad;
}

// Walks the pair in bands `band` elements wide along axis `inner`, each band row by row along the other axis. With
// `band` the whole axis this is a plain walk in that axis' order. Narrow bands keep what the strided operand needs
// (one cache line and one page per element of the band) cached while the band is walked: see bench/README.md.
Extent walk(const Raw& g, const Raw& c, int inner, Extent band, double atol, double rtol) {
  const int outer = 1 - inner;
  Extent bad = 0;
  for (Extent p0 = 0; p0 < g.shape[inner]; p0 += band) {
    const Extent n = std::min(band, g.shape[inner] - p0);
    for (Extent q = 0; q < g.shape[outer]; ++q)
      bad += count_not_close(g.data + q * g.strides[outer] + p0 * g.strides[inner],
                             c.data + q * c.strides[outer] + p0 * c.strides[inner], g.strides[inner], c.strides[inner],
                             n, atol, rtol);
  }
  return bad;
}

constexpr Extent kBand = 1024;  // 8 KB runs of float64: two pages of the operand walked along its contiguous axis

std::string expect_none(Extent bad, const char* what) {
  return bad == 0 ? std::string()
                  : std::string(what) + " counted " + std::to_string(bad) + " differences between equal arrays";
}

// ---------------------------------------------------------------------------------------------------------
// Methods and cases

// A method returns "" when its answer is right (every pair holds equal values), else what went wrong.
using Call = std::function<std::string(py::handle gold, py::handle candidate, py::handle scratch)>;

struct Method {
  std::string name;
  Call call;
  // Free memory warmed before the first run, in operands: NumPy's temporaries (measured: allclose 2.1, assert_allclose
  // 4.4, array_equal's boolean result 0.125); later runs warm 1.25x the peak the method showed.
  double warm_guess = 0;
  bool needs_scratch = false;  // np.copyto writes into a preallocated array of the operand's shape
};

// The variants (--variants) come last; they run on native float64 pairs only, and kSlabs only on pairs whose operands
// disagree on memory order (the only pairs a slab-wise pass would be for).
enum MethodId {
  kParity,
  kArrayEqual,
  kCopyto,
  kAllclose,
  kAssertAllclose,
  kLoopC,
  kLoopBands,
  kSlabs,
  kMethods,
  kFirstVariant = kLoopC
};

struct CaseSpec {
  std::string id, title;
  std::vector<MethodId> methods;
};

const std::vector<CaseSpec>& case_specs() {
  // The issue's targets hold for every layout, so assert_allclose, allclose and array_equal run in every case;
  // copyto (the bandwidth reference) only where the pair is two plain C-order copies.
  static const std::vector<MethodId> numpy = {kParity, kArrayEqual, kAllclose, kAssertAllclose};
  static const std::vector<CaseSpec> specs = {
      {"c1", "1-D float64, C order, against a copy", {kParity, kArrayEqual, kCopyto, kAllclose, kAssertAllclose}},
      {"swap", "1-D float64 against the same values as big-endian '>f8'", numpy},
      {"c2", "2-D square float64, C order against C order", numpy},
      {"fc", "2-D, gold F order (np.asfortranarray) against candidate C order", numpy},
      {"cf", "2-D, gold C order against candidate F order", numpy},
      {"ff", "2-D, F order against F order", numpy},
      {"strided", "2-D [:, ::2] views of two bases twice their size", numpy},
  };
  return specs;
}

struct CaseResult {
  std::string id;
  double data_mb = 0;          // one operand
  std::vector<Runs> runs;      // by MethodId; empty for the methods a case does not run
  std::vector<MethodId> ran;   // in the order of the table
  Runs one_mismatch;           // compare_values on the pair with one element changed (one run)
  std::string mismatch_check;  // "" when it found exactly that element
};

std::string show(const std::vector<std::int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

class Bench {
 public:
  Bench(py::dict ns, int repeat, bool warm, bool variants)
      : ns_(std::move(ns)), repeat_(repeat), warm_(warm), variants_(variants), window_(ns_["collect"]) {
    methods_.resize(kMethods);
    methods_[kParity] = {"parity compare_values", [](py::handle g, py::handle c, py::handle) { return verdict(g, c); }};
    methods_[kArrayEqual] = {"np.array_equal", python("array_equal"), 0.25};
    methods_[kCopyto] = {"np.copyto (reference)", python("copyto", true), 0, true};
    methods_[kAllclose] = {"np.allclose", python("allclose"), 2.5};
    methods_[kAssertAllclose] = {"np.testing.assert_allclose", python("assert_allclose"), 4.5};
    const py::dict& ns_ref = ns_;
    methods_[kLoopC] = {"variant: loop, C order", [ns_ref](py::handle g, py::handle c, py::handle) {
                          const Raw rg = raw(ns_ref, g), rc = raw(ns_ref, c);
                          const parity::Tolerance tol;
                          return expect_none(walk(rg, rc, 1, rg.shape[1], tol.atol, tol.rtol), "the loop");
                        }};
    methods_[kLoopBands] = {"variant: loop, gold-order bands", [ns_ref](py::handle g, py::handle c, py::handle) {
                              // Along gold's contiguous axis; in bands only where the candidate's differs.
                              const Raw rg = raw(ns_ref, g), rc = raw(ns_ref, c);
                              const int inner = fastest_axis(rg);
                              const Extent band = fastest_axis(rc) == inner ? rg.shape[inner] : kBand;
                              const parity::Tolerance tol;
                              return expect_none(walk(rg, rc, inner, band, tol.atol, tol.rtol), "the loop");
                            }};
    methods_[kSlabs] = {"variant: compare_values, slabs", [ns_ref](py::handle g, py::handle c, py::handle) {
                          for (py::handle slab : ns_ref["column_slabs"](g, c, kBand)) {
                            py::tuple pair = py::reinterpret_borrow<py::tuple>(slab);
                            if (std::string wrong = verdict(pair[0], pair[1]); !wrong.empty()) return wrong;
                          }
                          return std::string();
                        }};
  }

  bool failed() const { return failed_; }
  const std::vector<Method>& methods() const { return methods_; }

  // One untimed call of every method on tiny arrays, so that no timing includes a first call's imports
  // (numpy.testing is imported lazily).
  void warm_up() {
    py::tuple pair = ns_["make_case"]("c2", 16);
    py::object scratch = ns_["make_scratch"](pair[0]);
    for (const Method& m : methods_)
      if (std::string wrong = m.call(pair[0], pair[1], scratch); !wrong.empty()) throw std::runtime_error(wrong);
  }

  CaseResult run_case(const CaseSpec& spec, long elements) {
    CaseResult result;
    result.id = spec.id;
    result.runs.resize(kMethods);
    py::tuple pair = ns_["make_case"](spec.id, elements);
    py::object gold = pair[0], candidate = pair[1];
    pair = py::tuple();
    const auto nbytes = gold.attr("nbytes").cast<std::size_t>();
    result.data_mb = static_cast<double>(nbytes) / kMB;
    std::printf("\n== %s: %s\n   gold      %s\n   candidate %s\n", spec.id.c_str(), spec.title.c_str(),
                ns_["describe"](gold).cast<std::string>().c_str(),
                ns_["describe"](candidate).cast<std::string>().c_str());
    std::fflush(stdout);
    result.ran = spec.methods;
    if (variants_ && ns_["native_float64"](gold).cast<bool>() && ns_["native_float64"](candidate).cast<bool>()) {
      result.ran.insert(result.ran.end(), {kLoopC, kLoopBands});
      if (ns_["orders_conflict"](gold, candidate).cast<bool>()) result.ran.push_back(kSlabs);
    }
    py::object scratch = py::none();
    for (MethodId id : result.ran)
      if (methods_[id].needs_scratch) scratch = ns_["make_scratch"](gold);

    std::vector<std::size_t> warm_bytes(kMethods, 0);
    for (MethodId id : result.ran)
      warm_bytes[id] = warm_ ? static_cast<std::size_t>(methods_[id].warm_guess * static_cast<double>(nbytes)) : 0;
    // Round-robin, each round starting one method later, so that drift in the machine's state (other processes,
    // memory) spreads over all methods instead of favouring one.
    const std::size_t count = result.ran.size();
    for (int round = 0; round < repeat_; ++round)
      for (std::size_t k = 0; k < count; ++k) {
        const MethodId id = result.ran[(k + static_cast<std::size_t>(round)) % count];
        Runs& runs = result.runs[id];
        if (!runs.error.empty()) continue;
        try {
          window_.start(warm_bytes[id]);
          std::string wrong = methods_[id].call(gold, candidate, scratch);
          const Point p = window_.mark();
          runs.points.push_back(p);
          runs.error = std::move(wrong);
          if (warm_)
            warm_bytes[id] = static_cast<std::size_t>(std::max(0.0, runs.max_peak()) * kMB * 1.25) + (16 << 20);
        } catch (py::error_already_set& e) {
          runs.error = python_error(e);
        } catch (const std::exception& e) {
          runs.error = e.what();
        }
        // NumPy's own failures are shown, not fatal; parity's and the bench's own loops' are.
        if ((id == kParity || id >= kFirstVariant) && !runs.error.empty()) failed_ = true;
      }

    check_one_mismatch(gold, candidate, result, warm_bytes[kParity]);
    print(result);
    return result;
  }

 private:
  static std::string verdict(py::handle g, py::handle c) {
    const parity::ValueReport r = parity::compare_values(g, c, parity::Tolerance{});
    if (r.ok()) return std::string();
    return r.not_comparable.empty()
               ? "compare_values found " + std::to_string(r.mismatched) + " mismatches between equal arrays"
               : "compare_values: " + r.not_comparable;
  }

  Call python(const char* name, bool takes_scratch = false) {
    py::object f = ns_[name];
    if (takes_scratch) return [f](py::handle g, py::handle, py::handle s) { return f(g, s).cast<std::string>(); };
    return [f](py::handle g, py::handle c, py::handle) { return f(g, c).cast<std::string>(); };
  }

  // The kernel must also find a difference, at the right index: a benchmark of a kernel that skips the work would
  // be meaningless. For a pair not both C-contiguous this run pays the memory-order verdict pass and then the
  // C-order pass that locates the mismatch, so it is timed too.
  void check_one_mismatch(py::handle gold, py::handle candidate, CaseResult& result, std::size_t warm_bytes) {
    try {
      py::tuple index = ns_["mismatch_index"](gold);
      std::vector<std::int64_t> expected;
      for (py::handle i : index) expected.push_back(i.cast<std::int64_t>());
      py::object old = ns_["perturb"](candidate, index);
      window_.start(warm_bytes);
      const parity::ValueReport r = parity::compare_values(gold, candidate, parity::Tolerance{});
      result.one_mismatch.points.push_back(window_.mark());
      ns_["restore"](candidate, index, old);
      if (r.mismatched != 1 || r.first.size() != 1 || r.first[0].index != expected)
        result.mismatch_check = "compare_values found " + std::to_string(r.mismatched) + " mismatches" +
                                (r.first.empty() ? "" : ", first at " + show(r.first[0].index)) + "; expected 1 at " +
                                show(expected);
    } catch (py::error_already_set& e) {
      result.mismatch_check = python_error(e);
    } catch (const std::exception& e) {
      result.mismatch_check = e.what();
    }
    if (!result.mismatch_check.empty()) failed_ = true;
  }

  void print(const CaseResult& c) const {
    std::printf("\n   %-30s %9s %17s %9s %13s\n", "", "ms", "(min-max)", "peak MB", "parity/this");
    const Runs& p = c.runs[kParity];
    auto row = [&](const std::string& name, const Runs& r, bool ratio) {
      if (!r.ok()) {
        std::printf("   %-30s n/a: %s\n", name.c_str(), r.error.c_str());
        return;
      }
      const std::string range = ms(r.min_s()) + "-" + ms(r.max_s());
      std::printf("   %-30s %9s %17s %9s %13s\n", name.c_str(), ms(r.time()).c_str(), range.c_str(),
                  mb(r.peak()).c_str(), ratio && p.ok() ? times(p.time(), r.time()).c_str() : "");
    };
    for (MethodId id : c.ran) row(methods_[id].name, c.runs[id], true);
    row("compare_values, 1 mismatch", c.one_mismatch, false);
    std::printf("   one changed element: %s\n",
                c.mismatch_check.empty() ? "found, at its index" : c.mismatch_check.c_str());
    std::fflush(stdout);
  }

  py::dict ns_;
  int repeat_;
  bool warm_, variants_;
  Window window_;
  std::vector<Method> methods_;
  bool failed_ = false;
};

// ---------------------------------------------------------------------------------------------------------
// Targets from the issue: printed, never enforced (timings depend on the machine and its load).

void print_targets(const std::vector<CaseResult>& results, const Bench& bench) {
  auto find = [&](const std::string& id) -> const CaseResult* {
    for (const CaseResult& c : results)
      if (c.id == id) return &c;
    return nullptr;
  };
  auto line = [](bool pass, const std::string& text) {
    std::printf("   %s %s\n", pass ? "PASS" : "MISS", text.c_str());
  };
  auto info = [](const std::string& text) { std::printf("   INFO %s\n", text.c_str()); };
  auto parity_time = [](const CaseResult* c) { return c && c->runs[kParity].ok() ? c->runs[kParity].time() : -1.0; };

  std::printf("\nTARGETS (informational; the exit status does not depend on them)\n");
  const auto& names = bench.methods();
  for (const CaseResult& c : results) {
    if (!c.runs[kParity].ok()) continue;
    const double p = parity_time(&c);
    const std::string where = "(" + c.id + ") compare_values ";
    // "N times faster": the other method's median over parity's.
    for (auto [id, at_least] : {std::pair{kAssertAllclose, 10.0}, std::pair{kAllclose, 4.0}})
      if (const Runs& r = c.runs[id]; r.ok())
        line(r.time() >= at_least * p, where + "at least " + fmt("%.0f", at_least) + "x faster than " + names[id].name +
                                           ": " + ms(r.time()) + " / " + ms(p) + " ms = " + times(r.time(), p));
    if (const Runs& r = c.runs[kArrayEqual]; r.ok())
      line(p <= 1.5 * r.time(),
           where + "within 1.5x of np.array_equal: " + ms(p) + " / " + ms(r.time()) + " ms = " + times(p, r.time()));
    if (const Runs& r = c.runs[kCopyto]; r.ok())
      info(where + "/ np.copyto (memory-bandwidth reference): " + ms(p) + " / " + ms(r.time()) +
           " ms = " + times(p, r.time()));
  }

  double worst = -1;
  std::string where;
  for (const CaseResult& c : results)
    if (c.runs[kParity].ok() && c.runs[kParity].max_peak() > worst) worst = c.runs[kParity].max_peak(), where = c.id;
  if (worst >= 0)
    line(worst < 32,
         "compare_values extra peak memory under 32 MB: at most " + mb(worst) + " MB over all runs (" + where + ")");
  if (const CaseResult* c = find("c1"))
    for (MethodId id : {kAllclose, kAssertAllclose})
      if (c->runs[id].ok())
        info("(c1) " + bench.methods()[id].name + " extra peak memory: " + mb(c->runs[id].peak()) + " MB for two " +
             mb(c->data_mb) + " MB operands");

  // Layouts: each against the C-order pair of the same shape.
  struct Layout {
    const char *id, *reference, *what;
    bool target;
  };
  for (const Layout& l :
       {Layout{"swap", "c1", "byte-swapped '>f8' candidate", true},
        Layout{"fc", "c2", "F-order gold against C-order candidate", true},
        Layout{"cf", "c2", "C-order gold against F-order candidate", true},
        Layout{"ff", "c2", "F order against F order", false}, Layout{"strided", "c2", "[:, ::2] views", false}}) {
    const double t = parity_time(find(l.id)), ref = parity_time(find(l.reference));
    if (t < 0 || ref < 0) continue;
    const std::string text = std::string("(") + l.id + ") " + l.what + " / native C order (" + l.reference +
                             "): " + ms(t) + " / " + ms(ref) + " ms = " + times(t, ref);
    if (l.target)
      line(t <= 2 * ref, text + " (<= 2x)");
    else
      info(text);
  }
}

// The figures of --variants side by side, and the targets as they would read if parity's kernel did what a variant
// does: each ratio is taken against the same kind of pass on the reference pair.
void print_variants(const std::vector<CaseResult>& results) {
  auto time_of = [&](const std::string& id, MethodId m) {
    for (const CaseResult& c : results)
      if (c.id == id && c.runs[m].ok()) return c.runs[m].time();
    return -1.0;
  };
  bool any = false;
  for (const CaseResult& c : results) any = any || c.runs[kLoopC].ok();
  if (!any) return;
  std::printf("\nVARIANTS (ms, medians; the loops are experiments in this file, not parity's kernel)\n");
  std::printf("   %-8s %15s %15s %15s %15s %15s\n", "case", "compare_values", "loop, C order", "loop, bands",
              "cv on slabs", "np.array_equal");
  for (const CaseResult& c : results) {
    auto cell = [&](MethodId m) { return c.runs[m].ok() ? ms(c.runs[m].time()) : std::string("-"); };
    std::printf("   %-8s %15s %15s %15s %15s %15s\n", c.id.c_str(), cell(kParity).c_str(), cell(kLoopC).c_str(),
                cell(kLoopBands).c_str(), cell(kSlabs).c_str(), cell(kArrayEqual).c_str());
  }
  auto what_if = [&](const std::string& text, double t, double ref, double limit) {
    if (t > 0 && ref > 0)
      std::printf("   %s %s: %s / %s ms = %s (<= %.1fx)\n", t <= limit * ref ? "PASS" : "MISS", text.c_str(),
                  ms(t).c_str(), ms(ref).c_str(), times(t, ref).c_str(), limit);
  };
  std::printf("   if the kernel's pass ran like the loop alone (C order; gold-order bands for mixed orders):\n");
  what_if("(c1) within 1.5x of np.array_equal", time_of("c1", kLoopC), time_of("c1", kArrayEqual), 1.5);
  for (const char* id : {"fc", "cf"})
    what_if(std::string("(") + id + ") bands / c2 C order", time_of(id, kLoopBands), time_of("c2", kLoopC), 2);
  std::printf("   if compare_values cut a mixed-order pair into slabs of %td columns (kernel loop unchanged):\n",
              kBand);
  for (const char* id : {"fc", "cf"})
    what_if(std::string("(") + id + ") slabs / c2 compare_values", time_of(id, kSlabs), time_of("c2", kParity), 2);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Times parity's values kernel (compare_values) against np.testing.assert_allclose, np.allclose and "
      "np.array_equal on large float64 arrays in several layouts; see bench/README.md"};
  long elements = 100'000'000;
  bool quick = false, no_warm = false, variants = false;
  int repeat = 5;
  std::vector<std::string> cases;
  for (const CaseSpec& s : case_specs()) cases.push_back(s.id);
  const std::vector<std::string> all_cases = cases;
  auto* size = app.add_option("--elements", elements, "float64 elements per operand (default 100,000,000: 800 MB)")
                   ->check(CLI::Range(4L, 2'000'000'000L));
  auto* rep = app.add_option("--repeat", repeat, "runs of each method; the median is reported (default 5)")
                  ->check(CLI::Range(1, 100));
  app.add_flag("--quick", quick, "1,000,000 elements and 3 runs, for smoke tests")->excludes(size)->excludes(rep);
  app.add_flag("--no-warm", no_warm,
               "do not cycle free memory before each call (see bench/README.md: NumPy's temporaries then include "
               "the VM faulting back memory it returned to the host)");
  app.add_flag(
      "--variants", variants,
      "also time experimental loops (what src/parity/compare/values.cc could do instead) on the native float64 pairs");
  app.add_option("--case", cases, "cases to run (default all): c1 swap c2 fc cf ff strided")
      ->check(CLI::IsMember(all_cases));
  CLI11_PARSE(app, argc, argv);
  if (quick) elements = 1'000'000, repeat = 3;

  try {
    parity::start_interpreter();
    py::dict ns;
    py::exec(kPython, ns);
    const bool peak_ok = reset_peak();
    py::module_ np = py::module_::import("numpy");
    const long side = ns["side_of"](elements).cast<long>();
    std::printf(
        "parity values benchmark: %ld float64 elements per operand (%.0f MB; 2-D cases %ld x %ld), median "
        "of %d runs\n",
        elements, elements * 8 / kMB, side, side, repeat);
    std::printf("NumPy %s, %ld CPUs; every pair holds equal values; tolerance rtol 1e-7, atol 0 for every method\n",
                np.attr("__version__").cast<std::string>().c_str(), ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("parity/this: below 1, parity is faster; MB = 10^6 bytes; free memory %s%s\n",
                no_warm ? "NOT warmed before each call (--no-warm)" : "warmed before each call",
                peak_ok ? "" : "; peak memory unavailable (cannot write /proc/self/clear_refs)");

    Bench bench(ns, repeat, !no_warm, variants);
    bench.warm_up();
    std::vector<CaseResult> results;
    for (const CaseSpec& spec : case_specs())
      if (std::find(cases.begin(), cases.end(), spec.id) != cases.end())
        results.push_back(bench.run_case(spec, elements));
    print_targets(results, bench);
    print_variants(results);
    if (bench.failed()) {
      std::fprintf(stderr, "compare_bench: compare_values (or a variant loop) failed or gave a wrong answer\n");
      return 1;
    }
  } catch (const std::exception& e) {  // pybind11's error_already_set too
    std::fprintf(stderr, "compare_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
