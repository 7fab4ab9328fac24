// parity._core: the C++ engine as a Python extension module (read and write result files, compare outputs and runs).
// python/parity/api.py wraps it with the documented functions (README, "Python API").
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include "compare.h"
#include "compare_results.h"
#include "deadline.h"
#include "digest.h"
#include "interpreter.h"
#include "json_output.h"
#include "json_report.h"
#include "manifest.h"
#include "resources.h"
#include "shard.h"
#include "temp_directory.h"
#include "verdict.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// The report's JSON as the Python objects json.loads makes of it, so that a dict from here is the JSON report's.
py::object to_python_json(const json& doc) { return py::module_::import("json").attr("loads")(dump_json(doc, -1)); }

ReadLimits limits_of(std::optional<std::uint64_t> max_memory) {
  ReadLimits limits;
  if (max_memory) limits.max_memory = *max_memory;
  return limits;
}

// A result file's outputs as Python objects; a type that may not be rebuilt is a FormatError naming the file too.
py::object read_file(const std::filesystem::path& file, std::optional<std::uint64_t> max_memory) {
  const Node outputs = read_result(file, limits_of(max_memory));
  try {
    return to_python(outputs);
  } catch (const FormatError& e) {
    throw FormatError(file.string() + ": " + e.what());
  }
}

// {name: value} policies (dtype, layout, ...) into `choice`; an unknown name or value is a ValueError naming both.
void set_policies(PolicyChoice& choice, const py::dict& policies) {
  for (const auto& [name, value] : policies)
    choice.set(py::str(name).cast<std::string>(), py::str(value).cast<std::string>());
}

Policy policy_of(const py::dict& policies, std::optional<double> rtol, std::optional<double> atol,
                 const py::dict& tolerances, bool signed_zeros, const std::map<std::string, std::string>& type_map) {
  Policy policy;
  set_policies(policy.choice, policies);
  policy.tolerance = {rtol, atol};
  for (const auto& [path, spec] : tolerances) {
    const py::dict entry = spec.cast<py::dict>();  // python/parity/api.py checks the shape first
    auto number = [&entry](const char* key) {
      return entry.contains(key) ? std::optional(entry[key].cast<double>()) : std::nullopt;
    };
    policy.by_path[py::str(path).cast<std::string>()] = {number("rtol"), number("atol")};
  }
  policy.signed_zeros = signed_zeros;
  policy.type_map = type_map;
  return policy;
}

// Writes one side's outputs to `file` and reads them back as compare would; an output the codec cannot carry is that
// side's `serialize` failure in `out` (nullopt then), as a run records it.
std::optional<Node> through_file(py::handle outputs, const std::filesystem::path& file, const char* side,
                                 ScenarioOutcome& out) {
  try {
    write_result(file, outputs);
  } catch (const UnsupportedOutput& e) {
    out.status = "error";
    out.checks.push_back(
        {"serialize", false, side, std::string("the ") + side + " outputs cannot be written: " + e.what()});
    return std::nullopt;
  }
  return read_result(file);
}

// One scenario's entry of the JSON report for two in-memory output trees: each written to a result file and read
// back, then compared leaf by leaf under `policy` (the tree's checks; the probes belong to runs).
py::object compare_trees(py::handle gold, py::handle candidate, const std::string& id, const Policy& policy) {
  const auto start = std::chrono::steady_clock::now();
  ScenarioOutcome out;
  out.id = id;
  out.meta = json::object();
  const TempDirectory dir("parity-api-");
  const std::optional<Node> g = through_file(gold, dir.path() / "gold.parity", "gold", out);
  const std::optional<Node> c = through_file(candidate, dir.path() / "candidate.parity", "candidate", out);
  if (g && c) {
    out.policy = policy.choice.to_json();
    out.policy["signed_zeros"] = policy.signed_zeros;
    record_checks(compare_outputs(*g, *c, policy), out);
    out.message = summary_message(out);
  } else {
    out.message = out.checks.front().message;
  }
  out.compare_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return to_python_json(scenario_to_json(out));
}

// Whether the running thread is Python's main thread, the only one Python runs signal handlers in.
bool in_main_thread() {
  static const unsigned long main_ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return PyThread_get_thread_ident() == main_ident;
}

// The main thread's calls of interruptible in progress (a reducer may call compare_outputs again); the GIL guards it.
int main_thread_calls = 0;

