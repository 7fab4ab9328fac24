// Times parity's result codec against np.save/np.load, pickle protocol 5 and joblib on large arrays.
#include <malloc.h>
#include <pybind11/embed.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codec.h"
#include "interpreter.h"
#include "measure.h"

namespace py = pybind11;
using namespace parity::bench;
namespace fs = std::filesystem;

namespace {

// The Python side: building the cases, the competing methods, touching the data and checking round trips.
// Kept as plain Python calls so each method runs exactly as a user of that library would call it.
constexpr const char* kPython = R"PY(
import gc, pickle
import numpy as np
import joblib

COLS = 1000  # case b: a (rows, 2 * COLS) base viewed as [:, ::2]

def make_case(case, n):
    rng = np.random.default_rng(12345)
    if case == "a":
        return rng.random(n)
    if case == "b":
        return rng.random((n // COLS, 2 * COLS))[:, ::2]
    if case == "c":
        return rng.random(n).astype(">f8")
    data = rng.random(n // 8)
    return np.ma.MaskedArray(data, mask=data < 0.25)

def footprint(x):
    # Bytes of memory behind x: the whole base of a view (what parity writes for case b), plus a mask.
    base = x
    while isinstance(base.base, np.ndarray):
        base = base.base
    mask = np.ma.getmask(x)
    return max(x.nbytes, base.nbytes) + (mask.nbytes if mask is not np.ma.nomask else 0)

def describe(x):
    kind = type(x).__module__ + "." + type(x).__qualname__
    extra = f", mask {x.mask.dtype} {x.mask.nbytes / 1e6:.1f} MB" if isinstance(x, np.ma.MaskedArray) else ""
    return (f"{kind} {x.dtype.str} shape {x.shape} strides {x.strides} "
            f"C-contiguous {x.flags.c_contiguous}, {x.nbytes / 1e6:.1f} MB of data{extra}")

def np_save(path, x):
    np.save(path, x)

def pickle_dump(path, x):
    with open(path, "wb") as f:
        pickle.dump(x, f, protocol=5)

def joblib_dump(path, x):
    joblib.dump(x, path)

def np_load(path):
    return np.load(path)

def np_load_mmap(path):
    return np.load(path, mmap_mode="r")

def pickle_load(path):
    with open(path, "rb") as f:
        return pickle.load(f)

def joblib_load_mmap(path):
    return joblib.load(path, mmap_mode="r")

def touch(x):
    # np.asarray drops the subclass (MaskedArray, memmap), so this reads every data element exactly once
    # whatever the method returned; a masked array's mask is read too.
    total = float(np.asarray(x).sum())
    if isinstance(x, np.ma.MaskedArray):
        total += int(np.count_nonzero(np.ma.getmaskarray(x)))
    return total

def check(orig, got):
    notes = []
    if type(got) is not type(orig):
        if isinstance(got, np.memmap) and type(orig) is np.ndarray:
            notes.append("np.memmap")
        else:
            return f"BAD: type {type(got).__name__}"
    if got.dtype != orig.dtype:
        return f"BAD: dtype {got.dtype.str}"
    if got.shape != orig.shape:
        return f"BAD: shape {got.shape}"
    if not np.array_equal(np.asarray(orig), np.asarray(got)):
        return "BAD: values differ"
    if isinstance(orig, np.ma.MaskedArray) and not np.array_equal(np.ma.getmaskarray(orig),
                                                                   np.ma.getmaskarray(got)):
        return "BAD: mask differs"
    if got.strides != orig.strides:
        notes.append("strides not kept")
    return "ok" + (f" ({', '.join(notes)})" if notes else "")

def collect():
    gc.collect()
)PY";

// ---------------------------------------------------------------------------------------------------------
// Measuring (bench/measure.h)

struct Point {
  double seconds = 0;
  double peak_mb = 0;  // VmHWM now minus VmRSS at the start
  double anon_mb = 0;  // anonymous RSS now minus at the start: what the result holds
  double file_mb = 0;  // file-backed (and shmem) RSS now minus at the start: mapped file pages
};

// Uses `bytes` of fresh page cache and of fresh anonymous memory (huge pages, as NumPy asks for them), and
// frees both. On a VM whose balloon reports free pages to the host (virtio-balloon free page reporting, as
// on the machine of README.md), free memory is handed back to the host, and the next operation to need
// memory pays to fault it back in: 1-3 s per GB here, ten times the operation itself, hitting whichever
// method comes first. Cycling both kinds right before the clock starts lets every method find host-backed
// free pages, as it would on bare metal. Fresh anonymous memory alone does not do it: the page cache
// (a write) then still gets cold pages.
void warm_free_memory(const fs::path& scratch, std::size_t bytes) {
  if (bytes == 0) return;
  static const std::vector<char> zeros(4 << 20);
  if (FILE* f = std::fopen(scratch.c_str(), "wb")) {
    for (std::size_t done = 0; done < bytes; done += zeros.size())
      if (std::fwrite(zeros.data(), 1, zeros.size(), f) != zeros.size()) break;
    std::fclose(f);
    fs::remove(scratch);  // never written back: its pages are freed at once
  }
  warm_anonymous_memory(bytes);
}

// One measured operation: start() just before it, mark() after it (more than once: load, then touch).
class Window {
 public:
  Window(py::object collect, fs::path scratch) : collect_(std::move(collect)), scratch_(std::move(scratch)) {}
  void set_warm_bytes(std::size_t bytes) { warm_bytes_ = bytes; }

  // Everything before the clock starts is excluded: garbage from the previous run is collected and given
  // back to the kernel (so it is not reused unseen), dirty pages are flushed so that one method's
  // writeback does not slow down the next, and free memory is warmed (see warm_free_memory).
  void start() {
    collect_();
    ::malloc_trim(0);
    ::sync();
    warm_free_memory(scratch_, warm_bytes_);
    peak_ok_ = reset_peak();
    base_ = read_status();
    t0_ = std::chrono::steady_clock::now();
  }
  Point mark() const {
    const auto t = std::chrono::steady_clock::now();
    const Status s = read_status();
    const double kb = 1024.0 / kMB;
    return {std::chrono::duration<double>(t - t0_).count(), peak_ok_ ? (s.hwm - base_.rss) * kb : -1,
            (s.anon - base_.anon) * kb, (s.file + s.shmem - base_.file - base_.shmem) * kb};
  }

 private:
  py::object collect_;
  fs::path scratch_;
  std::size_t warm_bytes_ = 0;
  bool peak_ok_ = false;
  Status base_;
  std::chrono::steady_clock::time_point t0_;
};

struct Runs {
  std::vector<Point> points;
  double median(double Point::*field) const {
    std::vector<double> v;
    for (const Point& p : points) v.push_back(p.*field);
    return parity::bench::median(v);
  }
  double min_s() const {
    double m = points.empty() ? 0 : points[0].seconds;
    for (const Point& p : points) m = std::min(m, p.seconds);
    return m;
  }
  double max_s() const {
    double m = 0;
    for (const Point& p : points) m = std::max(m, p.seconds);
    return m;
  }
};

// ---------------------------------------------------------------------------------------------------------
// Formatting

// parity / other; meaningless when the other side is nearly zero (memory of an mmap load, for one).
std::string ratio(double parity, double other, double floor) {
  if (other < floor || parity < 0 || other < 0) return "-";
  return fmt("%.2fx", parity / other);
}

// ---------------------------------------------------------------------------------------------------------
// Methods and cases

struct WriteMethod {
  std::string name, file;  // file: name of the file it writes inside the case directory
  std::function<void(const fs::path&, py::handle)> write;
};

struct ReadMethod {
  std::string name, file;  // the file it reads (written by the write method of the same file)
  std::function<py::object(const fs::path&)> read;
};

struct WriteResult {
  Runs runs;
  std::string error;
  double file_mb = 0;
};

struct ReadResult {
  Runs load, touched;  // `touched`: from the start of the load to the end of touching every element
  std::string error, check;
};

struct CaseResult {
  std::string id;
  double data_mb = 0;
  std::vector<WriteResult> writes;
  std::vector<ReadResult> reads;
};

const char* case_title(const std::string& id) {
  if (id == "a") return "(a) float64, C-contiguous";
  if (id == "b") return "(b) float64, non-contiguous: [:, ::2] view of a base twice its size";
  if (id == "c") return "(c) big-endian '>f8', C-contiguous";
  return "(d) np.ma.MaskedArray with a boolean mask, 1/8 of the size";
}

std::string python_error(py::error_already_set& e) {
  std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

class Bench {
 public:
  Bench(py::dict ns, fs::path dir, int repeat, bool warm)
      : ns_(std::move(ns)),
        dir_(std::move(dir)),
        repeat_(repeat),
        warm_(warm),
        window_(ns_["collect"], dir_ / "warm.scratch") {
    writes_ = {
        {"parity write_result", "x.parity", [](const fs::path& p, py::handle x) { parity::write_result(p, x); }},
        {"np.save", "x.npy", python_writer("np_save")},
        {"pickle.dump (protocol 5)", "x.pkl", python_writer("pickle_dump")},
        {"joblib.dump", "x.joblib", python_writer("joblib_dump")},
    };
    // Decoding alone gives a Node; to_python is included so that every method ends with the object a
    // user gets (for case d, a rebuilt MaskedArray; for plain arrays it returns Node::array as is).
    reads_ = {
        {"parity read_result", "x.parity", [](const fs::path& p) { return parity::to_python(parity::read_result(p)); }},
        {"np.load", "x.npy", python_reader("np_load")},
        {"np.load(mmap_mode='r')", "x.npy", python_reader("np_load_mmap")},
        {"pickle.load", "x.pkl", python_reader("pickle_load")},
        {"joblib.load(mmap_mode='r')", "x.joblib", python_reader("joblib_load_mmap")},
    };
  }

  bool parity_failed() const { return parity_failed_; }

  // One untimed round of every method on a tiny array, so that no timing includes a first call's imports.
  void warm_up() {
    py::object tiny = py::module_::import("numpy").attr("arange")(8.0);
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      const fs::path file = dir_ / ("warm-up." + writes_[i].file);
      writes_[i].write(file, tiny);
      for (const ReadMethod& r : reads_)
        if (r.file == writes_[i].file) ns_["touch"](r.read(file));
      fs::remove(file);
    }
  }

  CaseResult run_case(const std::string& id, long elements) {
    CaseResult result;
    result.id = id;
    py::object x = ns_["make_case"](id, elements);
    result.data_mb = py::int_(x.attr("nbytes")).cast<double>() / kMB;
    // Enough for the largest file or loaded copy of this case, with room for the interpreter's own.
    const auto footprint = ns_["footprint"](x).cast<std::size_t>();
    window_.set_warm_bytes(warm_ ? footprint + footprint / 4 + (16 << 20) : 0);
    std::printf("\n== %s\n   %s\n", case_title(id), ns_["describe"](x).cast<std::string>().c_str());
    std::fflush(stdout);
    const fs::path case_dir = dir_ / id;
    fs::create_directories(case_dir);

    // Runs go round-robin, each round starting one method later, so that drift in the machine's state
    // (other processes, writeback, memory) spreads over all methods instead of favouring one.
    result.writes.resize(writes_.size());
    for (int round = 0; round < repeat_; ++round)
      for (std::size_t k = 0; k < writes_.size(); ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(round)) % writes_.size();
        WriteResult& w = result.writes[i];
        if (!w.error.empty()) continue;
        const fs::path file = case_dir / writes_[i].file;
        fs::remove(file);  // every run creates its file afresh (truncating an old one would be timed)
        try {
          window_.start();
          writes_[i].write(file, x);
          w.runs.points.push_back(window_.mark());
        } catch (py::error_already_set& e) {
          w.error = python_error(e);
        } catch (const std::exception& e) {
          w.error = e.what();
        }
      }
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      WriteResult& w = result.writes[i];
      const fs::path file = case_dir / writes_[i].file;
      if (!w.error.empty()) {
        fs::remove(file);
        if (writes_[i].name.starts_with("parity")) parity_failed_ = true;
      } else {
        w.file_mb = static_cast<double>(fs::file_size(file)) / kMB;
      }
    }

    result.reads.resize(reads_.size());
    for (std::size_t i = 0; i < reads_.size(); ++i)
      if (!fs::exists(case_dir / reads_[i].file)) result.reads[i].error = "nothing to read: the write failed";
    for (int round = 0; round < repeat_; ++round)
      for (std::size_t k = 0; k < reads_.size(); ++k) {
        const std::size_t i = (k + static_cast<std::size_t>(round)) % reads_.size();
        ReadResult& r = result.reads[i];
        if (!r.error.empty()) continue;
        try {
          window_.start();
          py::object got = reads_[i].read(case_dir / reads_[i].file);
          r.load.points.push_back(window_.mark());
          ns_["touch"](got);
          r.touched.points.push_back(window_.mark());
          // Checked after the clock stopped; once is enough, the runs read the same file.
          if (round == 0) r.check = ns_["check"](x, got).cast<std::string>();
        } catch (py::error_already_set& e) {
          r.error = python_error(e);
        } catch (const std::exception& e) {
          r.error = e.what();
        }
      }
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      const ReadResult& r = result.reads[i];
      if (reads_[i].name.starts_with("parity") && (!r.error.empty() || r.check.starts_with("BAD")))
        parity_failed_ = true;
    }
    fs::remove_all(case_dir);  // frees the page cache of this case's files before the next one
    print(result);
    return result;
  }

