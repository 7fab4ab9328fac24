// The worker side of `parity run` (see worker.h): one interpreter, the backend, scenarios run one at a time.
#include "worker.h"

#include <fcntl.h>
#include <poll.h>
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "atomic_file.h"
#include "codec.h"
#include "config.h"
#include "exit_keep.h"
#include "fork_server.h"
#include "interpreter.h"
#include "json_input.h"
#include "json_output.h"
#include "manifest.h"
#include "probes.h"
#include "process.h"
#include "protocol.h"
#include "text.h"

namespace py = pybind11;
using json = nlohmann::json;

namespace parity {
namespace {

// A {str: str} dict (the fidelity digests and their texts, the library versions: every scenario) read straight into
// JSON; false, with `out` unusable, for anything else or a string that is not valid UTF-8 (a lone surrogate).
bool flat_strings(py::handle obj, json& out) {
  if (!PyDict_CheckExact(obj.ptr())) return false;
  out = json::object();
  PyObject *key = nullptr, *value = nullptr;
  for (Py_ssize_t pos = 0; PyDict_Next(obj.ptr(), &pos, &key, &value);) {
    Py_ssize_t key_size = 0, value_size = 0;
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &key_size) : nullptr;
    const char* v = k && PyUnicode_Check(value) ? PyUnicode_AsUTF8AndSize(value, &value_size) : nullptr;
    if (!v) {
      PyErr_Clear();
      return false;
    }
    out[std::string(k, key_size)] = std::string(v, value_size);
  }
  return true;
}

// Python's own json module converts the metadata dicts; they hold only JSON-able values by construction. A flat dict
// of strings skips the text in between (the same JSON: json_text only replaces lone surrogates, which it refuses).
json to_json(py::handle obj) {
  if (json flat; flat_strings(obj, flat)) return flat;
  static py::object text = py::module_::import("parity._scenario").attr("json_text");
  return parse_json(text(obj).cast<std::string>(), "scenario metadata");
}

bool is_python_error(const py::error_already_set& e, const char* module, const char* name) {
  return e.matches(py::module_::import(module).attr(name));
}

// `backend` runs the pytest suites among the paths (parity.pytest_suite); none when only listing.
py::object discover(const Selection& selection, py::object on_import = py::none(), py::dict crashed = py::dict(),
                    py::object backend = py::none()) {
  py::module_ discovery = py::module_::import("parity.discovery");
  py::object found = discovery.attr("discover")(selection.paths, on_import, crashed, backend);
  return discovery.attr("select")(found, selection.only, selection.keyword, selection.paths);
}

// The exit code of a selection discovery refused (a missing path, or discovery.SelectionError: an empty selection
// is pytest's "no tests collected", the rest usage errors); kExitOk for any other Python error.
int refused_selection(py::error_already_set& e) {
  if (is_python_error(e, "parity.discovery", "SelectionError"))
    return e.value().attr("no_tests").cast<bool>() ? kExitNoTests : kExitUsage;
  return is_python_error(e, "builtins", "FileNotFoundError") ? kExitUsage : kExitOk;
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
  if (!xfail.contains(role) || record.status == "skip" || record.status == "crash") return;
  const std::string reason = xfail.at(role).get<std::string>();
  if (record.status == "error") {
    record.status = "xfail";
    record.error["reason"] = reason;
  } else {
    record.status = "xpass";
    record.error = error_record("XPASS", "the " + role + " pass was expected to fail (" + reason + ") but passed");
  }
}

// What compare needs to check parity's codec (leaf digests) and the ecosystem's pickle (a protocol 5 stream whose
// array buffers reference the result file's arrays), that stream appended to the result file record.file, which
// record_outputs has just written and holds open (`file`): one file a scenario and side, the second's creation saved,
// and it is not opened again by name (issue #20, target 2).
void record_probes(ScenarioRecord& record, py::handle outputs, const AtomicFile& file, bool pickle_probe) {
  const py::module_ probe = probe_module();  // imported once a process: an import looks the module up again each time
  py::dict shown, arrays;  // arrays: the outputs' arrays and whole digests, which the pickle references, not copies
  record.fidelity = to_json(probe.attr("digests")(outputs, "outputs", shown, arrays));
  record.fidelity_values = to_json(shown);
  if (!pickle_probe) return;
  const py::tuple appended = probe.attr("append_pickle")(outputs, file.fd(), file.written(), arrays);
  if (!appended[1].is_none()) {
    record.pickle_error = to_json(appended[1]);
    return;
  }
  record.pickle_offset = appended[0].cast<std::uint64_t>();
}

// Writes what an ok scenario returned, and its probes; a result parity cannot write is that scenario's error.
void record_outputs(ScenarioRecord& record, py::handle outputs, const std::filesystem::path& out, bool pickle_probe) {
  const std::string file = result_file_for(record.id);
  try {
    // Named in the manifest only once this record is done; the pickle goes after the codec's data, the file open.
    write_result(out / file, outputs, Publish::in_place, [&](const AtomicFile& written) {
      try {
        record_probes(record, outputs, written, pickle_probe);
      } catch (py::error_already_set& e) {  // parity's own failure: this scenario reports it, the run goes on
        record.status = "error", record.error = error_record("ProbeError", e.what());
      }
    });
    record.file = file;
  } catch (const UnsupportedOutput& e) {
    record.status = "error", record.error = error_record("SerializeError", e.what());
  } catch (const std::runtime_error& e) {
    record.status = "error", record.error = error_record("ResultWriteError", e.what());
  }
}

// A pytest test's teardown (PytestScenario.finish; native scenarios have none) runs once its result is written: a
// fixture's teardown may change the object the test returned. A failing teardown can replace the record's outcome.
void finish(py::handle scenario, ScenarioRecord& record) {
  if (!py::hasattr(scenario, "finish")) return;
  const py::object replaced = scenario.attr("finish")(record.status);
  if (replaced.is_none()) return;
  record.status = replaced["status"].cast<std::string>();
  record.error = to_json(replaced["error"]);
}

ScenarioRecord run_one(py::handle scenario, py::handle backend, const std::filesystem::path& out,
                       const std::string& role, bool pickle_probe) {
  ScenarioRecord record;
  record.id = scenario.attr("id").cast<std::string>();
  // Of the declaration only its xfail is read here (the supervisor has the rest from the plan): one conversion to
  // JSON fewer per scenario.
  const py::dict declared = scenario.attr("metadata")();
  record.meta = json::object();
  if (declared.contains("xfail") && py::len(declared["xfail"]) > 0) record.meta["xfail"] = to_json(declared["xfail"]);
  const auto start = std::chrono::steady_clock::now();
  // What it prints still reaches this worker's stdout/stderr, and is kept in its record for the reports too.
  static py::object call = py::module_::import("parity.capture").attr("call_capturing");
  py::dict outcome = call(scenario, backend);
  record.status = outcome["status"].cast<std::string>();
  if (outcome.contains("output")) record.output = to_json(outcome["output"]);
  if (record.status != "ok") record.error = to_json(outcome["error"]);
  try {
    if (record.status == "ok") record_outputs(record, outcome["outputs"], out, pickle_probe);
  } catch (...) {  // whatever ends this worker, the test's fixtures are torn down first
    finish(scenario, record);
    throw;
  }
  finish(scenario, record);
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

void finish_pytest_sessions() {
  try {
    py::module_::import("parity.pytest_suite").attr("finish_all")();
  } catch (py::error_already_set& e) {  // every result is already written; the teardown's failure is only printed
    std::fprintf(stderr, "parity: tearing down pytest fixtures failed: %s\n", e.what());
  }
}

// Replies go to their own descriptor so that whatever a scenario prints cannot corrupt them.
void flush_python_output() {
  static py::object sys = py::module_::import("sys");
  for (const char* stream : {"stdout", "stderr"}) sys.attr(stream).attr("flush")();
}

// A reply's text without its newline: the `event` (protocol.h) with its `fields`.
std::string reply_text(const char* event, json& fields) {
  fields[protocol::kEvent] = event;
  return dump_json(fields, -1);
}

void send_line(std::FILE* channel, const std::string& line, bool flush = true) {
  std::fwrite(line.data(), 1, line.size(), channel);
  if (flush) std::fflush(channel);
}

// One reply line: the `event` with its `fields`. Unflushed, it leaves with the next reply, in one write.
void reply(std::FILE* channel, const char* event, json fields = json::object(), bool flush = true) {
  send_line(channel, reply_text(event, fields) + "\n", flush);
}

// The supervisor's command lines (protocol.h). Unlike getline on a FILE, it can tell whether the next whole line
// has arrived without waiting for it: the supervisor queues a scenario ahead (runner.cc, Supervisor::queue_depth), and
// the worker then announces it in the same write as the last one's done reply, one wake-up of the supervisor instead of
// two.
class CommandLines {
 public:
  explicit CommandLines(int fd) : fd_(fd) {}
  /// The next line, without its newline; nullopt at the end of the commands.
  std::optional<std::string> next() {
    while (!has_line())
      if (!fill(true)) {
        if (buffer_.empty()) return std::nullopt;
        return std::exchange(buffer_, std::string());  // a last line without its newline, as getline gives it
      }
    const std::size_t end = buffer_.find('\n');
    std::string line = buffer_.substr(0, end);
    buffer_.erase(0, end + 1);
    return line;
  }
  /// Whether the next whole line is here already; reads what has arrived, never waits.
  bool waiting() {
    while (!has_line())
      if (!fill(false)) return false;
    return true;
  }

 private:
  bool has_line() const { return buffer_.find('\n') != std::string::npos; }
  // Appends what can be read (waiting for it with `wait`); false at the end, on an error, or with nothing there.
  bool fill(bool wait) {
    pollfd readable{fd_, POLLIN, 0};
    if (!wait && ::poll(&readable, 1, 0) <= 0) return false;
    char chunk[4096];
    ssize_t got;
    do got = ::read(fd_, chunk, sizeof chunk);
    while (got < 0 && errno == EINTR);
    if (got <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(got));
    return true;
  }
  int fd_;
  std::string buffer_;
};

// What precedes a scenario: what the last one printed through Python is flushed, then the restart line (its output
// tail starts there), then, flushing the channel, the started reply with any reply still unflushed.
void announce_next(std::FILE* channel) {
  flush_python_output();
  // One write of the whole line: printf wrote the text and its newline in two (stdout is line buffered here).
  static const std::string line = std::string(protocol::kOutputRestart) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  reply(channel, protocol::kStarted);
}

// A worker's or the fork server's orderly end (kExitOk): what it discovered is left to the process's end rather than
// freed object by object, which in a forked worker writes to, and so copies, each page it shares with the fork server
// (5,000 scenarios: ~5-10 ms a process on the run's last stretch, which waits for its workers' ends; bench/README,
// issue #20 target 3).
int keep_to_the_end(std::initializer_list<py::object> objects) {
  for (const py::object& o : objects) keep_until_exit(o);
  return kExitOk;
}

int fatal(std::FILE* channel, const std::string& message, int code = kExitUsage) {
  reply(channel, protocol::kFatal,
        {{protocol::field::kMessage, message}, {protocol::field::kNoTests, code == kExitNoTests}});
  return code;
}

// Everything before the plan: backend, install(), this worker's part of the discovery (discovery.discover_part: every
// module when it is the only worker, or the fork server). A fatal problem is replied.
int prepare(WorkerOptions& options, std::FILE* channel, py::object& backend, py::object& part) {
  try {
    backend = py::module_::import("parity.backend").attr("load")(options.backend, options.role);
  } catch (py::error_already_set& e) {
    if (!is_python_error(e, "parity.backend", "BackendError")) throw;
    return fatal(channel, py::str(e.value()).cast<std::string>());
  }
  try {
    backend.attr("install")();
  } catch (py::error_already_set& e) {
    return fatal(channel, "backend " + options.backend + ": install() failed: " + e.what());
  }
  const int workers = options.parts;
  if (options.fork_server) {
    // The supervisor starts the other workers once it knows whether this one forks them (runner.cc).
    options.fork_server = backend.attr("fork_safe").cast<bool>();
    reply(channel, protocol::kLoaded, {{protocol::field::kForkable, options.fork_server}});
    if (options.fork_server) options.parts = 1;  // its workers share what it imports
  }
  py::dict crashed;
  for (const std::string& entry : options.crashed_modules) {
    const std::size_t eq = entry.rfind('=');
    crashed[py::str(entry.substr(0, eq))] = py::str(eq == std::string::npos ? "" : entry.substr(eq + 1));
  }
  py::cpp_function on_import([channel](const std::string& file) {
    reply(channel, protocol::kImporting, {{protocol::field::kFile, file}});
  });
  try {
    // A fork server freezes what it imports as it goes (discovery.discover_part): its forks would freeze it anyway.
    part = py::module_::import("parity.discovery")
               .attr("discover_part")(options.selection.paths, options.part, options.parts, on_import, crashed, backend,
                                      py::arg("freeze") = options.fork_server);
  } catch (py::error_already_set& e) {
    const int code = refused_selection(e);
    if (code == kExitOk) throw;
    return fatal(channel, py::str(e.value()).cast<std::string>(), code);
  }
  // A fork server's workers each take a contiguous run of the modules (discovery.merge routes by it): a module's
  // scenarios, and mostly its neighbours', then run in one worker, and what they start or import lazily (joblib's
  // process pool) is started in that worker only.
  part.attr("parts") = workers;
  reply(channel, protocol::kImported);  // a death from now on is no scenario module's
  return kExitOk;
}

// The other parts of the discovery, from the supervisor's merge command (`parity run -j N`, N > 1); none when alone.
py::object other_parts(const WorkerOptions& options, CommandLines& commands) {
  if (options.parts <= 1) return py::list();
  const std::optional<std::string> line = commands.next();
  if (!line) throw std::runtime_error("the supervisor sent no merge command");
  return py::module_::import("json").attr("loads")(*line)[protocol::kMerge];
}

// The plan (part 0 only): the parts merged, the selection made, the results directory created (only once all of
// that worked); then the ready reply, or a fatal one.
int plan(const WorkerOptions& options, std::FILE* channel, CommandLines& commands, py::handle backend,
         py::handle part) {
  py::module_ discovery = py::module_::import("parity.discovery");
  py::object found;
  try {
    found = discovery.attr("select")(discovery.attr("merge")(part, other_parts(options, commands)),
                                     options.selection.only, options.selection.keyword, options.selection.paths);
  } catch (py::error_already_set& e) {
    const int code = refused_selection(e);
    if (code == kExitOk) throw;
    return fatal(channel, py::str(e.value()).cast<std::string>(), code);
  }
  try {
    std::filesystem::create_directories(options.out / kResultsSubdir);
  } catch (const std::filesystem::filesystem_error& e) {
    return fatal(channel, std::string("cannot create the results directory: ") + e.what());
  }
  using namespace protocol::field;
  json errors = json::array();
  for (py::handle e : found.attr("errors")) errors.push_back(to_json(module_error(e)));
  json fields = {{kBackend, to_json(backend.attr("info")())},
                 {kEnvironment, to_json(discovery.attr("environment_info")())},
                 {kErrors, errors}};
  // The plan's entries go out as Python's JSON text (discovery.plan_text_of), spliced in: the supervisor parses and
  // checks them as any reply, and the serial part of the run is spared a parse and a dump of megabytes.
  const py::object text = discovery.attr("plan_text_of")(found);
  if (text.is_none()) {
    fields[kScenarios] = to_json(discovery.attr("plan_entries")(found));
    reply(channel, protocol::kReady, std::move(fields));
    return kExitOk;
  }
  std::string line = reply_text(protocol::kReady, fields);
  line.pop_back();  // its closing brace
  send_line(channel, line + ",\"" + kScenarios + "\":" + text.cast<std::string>() + "}\n");
  return kExitOk;
}

// The scenario `id` of module `file` ("" for pytest's): one this worker imported, or else its module, imported now.
py::object scenario_to_run(const WorkerOptions& options, py::dict& runnable, const std::string& file,
                           const std::string& id) {
  const py::tuple key = py::make_tuple(file, id);
  if (!runnable.contains(key) && !file.empty())
    runnable.attr("update")(
        py::module_::import("parity.discovery").attr("import_for_run")(options.selection.paths, file));
  if (!runnable.contains(key)) throw std::runtime_error("no scenario '" + id + "' in '" + file + "' here");
  return runnable[key];
}

// A scenario this worker could not even find (its module failed to import here, as it had not in its own part).
ScenarioRecord unrunnable(const std::string& id, const std::string& why) {
  ScenarioRecord record;
  record.id = id;
  record.status = "error";
  record.error = error_record("ImportError", why);
  return record;
}

}  // namespace

int worker_main(const WorkerOptions& given) {
  end_group_when_supervisor_gone();  // first: a fork of this process (fork_server.h) inherits it
  WorkerOptions options = given;     // a fork server of a fork-safe backend imports every part (prepare)
  std::FILE* channel = ::fdopen(protocol::kReplyFd, "w");
  CommandLines commands(protocol::kCommandFd);
  // Not inherited by what a backend starts (loky's workers): the supervisor sees this process's end as theirs.
  for (int fd : {protocol::kReplyFd, protocol::kCommandFd}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (!channel || ::fcntl(protocol::kCommandFd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "parity _worker: no command and reply descriptors (%d, %d): only 'parity run' starts workers\n",
                 protocol::kCommandFd, protocol::kReplyFd);
    return kExitUsage;
  }
  // What a scenario prints reaches the supervisor line by line, so a crash report shows its last words.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  start_interpreter();
  py::exec("import sys\nfor s in (sys.stdout, sys.stderr): s.reconfigure(line_buffering=True)");
  py::object backend, part;
  if (const int code = prepare(options, channel, backend, part); code != kExitOk) return code;
  // Another part's worker tells what it found; part 0 merges them all into the plan (a replacement does it again).
  if (options.parts > 1)
    reply(channel, protocol::kFound,
          {{protocol::field::kPart,
            options.part == 0 ? json::object()
                              : to_json(py::module_::import("parity.discovery").attr("part_payload")(part))}});
  if (options.part == 0)
    if (const int code = plan(options, channel, commands, backend, part); code != kExitOk) return code;
  // The fork server's end; a worker it forked goes on here.
  if (options.fork_server && !serve_forks()) return keep_to_the_end({part, backend});
  py::dict runnable = py::module_::import("parity.discovery").attr("runnable")(part).cast<py::dict>();
  const py::object library_versions = py::module_::import("parity.discovery").attr("library_versions");
  py::object sent_libraries = py::none();
  const std::string role = backend.attr("role").cast<std::string>();
  bool announced = false;  // the started reply of the command read next went out with the last done
  while (const std::optional<std::string> line = commands.next()) {
    const json command = parse_json(*line, "command");
    const std::string id = command.at(protocol::kRun).get<std::string>();
    const std::string file = command.value(protocol::field::kFile, "");
    // The supervisor queues the next scenario ahead: this tells it which one a death from now on belongs to, and
    // the restart line which output does.
    if (!announced) announce_next(channel);
    py::object scenario;
    std::string missing;
    try {
      scenario = scenario_to_run(options, runnable, file, id);
    } catch (py::error_already_set& e) {
      missing = e.what();
    } catch (const std::runtime_error& e) {
      missing = e.what();
    }
    ScenarioRecord record =
        missing.empty() ? run_one(scenario, backend, options.out, role, options.pickle_probe) : unrunnable(id, missing);
    // After a MemoryError (of any kind: NumPy's _ArrayMemoryError too) nothing in this process can be trusted: the
    // scenario's call says crash, and a fresh worker goes on.
    const bool exhausted = record.status == "crash";
    // The declaration is the plan's (the supervisor puts it back): not sent again with every record.
    json done = {{protocol::field::kRecord, to_json(record)}, {protocol::field::kRetiring, exhausted}};
    done[protocol::field::kRecord].erase("meta");
    // What the run has imported so far, sent when it grew: the supervisor keeps the union (environment.libraries).
    // Compared as Python objects, converted to JSON only when sent.
    py::object libraries = library_versions(backend.attr("libraries"));
    if (!libraries.equal(sent_libraries)) {
      done[protocol::field::kLibraries] = to_json(libraries);
      sent_libraries = std::move(libraries);
    }
    // With the next command here already, its started reply leaves with this done, in one write.
    announced = !exhausted && commands.waiting();
    reply(channel, protocol::kDone, std::move(done), !announced);
    if (announced) announce_next(channel);
    if (exhausted) break;
  }
  // Module and session fixtures of pytest suites are torn down as pytest would at the end of its session.
  finish_pytest_sessions();
  // The loky pools' workers are killed now, not joined by the exit handlers below (which take the executors' state
  // apart: a shutdown after them hangs); their resource trackers outlive this process's group kill (process.cc) and
  // remove what the pools left in /dev/shm (parity._scenario.stop_process_pools).
  py::module_::import("parity._scenario").attr("stop_process_pools")();
  // parity never finalizes its interpreter (NumPy cannot be loaded twice), so Python's exit handlers would never
  // run: joblib's would leave its memmapping folders in /dev/shm behind, run after run (the soak test saw them).
  py::module_::import("atexit").attr("_run_exitfuncs")();
  return keep_to_the_end({part, runnable, backend});
}

namespace {

// Runs `step` with Python's sys.stdout on stderr: `list` prints its listing (which `list --json` readers parse) on
// stdout, and what a module prints while it is imported or torn down must not land in it.
template <class Step>
void with_stdout_on_stderr(Step&& step) {
  py::module_ sys = py::module_::import("sys");
  py::object saved = sys.attr("stdout");
  sys.attr("stdout") = sys.attr("stderr");
  try {
    step();
  } catch (...) {
    sys.attr("stdout") = saved;
    throw;
  }
  sys.attr("stdout") = saved;
}

}  // namespace

int list_scenarios(const Selection& selection, bool as_json) {
  start_interpreter();
  // SIGTERM as Ctrl-C: a KeyboardInterrupt in the module importing, which main ends with exit 130, as run's.
  const py::module_ signal = py::module_::import("signal");
  signal.attr("signal")(signal.attr("SIGTERM"), signal.attr("default_int_handler"));
  py::object found;
  try {
    with_stdout_on_stderr([&] { found = discover(selection); });
  } catch (py::error_already_set& e) {
    const int code = refused_selection(e);
    if (code == kExitOk) throw;
    std::fprintf(stderr, "parity list: %s\n", printable(py::str(e.value()).cast<std::string>()).c_str());
    return code;
  }
  json listing = json::array();
  for (py::handle s : found.attr("scenarios"))
    listing.push_back({{"id", s.attr("id").cast<std::string>()}, {"meta", to_json(s.attr("metadata")())}});
  for (py::handle e : found.attr("errors"))
    listing.push_back({{"id", e.attr("id").cast<std::string>()}, {"error", to_json(e.attr("error"))}});
  for (const json& entry : listing) {
    if (as_json) continue;
    // Ids and messages are the scenario modules' own text: escaped, so that `parity list` cannot drive a terminal.
    const std::string id = printable(entry["id"].get<std::string>());
    if (entry.contains("error"))
      std::printf("%s  [module error: %s: %s]\n", id.c_str(), printable(entry["error"].value("type", "")).c_str(),
                  printable(entry["error"].value("message", "")).c_str());
    else
      std::printf("%s\n", id.c_str());
  }
  if (as_json) std::printf("%s\n", dump_json(listing, 1).c_str());
  std::fflush(stdout);
  with_stdout_on_stderr(finish_pytest_sessions);
  return found.attr("errors").cast<py::list>().size() > 0 ? kExitFailed : kExitOk;
}

}  // namespace parity