// A Ctrl-C (or SIGTERM) during compare_outputs, compare_results or write_result stops it at its next check
// (deadline.h) and is Python's KeyboardInterrupt. Before, they installed no handler: Python's own only set a flag
// that the C++ loops never read, and a compare of a 2**32-element strided view ran to its end before the interrupt
// was seen. Only the main thread's outermost call installs the handler: two threads saving and setting back handlers
// around each other's calls had left note_stop_signal installed for good (SIGTERM then ended nothing). A call in
// another thread runs under whatever is installed, and one a noted signal stopped is a KeyboardInterrupt there too.
template <class Call>
py::object interruptible(Call call) {
  if (main_thread_calls > 0 || !in_main_thread()) {
    try {
      return call();
    } catch (const Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
  }
  struct Inside {
    Inside() { ++main_thread_calls; }
    ~Inside() { --main_thread_calls; }
  } const inside;
  py::object out;
  std::exception_ptr failure;
  {
    const StopSignalHandler signals(note_stop_signal);
    try {
      out = call();
    } catch (const Interrupted&) {
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // The caller's handlers are back, so nothing sets the flag now: a signal noted after the call's last check is
  // a KeyboardInterrupt all the same (it had been dropped when the call then ended normally).
  const int stop = detail::stop_signal;
  detail::stop_signal = 0;
  if (stop || (!out && !failure)) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  if (failure) std::rethrow_exception(failure);
  return out;
}

py::object compare_memory(py::handle gold, py::handle candidate, const py::dict& policies, std::optional<double> rtol,
                          std::optional<double> atol, const py::dict& tolerances, bool signed_zeros,
                          const std::map<std::string, std::string>& type_map, const std::string& id) {
  const Policy policy = policy_of(policies, rtol, atol, tolerances, signed_zeros, type_map);
  return interruptible([&] { return compare_trees(gold, candidate, id, policy); });
}

// The built-in backends (parity_fixtures) importable, as the executable's interpreter has them: compare loads a
// built-in backend by name for its reducers.
void register_builtin_backends() {
  py::module_::import("parity.backend").attr("register_fixtures")(configured_paths().fixtures);
}

// The shared object this code was loaded from (<build>/python/_core*.so, or the installed package's).
std::string this_module_file() {
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(&register_builtin_backends), &info) && info.dli_fname ? info.dli_fname : "";
}

struct RunsOptions {
  std::vector<std::string> only;
  py::dict policies;
  std::vector<std::string> trust_backends, trust_scenarios;
  bool pickle_probe = true, strict_differences = false;
  std::optional<double> timeout;
  std::optional<std::uint64_t> max_memory;
  bool progress = false;
};

CompareOptions compare_options(const RunsOptions& given) {
  CompareOptions options;
  options.only = given.only;
  set_policies(options.policy, given.policies);
  for (const auto& [name, value] : given.policies) options.policies_given.insert(py::str(name).cast<std::string>());
  options.trusted_backends = given.trust_backends;
  options.trusted_scenarios = given.trust_scenarios;
  options.pickle_probe = given.pickle_probe;
  options.strict_differences = given.strict_differences;
  options.limits = limits_of(given.max_memory);
  return options;
}

/// A compare that `parity compare` would refuse (runs swapped or disjoint, nothing to compare, shards that do not
/// line up, no manifest, bad declared differences): parity's message. A ValueError in Python.
struct CompareRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The Python API's reports: none written, nothing told; the JSON report kept for the caller and a refusal kept to
// raise.
class KeptReport : public CompareReporter {
 public:
  std::string prepare(const Manifest&) override { return ""; }
  void write(const CompareReport& report, std::vector<WrittenReport>&) override { document_ = report_to_json(report); }
  void tell(const CompareReport&, Verbosity) override {}
  void refuse(const std::string& message) override { refusal_ = message; }
  const json& document() const { return document_; }
  const std::string& refusal() const { return refusal_; }

 private:
  json document_;
  std::string refusal_;
};

// `parity compare GOLD CANDIDATE --json`'s document, as a dict, from the same compare_results: a pair it refuses
// raises CompareRefused with its message. Shows nothing on the terminal unless `progress`.
py::object compare_dirs(const std::filesystem::path& gold_dir, const std::filesystem::path& candidate_dir,
                        const RunsOptions& given) {
  register_builtin_backends();
  CompareCommand command;
  command.gold = gold_dir.string();
  command.candidate = candidate_dir.string();
  command.timeout = given.timeout;
  command.options = compare_options(given);
  command.sharding.from_environment = false;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> nowhere(std::fopen("/dev/null", "w"), &std::fclose);
  if (!nowhere) throw std::system_error(errno, std::generic_category(), "fopen /dev/null");
  command.terminal = given.progress ? stderr : nowhere.get();
  command.own_stop_handler = false;  // interruptible installs it, from the main thread only
  KeptReport kept;
  int code = kExitOk;
  interruptible([&] {
    code = compare_results(command, kept);
    return py::object(py::none());
  });
  if (code == kExitUsage) throw CompareRefused(kept.refusal().empty() ? "the compare was refused" : kept.refusal());
  if (code == kExitInterrupted) {  // a Ctrl-C noted by a handler another call installed: Python's way to say it
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return to_python_json(kept.document());
}

// write_result replaces what is at its name (a rename over it, or with in_place an unlink first): run as root with
// /dev/null as its file, it had replaced the machine's /dev/null with a regular file. A result file is a regular
// file: a device, FIFO, socket or directory at the name is refused, left as it is. A symbolic link is replaced, its
// target untouched, as any atomic writer does.
void refuse_special_destination(const std::filesystem::path& file) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(file, ec);
  if (ec || !std::filesystem::exists(status) || std::filesystem::is_regular_file(status) ||
      std::filesystem::is_symlink(status))
    return;
  throw py::value_error(file.string() +
                        " is not a regular file (a device, FIFO, socket or directory): write_result "
                        "writes a result file and does not replace it");
}

}  // namespace
}  // namespace parity