  const std::vector<WriteMethod>& writes() const { return writes_; }
  const std::vector<ReadMethod>& reads() const { return reads_; }

 private:
  std::function<void(const fs::path&, py::handle)> python_writer(const char* name) {
    py::object f = ns_[name];
    return [f](const fs::path& p, py::handle x) { f(p.string(), x); };
  }
  std::function<py::object(const fs::path&)> python_reader(const char* name) {
    py::object f = ns_[name];
    return [f](const fs::path& p) { return f(p.string()); };
  }

  void print(const CaseResult& c) const {
    std::printf("\n   %-27s %9s %17s %9s %8s   %-19s\n", "", "", "", "", "", "--- parity/this ---");
    std::printf("   %-27s %9s %17s %9s %8s %9s %9s\n", "WRITE", "ms", "(min-max)", "peak MB", "file MB", "time",
                "peak");
    const WriteResult& pw = c.writes[0];
    for (std::size_t i = 0; i < writes_.size(); ++i) {
      const WriteResult& w = c.writes[i];
      if (!w.error.empty()) {
        std::printf("   %-27s n/a: %s\n", writes_[i].name.c_str(), w.error.c_str());
        continue;
      }
      const double t = w.runs.median(&Point::seconds), peak = w.runs.median(&Point::peak_mb);
      const std::string range = ms(w.runs.min_s()) + "-" + ms(w.runs.max_s());
      std::printf("   %-27s %9s %17s %9s %8s %9s %9s\n", writes_[i].name.c_str(), ms(t).c_str(), range.c_str(),
                  mb(peak).c_str(), mb(w.file_mb).c_str(),
                  pw.error.empty() ? ratio(pw.runs.median(&Point::seconds), t, 0).c_str() : "-",
                  pw.error.empty() ? ratio(pw.runs.median(&Point::peak_mb), peak, 1).c_str() : "-");
    }
    std::printf("\n   %-27s   %-17s   %-17s   %-17s   %-37s\n", "", "------ load -----", "--- load+touch --",
                "-- held after --", "------------ parity/this ------------");
    std::printf("   %-27s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", "READ", "ms", "peak MB", "ms", "peak MB",
                "anon MB", "file MB", "load", "+touch", "load pk", "+touch pk", "round trip");
    const ReadResult& pr = c.reads[0];
    for (std::size_t i = 0; i < reads_.size(); ++i) {
      const ReadResult& r = c.reads[i];
      if (!r.error.empty()) {
        std::printf("   %-27s n/a: %s\n", reads_[i].name.c_str(), r.error.c_str());
        continue;
      }
      const double tl = r.load.median(&Point::seconds), tt = r.touched.median(&Point::seconds);
      const double pl = r.load.median(&Point::peak_mb), pt = r.touched.median(&Point::peak_mb);
      const bool p_ok = pr.error.empty();
      std::printf("   %-27s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", reads_[i].name.c_str(), ms(tl).c_str(),
                  mb(pl).c_str(), ms(tt).c_str(), mb(pt).c_str(), mb(r.touched.median(&Point::anon_mb)).c_str(),
                  mb(r.touched.median(&Point::file_mb)).c_str(),
                  p_ok ? ratio(pr.load.median(&Point::seconds), tl, 0).c_str() : "-",
                  p_ok ? ratio(pr.touched.median(&Point::seconds), tt, 0).c_str() : "-",
                  p_ok ? ratio(pr.load.median(&Point::peak_mb), pl, 1).c_str() : "-",
                  p_ok ? ratio(pr.touched.median(&Point::peak_mb), pt, 1).c_str() : "-", r.check.c_str());
    }
    std::fflush(stdout);
  }

