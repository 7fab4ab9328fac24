// Runs scenarios in the embedded interpreter and writes each outcome as soon as it is known (see runner.h).
#include "runner.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

#include "atomic_file.h"
#include "codec.h"
#include "config.h"
#include "interpreter.h"
#include "manifest.h"
#include "progress.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// Python's own json module converts the metadata dicts; they hold only JSON-able values by construction.
json to_json(py::handle obj) {
  static py::object text = py::module_::import("parity._scenario").attr("json_text");
  return json::parse(text(obj).cast<std::string>());
}

bool is_python_error(const py::error_already_set& e, const char* module, const char* name) {
  return e.matches(py::module_::import(module).attr(name));
}

py::object discover(const Selection& selection) {
  py::module_ discovery = py::module_::import("parity.discovery");
  py::object found = discovery.attr("discover")(selection.paths);
  return discovery.attr("select")(found, selection.only, selection.keyword);
}

// An --only id that matches nothing is a typo, not an empty run.
void check_selection(const Selection& selection, py::handle found) {
  std::set<std::string> known;
  for (py::handle s : found.attr("scenarios")) known.insert(s.attr("id").cast<std::string>());
  for (py::handle e : found.attr("errors")) known.insert(e.attr("id").cast<std::string>());
  for (const std::string& id : selection.only)
    if (!known.count(id)) throw std::invalid_argument("no scenario has the id '" + id + "' (see 'parity list')");
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

json error_record(const std::string& type, const std::string& message) {
  return {{"type", type}, {"message", message}, {"traceback", ""}};
}

// Applies the strict per-pass xfail: an expected failure that happens is xfail, one that does not is xpass.
void apply_xfail(ScenarioRecord& record, const std::string& role) {
  const json& xfail = record.meta.value("xfail", json::object());
  if (!xfail.contains(role) || record.status == "skip") return;
  const std::string reason = xfail.at(role).get<std::string>();
  if (record.status == "error") {
    record.status = "xfail";
    record.error["reason"] = reason;
  } else {
    record.status = "xpass";
    record.error = error_record("XPASS", "the " + role + " pass was expected to fail (" + reason + ") but passed");
  }
}

// What compare needs to check parity's codec (leaf digests) and the ecosystem's pickle (a protocol 5 blob).
void record_probes(ScenarioRecord& record, py::handle outputs, const std::filesystem::path& out,
                   const std::string& stem, bool pickle_probe) {
  py::module_ probe = py::module_::import("parity.probe");
  record.fidelity = to_json(probe.attr("digests")(outputs));
  if (!pickle_probe) return;
  const std::string file = std::string(kResultsSubdir) + "/" + stem + ".pickle";
  py::object error = probe.attr("pickle_outputs")(outputs, (out / file).string());
  if (!error.is_none()) {
    record.pickle_error = to_json(error);
    return;
  }
  record.pickle_file = file;
}

ScenarioRecord run_one(py::handle scenario, py::handle backend, const std::filesystem::path& out,
                       const std::string& role, bool pickle_probe) {
  ScenarioRecord record;
  record.id = scenario.attr("id").cast<std::string>();
  record.meta = to_json(scenario.attr("metadata")());
  const auto start = std::chrono::steady_clock::now();
  py::dict outcome = scenario.attr("call")(backend);
  record.status = outcome["status"].cast<std::string>();
  if (record.status != "ok") record.error = to_json(outcome["error"]);
  if (record.status == "ok") {
    const std::string file = std::string(kResultsSubdir) + "/" + scenario.attr("file_name").cast<std::string>();
    try {
      write_result(out / file, outcome["outputs"]);
      record.file = file;
      try {
        record_probes(record, outcome["outputs"], out, scenario.attr("file_name").cast<std::string>(), pickle_probe);
      } catch (py::error_already_set& e) {  // parity's own failure: this scenario reports it, the run goes on
        record.status = "error", record.error = error_record("ProbeError", e.what());
      }
    } catch (const UnsupportedOutput& e) {
      record.status = "error", record.error = error_record("SerializeError", e.what());
    } catch (const std::runtime_error& e) {
      record.status = "error", record.error = error_record("ResultWriteError", e.what());
    }
  }
  record.seconds = seconds_since(start);
  apply_xfail(record, role);
  return record;
}

ScenarioRecord module_error(py::handle error) {
  ScenarioRecord record;
  record.id = error.attr("id").cast<std::string>();
  record.status = "error";
  record.meta = to_json(error.attr("metadata")());
  record.error = to_json(error.attr("error"));
  return record;
}

std::string backend_name(const RunOptions& options) {
  if (!options.backend.empty()) return options.backend;
  const char* env = std::getenv("PARITY_BACKEND");
  return env ? env : "";
}

int run_loaded(const RunOptions& options, Manifest& manifest, py::handle backend) {
  py::object found = discover(options.selection);
  check_selection(options.selection, found);
  std::filesystem::create_directories(options.out / kResultsSubdir);
  const std::string role = backend.attr("role").cast<std::string>();
  write_manifest(manifest);  // an interrupted run leaves a manifest that says it is incomplete
  const auto start = std::chrono::steady_clock::now();
  Progress progress(stderr,
                    progress_options(stderr, "run", py::len(found.attr("errors")) + py::len(found.attr("scenarios")),
                                     options.verbosity));
  for (py::handle error : found.attr("errors")) {
    manifest.scenarios.push_back(module_error(error));
    progress.end(to_shown(manifest.scenarios.back()));
  }
  for (py::handle scenario : found.attr("scenarios")) {
    progress.begin(scenario.attr("id").cast<std::string>());
    manifest.scenarios.push_back(run_one(scenario, backend, options.out, role, options.pickle_probe));
    progress.end(to_shown(manifest.scenarios.back()));
  }
  manifest.run["seconds"] = seconds_since(start);
  manifest.complete = true;
  write_manifest(manifest);
  progress.summary({{"results", options.out.string()}});
  for (const ScenarioRecord& r : manifest.scenarios)
    if (r.status == "error" || r.status == "xpass") return kExitFailed;
  return kExitOk;
}

void print_banner(py::handle backend, py::handle environment) {
  std::fprintf(stderr, "parity %s | Python %s | NumPy %s | backend %s %s (%s)\n", PARITY_VERSION,
               environment["python"].cast<std::string>().c_str(), environment["numpy"].cast<std::string>().c_str(),
               backend.attr("name").cast<std::string>().c_str(), backend.attr("version").cast<std::string>().c_str(),
               backend.attr("role").cast<std::string>().c_str());
}

}  // namespace

