// Times parity's result codec against np.save/np.load, pickle protocol 5 and joblib; every read in a fresh process.
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pybind11/embed.h>
#include <sys/mman.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "codec.h"
#include "codec_python.h"
#include "interpreter.h"
#include "measure.h"
#include "process.h"

namespace py = pybind11;
using namespace parity::bench;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

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

// Runs `repeat` rounds over `methods` methods, each round starting one method later, so that drift in the machine's
// state (other processes, writeback, memory) spreads over all methods instead of favouring one.
template <class F>
void round_robin(std::size_t methods, int repeat, F&& run) {
  for (int round = 0; round < repeat; ++round)
    for (std::size_t k = 0; k < methods; ++k) run((k + static_cast<std::size_t>(round)) % methods, round);
}

// ---------------------------------------------------------------------------------------------------------
// Formatting

// parity / other; meaningless when the other side is nearly zero (memory of an mmap load, for one).
std::string ratio(double parity, double other, double floor) {
  if (other < floor || parity < 0 || other < 0) return "-";
  return fmt("%.2fx", parity / other);
}

std::string python_error(py::error_already_set& e) {
  std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

// ---------------------------------------------------------------------------------------------------------
// Cases and methods

// The float64 elements of cases a-c (d has 1/8 of them) and the leaves of case e, which --size-mb does not scale.
struct Sizes {
  long elements = 0, leaves = 0;
};

const char* case_title(const std::string& id) {
  if (id == "a") return "(a) float64, C-contiguous";
  if (id == "b") return "(b) float64, non-contiguous: [:, ::2] view of a base twice its size";
  if (id == "c") return "(c) big-endian '>f8', C-contiguous";
  if (id == "d") return "(d) np.ma.MaskedArray with a boolean mask, 1/8 of the size";
  return "(e) nested output: a dict of lists and tuples of small arrays, NumPy scalars and Python values";
}

// `cases`: the ids of the cases a method runs in. np.save has two forms: an array as such (a-d), and a structure
// (e) wrapped in a 0-d object array, which is pickle inside the .npy file.
struct WriteMethod {
  std::string name, file, cases;  // file: name of the file it writes inside the case directory
  std::function<void(const fs::path&, py::handle)> write;
};

struct ReadMethod {
  std::string name, file, cases;  // the file it reads (written by the write method of the same file)
  std::function<py::object(const fs::path&)> read;
};

bool applies(const std::string& cases, const std::string& id) { return cases.find(id) != std::string::npos; }

std::function<void(const fs::path&, py::handle)> python_writer(const py::dict& ns, const char* name) {
  py::object f = ns[name];
  return [f](const fs::path& p, py::handle x) { f(p.string(), x); };
}

std::function<py::object(const fs::path&)> python_reader(const py::dict& ns, const char* name) {
  py::object f = ns[name];
  return [f](const fs::path& p) { return f(p.string()); };
}

std::vector<WriteMethod> write_methods(const py::dict& ns) {
  return {
      {"parity write_result", "x.parity", "abcde", [](const fs::path& p, py::handle x) { parity::write_result(p, x); }},
      {"np.save", "x.npy", "abcd", python_writer(ns, "np_save")},
      {"np.save (allow_pickle)", "x.npy", "e", python_writer(ns, "np_save_object")},
      {"pickle.dump (protocol 5)", "x.pkl", "abcde", python_writer(ns, "pickle_dump")},
      {"joblib.dump", "x.joblib", "abcde", python_writer(ns, "joblib_dump")},
  };
}

// Decoding alone gives a Node; to_python is included so that every method ends with the object a user gets (for
// case d, a rebuilt MaskedArray; for plain arrays it returns Node::array as is).
std::vector<ReadMethod> read_methods(const py::dict& ns) {
  return {
      {"parity read_result", "x.parity", "abcde",
       [](const fs::path& p) { return parity::to_python(parity::read_result(p)); }},
      {"np.load", "x.npy", "abcd", python_reader(ns, "np_load")},
      {"np.load(mmap_mode='r')", "x.npy", "abcd", python_reader(ns, "np_load_mmap")},
      {"np.load(allow_pickle=True)", "x.npy", "e", python_reader(ns, "np_load_object")},
      {"pickle.load", "x.pkl", "abcde", python_reader(ns, "pickle_load")},
      {"joblib.load", "x.joblib", "e", python_reader(ns, "joblib_load")},
      {"joblib.load(mmap_mode='r')", "x.joblib", "abcde", python_reader(ns, "joblib_load_mmap")},
  };
}

// Also imports what every method needs (numpy, numpy.ma, pickle, joblib), before any clock starts.
py::dict load_python() {
  py::dict ns;
  py::exec(kCodecPython, ns);
  return ns;
}

// ---------------------------------------------------------------------------------------------------------
// Reads in a fresh process: for every read run the benchmark executes itself again with --read-child, so that no
// read finds the data, the objects or the allocator's free lists that the write (or an earlier read) left behind.

constexpr std::string_view kReadChild = "--read-child";

// One read run: which method reads which file, and what was written there (to rebuild it for the round-trip check).
struct ReadRequest {
  std::string method, case_id, file;
  Sizes sizes;
  std::size_t warm_bytes = 0;
  bool check = false;
};

// What the read process sends back. `ready_s`: the steady clock (CLOCK_MONOTONIC, the same in every process) when
// the interpreter, the imports and the method were ready, in the child; in the parent, that minus the moment of the
// spawn, the start-up cost, which no other figure includes.
struct ReadReply {
  Point load, touched;
  double ready_s = 0;
  std::string check, error;
};

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

json point_json(const Point& p) { return {p.seconds, p.peak_mb, p.anon_mb, p.file_mb}; }

Point json_point(const json& j) {
  return {j.at(0).get<double>(), j.at(1).get<double>(), j.at(2).get<double>(), j.at(3).get<double>()};
}

std::vector<std::string> child_argv(const fs::path& exe, const ReadRequest& r) {
  std::vector<std::string> argv = {exe.string(),   std::string(kReadChild),
                                   "--method",     r.method,
                                   "--case",       r.case_id,
                                   "--file",       r.file,
                                   "--elements",   std::to_string(r.sizes.elements),
                                   "--leaves",     std::to_string(r.sizes.leaves),
                                   "--warm-bytes", std::to_string(r.warm_bytes)};
  if (r.check) argv.emplace_back("--check");
  return argv;
}

// In the read process: everything up to `ready_s` is start-up; the clock starts after the warming, as in the parent.
ReadReply read_here(const ReadRequest& r) {
  ReadReply reply;
  try {
    parity::start_interpreter();
    py::dict ns = load_python();
    py::module_::import("parity.reducers");  // what to_python rebuilds subclasses with (case d)
    const std::vector<ReadMethod> methods = read_methods(ns);
    const auto m =
        std::find_if(methods.begin(), methods.end(), [&](const ReadMethod& x) { return x.name == r.method; });
    if (m == methods.end()) throw std::runtime_error("no read method named " + r.method);
    Window window(ns["collect"], fs::path(r.file).parent_path() / "warm.scratch");
    window.set_warm_bytes(r.warm_bytes);
    reply.ready_s = now_s();
    window.start();
    py::object got = m->read(r.file);
    reply.load = window.mark();
    ns["touch"](got);
    reply.touched = window.mark();
    // After the clock stopped: the original, rebuilt from the case's seed, against what was read.
    if (r.check)
      reply.check = ns["check"](ns["make_case"](r.case_id, r.sizes.elements, r.sizes.leaves), got).cast<std::string>();
  } catch (py::error_already_set& e) {
    reply.error = python_error(e);
  } catch (const std::exception& e) {
    reply.error = e.what();
  }
  return reply;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// `parity_codec_bench --read-child --method M --case X --file F ...`: one read run. The reply is one JSON line on
// protocol::kReplyFd, the reply pipe of parity::ChildProcess (on stdout when started by hand, without one).
int read_child_main(int argc, char** argv) {
  CLI::App app{"parity_codec_bench's read process: one timed read in a fresh process (internal)"};
  ReadRequest r;
  app.add_option("--method", r.method)->required();
  app.add_option("--case", r.case_id)->required();
  app.add_option("--file", r.file)->required();
  app.add_option("--elements", r.sizes.elements)->required();
  app.add_option("--leaves", r.sizes.leaves)->required();
  app.add_option("--warm-bytes", r.warm_bytes);
  app.add_flag("--check", r.check);
  CLI11_PARSE(app, argc, argv);
  const ReadReply reply = read_here(r);
  const json line = {{"load", point_json(reply.load)},
                     {"touched", point_json(reply.touched)},
                     {"ready_s", reply.ready_s},
                     {"check", reply.check},
                     {"error", reply.error}};
  const int reply_fd = parity::protocol::kReplyFd;
  write_all(::fcntl(reply_fd, F_GETFD) != -1 ? reply_fd : 1, line.dump() + "\n");
  return 0;
}

// In the parent: the child's last reply line, once it has closed both pipes (its output is kept for errors).
std::string reply_line(parity::ChildProcess& child) {
  std::vector<std::string> lines;
  pollfd fds[2] = {{child.reply_fd(), POLLIN, 0}, {child.output_fd(), POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    ::poll(fds, 2, -1);  // a descriptor set to -1 (closed) is ignored
    if (fds[0].fd >= 0 && !child.read_replies(lines)) fds[0].fd = -1;
    if (fds[1].fd >= 0 && !child.read_output()) fds[1].fd = -1;
  }
  return lines.empty() ? "" : lines.back();
}

ReadReply read_in_child(const fs::path& exe, const ReadRequest& r) {
  const double spawned = now_s();
  parity::ChildProcess child(child_argv(exe, r));
  const std::string line = reply_line(child);
  const std::string end = child.wait_end(60.0);  // both its pipes are closed: it is ending
  ReadReply reply;
  try {
    const json j = json::parse(line);
    reply = {json_point(j.at("load")), json_point(j.at("touched")), j.at("ready_s").get<double>() - spawned,
             j.at("check").get<std::string>(), j.at("error").get<std::string>()};
  } catch (const json::exception&) {
    reply.error = "the read process ended (" + end + ") without a reply; its output ends: " + child.output().text();
  }
  return reply;
}

// ---------------------------------------------------------------------------------------------------------
// The parent: writes in this process, reads in read processes, the tables

struct WriteResult {
  const WriteMethod* method = nullptr;
  Runs runs;
  std::string error;
  double file_mb = 0;
};

struct ReadResult {
  const ReadMethod* method = nullptr;
  Runs load, touched;  // `touched`: from the start of the load to the end of touching every element
  std::vector<double> startup_s;
  std::string error, check;
};

struct CaseResult {
  std::string id;
  double data_mb = 0;
  std::vector<WriteResult> writes;  // the methods that run in this case, parity's first
  std::vector<ReadResult> reads;
};

// The methods of `all` that run in case `id`, each with an empty result.
template <class Result, class Method>
std::vector<Result> results_for(const std::vector<Method>& all, const std::string& id) {
  std::vector<Result> results;
  for (const Method& m : all)
    if (applies(m.cases, id)) {
      results.emplace_back();
      results.back().method = &m;
    }
  return results;
}

template <class Result>
const Result* find_result(const std::vector<Result>& results, std::string_view name) {
  for (const Result& r : results)
    if (r.method->name == name && r.error.empty()) return &r;
  return nullptr;
}

bool is_parity(const std::string& name) { return name.starts_with("parity"); }

void print_writes(const CaseResult& c) {
  std::printf("\n   %-27s %9s %17s %9s %8s   %-19s\n", "", "", "", "", "", "--- parity/this ---");
  std::printf("   %-27s %9s %17s %9s %8s %9s %9s\n", "WRITE", "ms", "(min-max)", "peak MB", "file MB", "time", "peak");
  const WriteResult& pw = c.writes[0];
  for (const WriteResult& w : c.writes) {
    if (!w.error.empty()) {
      std::printf("   %-27s n/a: %s\n", w.method->name.c_str(), w.error.c_str());
      continue;
    }
    const double t = w.runs.median(&Point::seconds), peak = w.runs.median(&Point::peak_mb);
    const std::string range = ms(w.runs.min_s()) + "-" + ms(w.runs.max_s());
    std::printf("   %-27s %9s %17s %9s %8s %9s %9s\n", w.method->name.c_str(), ms(t).c_str(), range.c_str(),
                mb(peak).c_str(), mb(w.file_mb).c_str(),
                pw.error.empty() ? ratio(pw.runs.median(&Point::seconds), t, 0).c_str() : "-",
                pw.error.empty() ? ratio(pw.runs.median(&Point::peak_mb), peak, 1).c_str() : "-");
  }
}

void print_reads(const CaseResult& c) {
  std::printf("\n   %-27s   %-17s   %-17s   %-17s   %-37s\n", "", "------ load -----", "--- load+touch --",
              "-- held after --", "------------ parity/this ------------");
  std::printf("   %-27s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", "READ", "ms", "peak MB", "ms", "peak MB",
              "anon MB", "file MB", "load", "+touch", "load pk", "+touch pk", "round trip");
  const ReadResult& pr = c.reads[0];
  const bool p_ok = pr.error.empty();
  std::vector<double> startup;
  for (const ReadResult& r : c.reads) {
    if (!r.error.empty()) {
      std::printf("   %-27s n/a: %s\n", r.method->name.c_str(), r.error.c_str());
      continue;
    }
    startup.insert(startup.end(), r.startup_s.begin(), r.startup_s.end());
    const double tl = r.load.median(&Point::seconds), tt = r.touched.median(&Point::seconds);
    const double pl = r.load.median(&Point::peak_mb), pt = r.touched.median(&Point::peak_mb);
    std::printf("   %-27s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", r.method->name.c_str(), ms(tl).c_str(),
                mb(pl).c_str(), ms(tt).c_str(), mb(pt).c_str(), mb(r.touched.median(&Point::anon_mb)).c_str(),
                mb(r.touched.median(&Point::file_mb)).c_str(),
                p_ok ? ratio(pr.load.median(&Point::seconds), tl, 0).c_str() : "-",
                p_ok ? ratio(pr.touched.median(&Point::seconds), tt, 0).c_str() : "-",
                p_ok ? ratio(pr.load.median(&Point::peak_mb), pl, 1).c_str() : "-",
                p_ok ? ratio(pr.touched.median(&Point::peak_mb), pt, 1).c_str() : "-", r.check.c_str());
  }
  if (!startup.empty())
    std::printf(
        "   each read ran in a fresh process; its start-up (exec, interpreter, imports), in no figure above: "
        "median %s ms (%s-%s) over %zu processes\n",
        ms(median(startup)).c_str(), ms(*std::min_element(startup.begin(), startup.end())).c_str(),
        ms(*std::max_element(startup.begin(), startup.end())).c_str(), startup.size());
}

class Bench {
 public:
  Bench(py::dict ns, fs::path exe, fs::path dir, Sizes sizes, int repeat, bool warm)
      : ns_(std::move(ns)),
        exe_(std::move(exe)),
        dir_(std::move(dir)),
        sizes_(sizes),
        repeat_(repeat),
        warm_(warm),
        window_(ns_["collect"], dir_ / "warm.scratch"),
        writes_(write_methods(ns_)),
        reads_(read_methods(ns_)) {}

  bool parity_failed() const { return parity_failed_; }

  // One untimed round of every write on a tiny array, so that no timing includes a first call's imports. Reads need
  // none here: each read process imports everything before its clock starts.
  void warm_up() {
    py::object tiny = py::module_::import("numpy").attr("arange")(8.0);
    for (const WriteMethod& w : writes_) {
      const fs::path file = dir_ / ("warm-up." + w.file);
      w.write(file, tiny);
      fs::remove(file);
    }
  }

  CaseResult run_case(const std::string& id) {
    CaseResult result;
    result.id = id;
    py::object x = ns_["make_case"](id, sizes_.elements, sizes_.leaves);
    result.data_mb = ns_["data_bytes"](x).cast<double>() / kMB;
    // Enough for the largest file or loaded copy of this case, with room for the interpreter's own.
    const auto footprint = ns_["footprint"](x).cast<std::size_t>();
    const std::size_t warm_bytes = warm_ ? footprint + footprint / 4 + (16 << 20) : 0;
    std::printf("\n== %s\n   %s\n", case_title(id), ns_["describe"](x).cast<std::string>().c_str());
    std::fflush(stdout);
    const fs::path case_dir = dir_ / id;
    fs::create_directories(case_dir);
    window_.set_warm_bytes(warm_bytes);
    run_writes(result, x, case_dir);
    print_writes(result);
    std::fflush(stdout);
    x = py::none();  // the reads need none of it: they run elsewhere and check against a rebuilt original
    run_reads(result, case_dir, warm_bytes);
    print_reads(result);
    std::fflush(stdout);
    fs::remove_all(case_dir);  // frees the page cache of this case's files before the next one
    return result;
  }

 private:
  void run_writes(CaseResult& result, py::handle x, const fs::path& case_dir) {
    result.writes = results_for<WriteResult>(writes_, result.id);
    round_robin(result.writes.size(), repeat_, [&](std::size_t i, int) {
      WriteResult& w = result.writes[i];
      if (!w.error.empty()) return;
      const fs::path file = case_dir / w.method->file;
      fs::remove(file);  // every run creates its file afresh (truncating an old one would be timed)
      try {
        window_.start();
        w.method->write(file, x);
        w.runs.points.push_back(window_.mark());
      } catch (py::error_already_set& e) {
        w.error = python_error(e);
      } catch (const std::exception& e) {
        w.error = e.what();
      }
    });
    for (WriteResult& w : result.writes) {
      const fs::path file = case_dir / w.method->file;
      if (w.error.empty()) w.file_mb = static_cast<double>(fs::file_size(file)) / kMB;
      if (!w.error.empty()) fs::remove(file);
      if (!w.error.empty() && is_parity(w.method->name)) parity_failed_ = true;
    }
  }

  void run_reads(CaseResult& result, const fs::path& case_dir, std::size_t warm_bytes) {
    result.reads = results_for<ReadResult>(reads_, result.id);
    for (ReadResult& r : result.reads)
      if (!fs::exists(case_dir / r.method->file)) r.error = "nothing to read: the write failed";
    round_robin(result.reads.size(), repeat_, [&](std::size_t i, int round) {
      ReadResult& r = result.reads[i];
      if (!r.error.empty()) return;
      // The round trip is checked in each method's first run only: the runs read the same file.
      const ReadRequest request{r.method->name, result.id,  (case_dir / r.method->file).string(),
                                sizes_,         warm_bytes, round == 0};
      const ReadReply reply = read_in_child(exe_, request);
      if (!reply.error.empty()) {
        r.error = reply.error;
        return;
      }
      r.load.points.push_back(reply.load);
      r.touched.points.push_back(reply.touched);
      r.startup_s.push_back(reply.ready_s);
      if (round == 0) r.check = reply.check;
    });
    for (const ReadResult& r : result.reads)
      if (is_parity(r.method->name) && (!r.error.empty() || r.check.starts_with("BAD"))) parity_failed_ = true;
  }

  py::dict ns_;
  fs::path exe_, dir_;
  Sizes sizes_;
  int repeat_;
  bool warm_;
  Window window_;
  std::vector<WriteMethod> writes_;
  std::vector<ReadMethod> reads_;
  bool parity_failed_ = false;
};

// ---------------------------------------------------------------------------------------------------------
// Targets from the issue: printed, never enforced (timings depend on the machine and its load).

void target_line(bool pass, const std::string& text) {
  std::printf("   %s %s\n", pass ? "PASS" : "MISS", text.c_str());
}

// Writing an array (a-d): within 1.2x of np.save.
void write_target(const CaseResult& c, const std::string& tag) {
  const WriteResult *pw = find_result(c.writes, "parity write_result"), *nw = find_result(c.writes, "np.save");
  if (!pw || !nw) {
    for (const WriteResult& w : c.writes)
      if (!w.error.empty() && (is_parity(w.method->name) || w.method->name == "np.save"))
        std::printf("   n/a  %s write vs np.save: %s: %s\n", tag.c_str(), w.method->name.c_str(), w.error.c_str());
    return;
  }
  const double p = pw->runs.median(&Point::seconds), n = nw->runs.median(&Point::seconds);
  target_line(p <= 1.2 * n,
              tag + " write within 1.2x of np.save: " + ms(p) + " ms vs " + ms(n) + " ms = " + ratio(p, n, 0));
}

// Reading an array (a-d): about as costly as joblib.load(mmap_mode='r'), loading and loading then touching.
void joblib_targets(const CaseResult& c, const std::string& tag) {
  const ReadResult *pr = find_result(c.reads, "parity read_result"),
                   *jr = find_result(c.reads, "joblib.load(mmap_mode='r')");
  if (!pr || !jr) return;
  // "About as much": at most 1.2x, or within 1 ms (both are sub-millisecond when nothing is touched).
  for (auto [what, field] : {std::pair{"read", &ReadResult::load}, std::pair{"read+touch", &ReadResult::touched}}) {
    const double p = ((*pr).*field).median(&Point::seconds), j = ((*jr).*field).median(&Point::seconds);
    target_line(p <= 1.2 * j || p - j < 1e-3,
                tag + " " + what + " about as costly as joblib.load(mmap_mode='r'): " + ms(p) + " ms vs " + ms(j) +
                    " ms = " + ratio(p, j, 0) + " (<= 1.2x or within 1 ms)");
  }
}

// The large plain arrays (a-c): under 64 MB of extra memory to write or read, and a reload (mapped, in a fresh
// process) under 5 ms.
void array_targets(const CaseResult& c, const std::string& tag) {
  constexpr double kPeakMB = 64;
  if (const WriteResult* pw = find_result(c.writes, "parity write_result")) {
    const double peak = pw->runs.median(&Point::peak_mb);
    target_line(peak >= 0 && peak < kPeakMB,
                tag + " peak extra memory to write " + mb(c.data_mb) + " MB: " + mb(peak) + " MB (< 64 MB)");
  }
  const ReadResult* pr = find_result(c.reads, "parity read_result");
  if (!pr) return;
  const double peak = pr->load.median(&Point::peak_mb), load = pr->load.median(&Point::seconds);
  target_line(peak >= 0 && peak < kPeakMB,
              tag + " peak extra memory to read " + mb(c.data_mb) + " MB: " + mb(peak) + " MB (< 64 MB)");
  target_line(load < 5e-3, tag + " reload of the " + mb(c.data_mb) + " MB result in under 5 ms (mapped), in a fresh " +
                               "process: " + ms(load) + " ms");
  std::printf(
      "   INFO %s read+touch: peak RSS +%s MB, held after: file-backed +%s MB (the mapped file's page cache), "
      "anonymous +%s MB (see bench/README.md)\n",
      tag.c_str(), mb(pr->touched.median(&Point::peak_mb)).c_str(), mb(pr->touched.median(&Point::file_mb)).c_str(),
      mb(pr->touched.median(&Point::anon_mb)).c_str());
}

// The nested output (e), issue #20: write and load (fresh process, to Python objects) no slower than pickle 5.
void nested_ratios(const CaseResult& c, const std::string& tag) {
  const WriteResult *pw = find_result(c.writes, "parity write_result"),
                    *kw = find_result(c.writes, "pickle.dump (protocol 5)");
  if (pw && kw) {
    const double p = pw->runs.median(&Point::seconds), k = kw->runs.median(&Point::seconds);
    target_line(p <= k, tag + " write no slower than pickle 5: " + ms(p) + " ms vs " + ms(k) +
                            " ms = " + ratio(p, k, 0) + "; peak " + mb(pw->runs.median(&Point::peak_mb)) + " vs " +
                            mb(kw->runs.median(&Point::peak_mb)) + " MB");
  }
  const ReadResult *pr = find_result(c.reads, "parity read_result"), *kr = find_result(c.reads, "pickle.load");
  if (!pr || !kr) return;
  const double pl = pr->load.median(&Point::seconds), kl = kr->load.median(&Point::seconds);
  const double pt = pr->touched.median(&Point::seconds), kt = kr->touched.median(&Point::seconds);
  target_line(pl <= kl, tag + " load no slower than pickle 5 (fresh process): " + ms(pl) + " ms vs " + ms(kl) +
                            " ms = " + ratio(pl, kl, 0) + "; load+touch " + ms(pt) + " ms vs " + ms(kt) +
                            " ms = " + ratio(pt, kt, 0) + "; load peak " + mb(pr->load.median(&Point::peak_mb)) +
                            " vs " + mb(kr->load.median(&Point::peak_mb)) + " MB");
}

void print_targets(const std::vector<CaseResult>& results) {
  std::printf("\nTARGETS (informational; the exit status does not depend on them)\n");
  for (const CaseResult& c : results) {
    const std::string tag = "(" + c.id + ")";
    if (c.id == "e") {
      nested_ratios(c, tag);
      continue;
    }
    write_target(c, tag);
    joblib_targets(c, tag);
    if (c.id != "d") array_targets(c, tag);  // the memory and reload targets are about the large plain array
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

void print_header(const Sizes& sizes, int repeat, const fs::path& dir, bool warm) {
  py::module_ np = py::module_::import("numpy"), joblib = py::module_::import("joblib");
  std::printf(
      "parity codec benchmark: %ld float64 elements (%.0f MB), %ld leaves in case e, median of %d runs, files in %s\n",
      sizes.elements, sizes.elements * 8 / kMB, sizes.leaves, repeat, dir.c_str());
  std::printf(
      "NumPy %s, joblib %s, %ld CPUs; every read runs in a fresh process and comes from the page cache (files "
      "were just written)\n",
      np.attr("__version__").cast<std::string>().c_str(), joblib.attr("__version__").cast<std::string>().c_str(),
      ::sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("parity/this: below 1, parity is faster or lighter; MB = 10^6 bytes; free memory %s%s\n",
              warm ? "warmed before each operation" : "NOT warmed before each operation (--no-warm)",
              reset_peak() ? "" : "; peak memory unavailable (cannot write /proc/self/clear_refs)");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && argv[1] == kReadChild) return read_child_main(argc - 1, argv + 1);
  CLI::App app{
      "Times parity's result codec (write_result/read_result) against np.save/np.load, pickle protocol 5 "
      "and joblib on large arrays and a nested output, every read in a fresh process; see bench/README.md"};
  double size_mb = 800;
  long leaves = 100000;
  bool quick = false, no_warm = false;
  int repeat = 3;
  std::string dir = "/tmp";
  std::vector<std::string> cases = {"a", "b", "c", "d", "e"};
  auto* size = app.add_option("--size-mb", size_mb, "size of the float64 array in MB (10^6 bytes); default 800")
                   ->check(CLI::Range(1.0, 1e6));  // case b needs at least 1000 elements
  auto* leaves_option = app.add_option("--leaves", leaves, "leaves of the nested output (case e); default 100000")
                            ->check(CLI::Range(1L, 100000000L));
  app.add_flag("--quick", quick, "16 MB arrays, 2000 leaves, one run of each operation (unless --repeat): smoke tests")
      ->excludes(size)
      ->excludes(leaves_option);
  auto* repeat_option = app.add_option("--repeat", repeat, "runs of each operation; the median is reported (default 3)")
                            ->check(CLI::Range(1, 100));
  app.add_option("--dir", dir, "where the temporary directory for the files goes (default /tmp)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--no-warm", no_warm,
               "do not cycle free memory before each operation (see README: timings then include the VM "
               "faulting back memory it returned to the host)");
  app.add_option("--case", cases, "cases to run: a b c d e (default all)")
      ->check(CLI::IsMember({"a", "b", "c", "d", "e"}));
  CLI11_PARSE(app, argc, argv);
  // A smoke test checks that every operation runs and round-trips (each method's first read checks it), which one
  // run does: CTest's bench_all_quick, each read a fresh process (issue #20, target 6).
  if (quick) size_mb = 16, leaves = 2000, repeat = repeat_option->count() ? repeat : 1;

  try {
    parity::start_interpreter();
    py::dict ns = load_python();
    std::string pattern = (fs::path(dir) / "parity_codec_bench.XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory in " + dir);
    TempDir temp{pattern};

    const Sizes sizes{static_cast<long>(size_mb * kMB / 8), leaves};
    print_header(sizes, repeat, temp.path, !no_warm);
    Bench bench(ns, fs::read_symlink("/proc/self/exe"), temp.path, sizes, repeat, !no_warm);
    bench.warm_up();
    std::vector<CaseResult> results;
    for (const std::string id : {"a", "b", "c", "d", "e"})
      if (std::find(cases.begin(), cases.end(), id) != cases.end()) results.push_back(bench.run_case(id));
    print_targets(results);
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