  py::dict ns_;
  fs::path dir_;
  int repeat_;
  bool warm_;
  Window window_;
  std::vector<WriteMethod> writes_;
  std::vector<ReadMethod> reads_;
  bool parity_failed_ = false;
};

// ---------------------------------------------------------------------------------------------------------
// Targets from the issue: printed, never enforced (timings depend on the machine and its load).

void print_targets(const std::vector<CaseResult>& results, const Bench& bench) {
  constexpr double kWriteRatio = 1.2, kReadRatio = 1.2, kSlackS = 1e-3, kPeakMB = 64;
  std::printf("\nTARGETS (informational; the exit status does not depend on them)\n");
  auto line = [](bool pass, const std::string& text) {
    std::printf("   %s %s\n", pass ? "PASS" : "MISS", text.c_str());
  };
  auto find_read = [&](const CaseResult& c, const std::string& name) -> const ReadResult* {
    for (std::size_t i = 0; i < bench.reads().size(); ++i)
      if (bench.reads()[i].name == name && c.reads[i].error.empty()) return &c.reads[i];
    return nullptr;
  };
  for (const CaseResult& c : results) {
    const std::string tag = "(" + c.id + ")";
    const WriteResult &pw = c.writes[0], &nw = c.writes[1];
    if (pw.error.empty() && nw.error.empty()) {
      const double p = pw.runs.median(&Point::seconds), n = nw.runs.median(&Point::seconds);
      line(p <= kWriteRatio * n,
           tag + " write within 1.2x of np.save: " + ms(p) + " ms vs " + ms(n) + " ms = " + ratio(p, n, 0));
    } else {
      std::printf("   n/a  %s write vs np.save: %s\n", tag.c_str(),
                  (pw.error.empty() ? "np.save: " + nw.error : "parity: " + pw.error).c_str());
    }
    const ReadResult *pr = find_read(c, "parity read_result"), *jr = find_read(c, "joblib.load(mmap_mode='r')");
    if (pr && jr) {
      // "About as much": at most 1.2x, or within 1 ms (both are sub-millisecond when nothing is touched).
      for (auto [what, field] : {std::pair{"read", &ReadResult::load}, std::pair{"read+touch", &ReadResult::touched}}) {
        const double p = ((*pr).*field).median(&Point::seconds), j = ((*jr).*field).median(&Point::seconds);
        line(p <= kReadRatio * j || p - j < kSlackS,
             tag + " " + what + " about as costly as joblib.load(mmap_mode='r'): " + ms(p) + " ms vs " + ms(j) +
                 " ms = " + ratio(p, j, 0) + " (<= 1.2x or within 1 ms)");
      }
    }
    if (c.id == "d") continue;  // the memory target is about the large plain array
    if (pw.error.empty()) {
      const double peak = pw.runs.median(&Point::peak_mb);
      line(peak >= 0 && peak < kPeakMB,
           tag + " peak extra memory to write " + mb(c.data_mb) + " MB: " + mb(peak) + " MB (< 64 MB)");
    }
    if (pr) {
      const double peak = pr->load.median(&Point::peak_mb);
      line(peak >= 0 && peak < kPeakMB,
           tag + " peak extra memory to read " + mb(c.data_mb) + " MB: " + mb(peak) + " MB (< 64 MB)");
      std::printf(
          "   INFO %s read+touch: peak RSS +%s MB, held after: file-backed +%s MB (the mapped file's page "
          "cache), anonymous +%s MB (see bench/README.md)\n",
          tag.c_str(), mb(pr->touched.median(&Point::peak_mb)).c_str(), mb(pr->touched.median(&Point::file_mb)).c_str(),
          mb(pr->touched.median(&Point::anon_mb)).c_str());
    }
  }
}