int run_scenarios(const RunOptions& options) {
  start_interpreter();
  Manifest manifest;
  manifest.dir = options.out;
  py::object backend;
  try {
    backend = py::module_::import("parity.backend").attr("load")(backend_name(options), options.role);
  } catch (py::error_already_set& e) {
    if (!is_python_error(e, "parity.backend", "BackendError")) throw;
    std::fprintf(stderr, "parity run: %s\n", py::str(e.value()).cast<std::string>().c_str());
    return kExitUsage;
  }
  py::object environment = py::module_::import("parity.discovery").attr("environment_info")();
  print_banner(backend, environment);
  manifest.backend = to_json(backend.attr("info")());
  manifest.environment = to_json(environment);
  manifest.run = {{"parity", PARITY_VERSION},
                  {"paths", options.selection.paths},
                  {"only", options.selection.only},
                  {"keyword", options.selection.keyword},
                  {"started", utc_timestamp()}};
  try {
    backend.attr("install")();
  } catch (py::error_already_set& e) {
    std::fprintf(stderr, "parity run: backend %s: install() failed: %s\n", backend_name(options).c_str(), e.what());
    return kExitUsage;
  }
  try {
    return run_loaded(options, manifest, backend);
  } catch (py::error_already_set& e) {
    if (!is_python_error(e, "builtins", "KeyboardInterrupt") && !is_python_error(e, "builtins", "FileNotFoundError"))
      throw;
    const bool interrupted = is_python_error(e, "builtins", "KeyboardInterrupt");
    std::fprintf(stderr, "parity run: %s\n", interrupted ? "interrupted; the manifest lists what finished" : e.what());
    if (interrupted) write_manifest(manifest);
    return interrupted ? kExitInterrupted : kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "parity run: %s\n", e.what());
    return kExitUsage;
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "parity run: cannot create the results directory: %s\n", e.what());
    return kExitUsage;
  }
}

int list_scenarios(const Selection& selection, bool as_json) {
  start_interpreter();
  py::object found;
  try {
    found = discover(selection);
  } catch (py::error_already_set& e) {
    if (!is_python_error(e, "builtins", "FileNotFoundError")) throw;
    std::fprintf(stderr, "parity list: %s\n", py::str(e.value()).cast<std::string>().c_str());
    return kExitUsage;
  }
  json listing = json::array();
  for (py::handle s : found.attr("scenarios"))
    listing.push_back({{"id", s.attr("id").cast<std::string>()}, {"meta", to_json(s.attr("metadata")())}});
  for (py::handle e : found.attr("errors"))
    listing.push_back({{"id", e.attr("id").cast<std::string>()}, {"error", to_json(e.attr("error"))}});
  for (const json& entry : listing) {
    if (as_json) continue;
    if (entry.contains("error"))
      std::printf("%s  [module error: %s: %s]\n", entry["id"].get<std::string>().c_str(),
                  entry["error"].value("type", "").c_str(), entry["error"].value("message", "").c_str());
    else
      std::printf("%s\n", entry["id"].get<std::string>().c_str());
  }
  if (as_json) std::printf("%s\n", listing.dump(1, ' ', false, json::error_handler_t::replace).c_str());
  return found.attr("errors").cast<py::list>().size() > 0 ? kExitFailed : kExitOk;
}

}  // namespace parity