PYBIND11_MODULE(_core, m) {
  using namespace parity;
  import_numpy_api(py::module_::import("sys").attr("executable").cast<std::string>());
  // This process's executable is some python: parity's resources are found from this module's file or the
  // environment's prefix instead (resources.h). __file__ is set only after this function returns.
  anchor_resources({this_module_file(), py::module_::import("sys").attr("prefix").cast<std::string>() + "/bin/python"});
  m.doc() = "parity's C++ engine; use the functions parity re-exports (parity.api), not these";
  py::register_exception<FormatError>(m, "FormatError", PyExc_ValueError);
  py::register_exception<UnsupportedOutput>(m, "UnsupportedOutput", PyExc_TypeError);
  py::register_exception<ManifestError>(m, "ManifestError", PyExc_ValueError);
  py::register_exception<ShardError>(m, "ShardError", PyExc_ValueError);
  py::register_exception<DifferenceError>(m, "DifferenceError", PyExc_ValueError);
  py::register_exception<CompareRefused>(m, "CompareRefused", PyExc_ValueError);
  m.attr("FORMAT_VERSION") = py::make_tuple(kFormatMajor, kFormatMinor);
  define_path_functions(m);    // parity.paths' grammar, outside the parity program
  define_digest_functions(m);  // parity.probe's XXH3-128, outside the parity program
  m.def("read_result", &read_file, py::arg("file"), py::arg("max_memory") = py::none());
  // A user's file (parity.write_result), which anything may read at any moment, is renamed into place; in_place is a
  // run's worker's way (atomic_file.h), for bench/floor_bench.py's timing of it.
  m.def(
      "write_result",
      [](const std::filesystem::path& file, py::handle outputs, bool in_place) {
        refuse_special_destination(file);
        return interruptible([&] {  // an overlapping view's gather can run for many seconds (encode.cc, gather)
          write_result(file, outputs, in_place ? Publish::in_place : Publish::by_rename);
          return py::object(py::none());
        });
      },
      py::arg("file"), py::arg("outputs"), py::kw_only(), py::arg("in_place") = false);
  m.def("compare_outputs", &compare_memory, py::arg("gold"), py::arg("candidate"), py::arg("policy"), py::arg("rtol"),
        py::arg("atol"), py::arg("tolerances"), py::arg("signed_zeros"), py::arg("type_map"), py::arg("id"));
  m.def(
      "compare_results",
      [](const std::filesystem::path& gold, const std::filesystem::path& candidate, std::vector<std::string> only,
         py::dict policy, std::vector<std::string> trust_backends, std::vector<std::string> trust_scenarios,
         bool pickle_probe, bool strict_differences, std::optional<double> timeout,
         std::optional<std::uint64_t> max_memory, bool progress) {
        return compare_dirs(gold, candidate,
                            {std::move(only), std::move(policy), std::move(trust_backends), std::move(trust_scenarios),
                             pickle_probe, strict_differences, timeout, max_memory, progress});
      },
      py::arg("gold"), py::arg("candidate"), py::arg("only"), py::arg("policy"), py::arg("trust_backends"),
      py::arg("trust_scenarios"), py::arg("pickle_probe"), py::arg("strict_differences"), py::arg("timeout"),
      py::arg("max_memory"), py::arg("progress"));
}