// Removes the benchmark's directory however main exits.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Times parity's result codec (write_result/read_result) against np.save/np.load, pickle protocol 5 "
      "and joblib on large arrays; see bench/README.md"};
  double size_mb = 800;
  bool quick = false, no_warm = false;
  int repeat = 3;
  std::string dir = "/tmp";
  std::vector<std::string> cases = {"a", "b", "c", "d"};
  auto* size = app.add_option("--size-mb", size_mb, "size of the float64 array in MB (10^6 bytes); default 800")
                   ->check(CLI::Range(1.0, 1e6));  // case b needs at least 1000 elements
  app.add_flag("--quick", quick, "16 MB arrays, for smoke tests")->excludes(size);
  app.add_option("--repeat", repeat, "runs of each operation; the median is reported (default 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--dir", dir, "where the temporary directory for the files goes (default /tmp)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--no-warm", no_warm,
               "do not cycle free memory before each operation (see README: timings then include the VM "
               "faulting back memory it returned to the host)");
  app.add_option("--case", cases, "cases to run: a b c d (default all)")->check(CLI::IsMember({"a", "b", "c", "d"}));
  CLI11_PARSE(app, argc, argv);
  if (quick) size_mb = 16;

  try {
    parity::start_interpreter();
    py::dict ns;
    py::exec(kPython, ns);

    std::string pattern = (fs::path(dir) / "parity_codec_bench.XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory in " + dir);
    TempDir temp{pattern};

    const long elements = static_cast<long>(size_mb * kMB / 8);
    const bool peak_ok = reset_peak();
    py::module_ np = py::module_::import("numpy"), joblib = py::module_::import("joblib");
    std::printf("parity codec benchmark: %ld float64 elements (%.0f MB), median of %d runs, files in %s\n", elements,
                elements * 8 / kMB, repeat, temp.path.c_str());
    std::printf("NumPy %s, joblib %s, %ld CPUs; reads come from the page cache (files were just written)\n",
                np.attr("__version__").cast<std::string>().c_str(),
                joblib.attr("__version__").cast<std::string>().c_str(), ::sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("parity/this: below 1, parity is faster or lighter; MB = 10^6 bytes; free memory %s%s\n",
                no_warm ? "NOT warmed before each operation (--no-warm)" : "warmed before each operation",
                peak_ok ? "" : "; peak memory unavailable (cannot write /proc/self/clear_refs)");

    Bench bench(ns, temp.path, repeat, !no_warm);
    bench.warm_up();
    std::vector<CaseResult> results;
    for (const std::string id : {"a", "b", "c", "d"})
      if (std::find(cases.begin(), cases.end(), id) != cases.end()) results.push_back(bench.run_case(id, elements));
    print_targets(results, bench);
    if (bench.parity_failed()) {
      std::fprintf(stderr, "parity_codec_bench: parity's own write or read failed or did not round-trip\n");
      return 1;
    }
  } catch (const std::exception& e) {  // pybind11's error_already_set too
    std::fprintf(stderr, "parity_codec_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
