// `parity run`: supervises worker processes (worker.h) that run the scenarios, and writes each outcome as soon
// as it is known. A scenario that kills its worker (a segfault, abort, os._exit, the memory limit), outlives
// its timeout or breaks the protocol (protocol.h: a reply it forged, its reply descriptor closed) is recorded as
// crash or timeout, the worker is replaced, and the run goes on. Nothing here waits on a worker without a deadline.
#include "runner.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/file.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <system_error>

#include "config.h"
#include "json_input.h"
#include "json_output.h"
#include "manifest.h"
#include "process.h"
#include "progress.h"
#include "protocol.h"
#include "safe_file.h"
#include "temp_directory.h"
#include "text.h"

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace parity {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
// SIGINT and SIGTERM end the run cleanly (workers are in their own process groups and never see a terminal's ^C).
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

volatile std::sig_atomic_t g_more_workers = 0;  ///< SIGUSR1 came: RunOptions::workers_on_signal more are wanted
extern "C" void on_more_workers_signal(int) { g_more_workers = 1; }

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The worker's command line (protocol.h).
std::vector<std::string> worker_argv(const RunOptions& options, const std::string& backend) {
  namespace flag = protocol::flag;
  // Absolute: a scenario or test that changes the worker's working directory must not move where results go.
  std::vector<std::string> argv = {options.program, protocol::kWorkerCommand,
                                   flag::kBackend,  backend,
                                   flag::kOut,      std::filesystem::absolute(options.out).string()};
  if (!options.role.empty()) argv.insert(argv.end(), {flag::kRole, options.role});
  for (const std::string& p : options.selection.paths) argv.insert(argv.end(), {flag::kScenarios, p});
  for (const std::string& id : options.selection.only) argv.insert(argv.end(), {flag::kOnly, id});
  if (!options.selection.keyword.empty()) argv.insert(argv.end(), {flag::kKeyword, options.selection.keyword});
  if (!options.pickle_probe) argv.push_back(flag::kNoPickleProbe);
  return argv;
}

// A run-level failure: the backend or the selection is unusable, or a worker cannot start. Exit 2, or 5 for a
// selection of nothing.
struct RunAbort {
  std::string message;
  int code = kExitUsage;
};

// Where a worker is in its life, as its replies (protocol.h) and the supervisor's commands move it. A worker that
// ends (dies, is stopped, or retires) is replaced by a new one, which starts again at kStarting.
enum class WorkerState {
  kStarting,  ///< importing the scenario modules; not ready, so it is sent nothing
  kIdle,      ///< ready, and no scenario sent to it is unfinished
  kSent,      ///< the first of its tasks waits in its command pipe: sent, not yet begun
  kRunning,   ///< it said it began the first of its tasks
  kRetiring,  ///< it said it exits after its last reply (a MemoryError left it untrustworthy); it is sent nothing
};

// One worker process and what the supervisor knows of it. The transitions between states are its member functions.
struct Worker {
  std::size_t slot = 0;  ///< its place among the run's workers: which part of the discovery it imports
  std::unique_ptr<ChildProcess> process;
  WorkerState state = WorkerState::kStarting;
  bool found = false;       ///< kStarting: it said what its part found (more than one worker)
  bool merge_sent = false;  ///< slot 0: it was sent the other parts' findings, to make the plan
  std::string importing;    ///< kStarting: the scenario module it said it was importing, until it said all are imported
  /// Indexes into Supervisor::plan_ of the scenarios sent to it: it runs the first, the others wait in its command
  /// pipe, so that it never idles waiting for the supervisor between two scenarios (Supervisor::queue_depth). Empty
  /// unless kSent or kRunning.
  std::deque<std::size_t> tasks;
  Clock::time_point started;  ///< when the first of `tasks` started (its predecessor's reply, or its dispatch)

  bool ready() const { return state == WorkerState::kIdle || has_task(); }
  bool has_task() const { return state == WorkerState::kSent || state == WorkerState::kRunning; }

  /// A new process in this one's place: one importing the scenario modules, or (`ready`) a fork of the fork server.
  void restart(std::unique_ptr<ChildProcess> started, bool ready) {
    process = std::move(started);
    state = ready ? WorkerState::kIdle : WorkerState::kStarting;
    found = merge_sent = false;
    importing.clear();
    tasks.clear();
  }
  /// It said it is ready: it may be sent scenarios.
  void become_ready() { state = WorkerState::kIdle; }
  /// Queues `index` (sent to its command pipe); returns whether it is the one it runs next, whose clock starts now.
  bool queue(std::size_t index) {
    tasks.push_back(index);
    if (state != WorkerState::kIdle) return false;
    state = WorkerState::kSent;
    started = Clock::now();
    return true;
  }
  /// Takes back the last scenario queued (its command could not be sent); one other is still queued.
  std::size_t unqueue() {
    const std::size_t index = tasks.back();
    tasks.pop_back();
    return index;
  }
  /// It said it began the first of its tasks; a worker that had none waiting could not have sent that.
  void begin() {
    if (state != WorkerState::kSent) throw protocol::ProtocolError("a 'started' event with no scenario waiting");
    state = WorkerState::kRunning;
    started = Clock::now();
  }
  /// It said the first of its tasks (kRunning) is done: returns that one. The next one, if any, starts its clock now;
  /// after a reply saying it retires, it runs nothing more (the supervisor takes the rest back).
  std::size_t finish(bool retiring) {
    const std::size_t index = tasks.front();
    tasks.pop_front();
    state = retiring ? WorkerState::kRetiring : tasks.empty() ? WorkerState::kIdle : WorkerState::kSent;
    started = Clock::now();
    return index;
  }
  /// The scenarios sent to it that it will never begin, last sent first: all of them when it retires, else all but
  /// the first (which it runs or has died running).
  std::vector<std::size_t> take_waiting() {
    std::vector<std::size_t> waiting;
    while (tasks.size() > (state == WorkerState::kRetiring ? 0 : 1)) waiting.push_back(unqueue());
    return waiting;
  }
};

// How the workers start: the first offers to be the fork server (protocol::flag::kForkServer) and says, once it has
// loaded the backend, whether it will be.
enum class Launch {
  kAsking,  ///< it has not said yet: only it runs
  kFork,    ///< it is: it imports every scenario module once, then forks each worker, a replacement too (fork_server.h)
  kExec,    ///< the backend is not fork-safe (FORK_SAFE = False): each worker is a process of its own importing its
            ///< part of the modules (worker.h), and it is the first of them
};

// A fork takes milliseconds; this bounds the wait for a fork server that hangs (a loaded machine may be slow).
constexpr double kForkSeconds = 60;

// Scenarios sent ahead to a worker: two, so the next is waiting when one ends. A round trip through the supervisor
// per scenario had left the workers idle for a fifth of a batch run of small scenarios (py-spy).
constexpr std::size_t kQueued = 2;

// While scenarios end faster than this, the supervisor takes their replies in batches: it sleeps this long instead
// of waiting on the reply pipes, so a worker's reply finds no one to wake. Waking the supervisor on the other vCPU at
// every reply had cost a worker ~20 us of kernel time a scenario and the supervisor a context switch (perf, 5,000
// small scenarios: ~80 us of CPU a scenario in all; bench/README, issue #20 target 2). Timeouts and crashes are seen
// at most this much later.
constexpr double kNapSeconds = 0.001;

// The most scenarios sent ahead to a worker of short scenarios: enough to keep it busy through a nap, few enough that
// the run's last stretch leaves no worker idle for long while another works through what it was sent.
constexpr std::size_t kQueuedShort = 8;

// Bytes of output at one look below which a busy worker's output waits for its next reply (poll_workers): a restart
// line and a few printed lines; a worker's output pipe holds 1 MiB where the system allows (kOutputPipeBytes).
constexpr std::size_t kQuietOutput = 4096;

// Scenarios not yet sent below which more workers are not worth a fork (add_workers): one for the new worker while
// the others run what they were sent.
constexpr std::size_t kUnsentToGrow = 2;

// One scenario of the plan (what the workers discovered, merged by the first) and its record, once it has one.
struct Planned {
  std::string id;
  json meta;  ///< its declaration; null where meta_text holds it
  /// Its declaration's canonical text (canonical_json.h) when the ready reply was read without a document
  /// (protocol::read_plain_ready): pasted into its manifest entry, parsed only where a record needs it (lose).
  std::string meta_text;
  json timeout;      ///< its declaration's "timeout" (check_limits), null when it has none
  std::string file;  ///< its module, sent with it: a worker of another part imports it then ("" for pytest's)
  int part = 0;      ///< the part whose worker imported it; -1: a pytest suite's, which only slot 0 collects
  /// A record whose reply was pasted (take_plain_done) holds null JSON fields where `entry` holds what the worker sent.
  std::optional<ScenarioRecord> result;
  std::string entry;  ///< the result's manifest entry (manifest_entry_text) once a write needed it or its reply was
                      ///< pasted; "" before

  /// Its declaration, for a record: `meta`, or parsed from meta_text (canonical: it parses).
  json declaration() const { return meta_text.empty() ? meta : parse_json(meta_text, ""); }
  /// The same, `meta` moved out (it is not read again).
  json take_declaration() { return meta_text.empty() ? std::move(meta) : parse_json(meta_text, ""); }
};

// The scenarios the workers discovered, in order, and the run's results so far.
class Supervisor {
 public:
  Supervisor(const RunOptions& options, Manifest& manifest) : options_(options), manifest_(manifest) {}

  /// Starts the workers and waits for the first to report what it found; throws RunAbort.
  void start(const std::string& backend);
  /// Takes the finished records of an earlier, interrupted run into the results (--resume): those of scenarios
  /// still selected whose result files are there. Returns how many; throws RunAbort for another backend's run.
  std::size_t adopt(const Manifest& previous);
  /// Runs every scenario; returns false when a stop signal ended it early. Having run them all, it tells the workers
  /// to end, and wait_ends waits for them.
  bool run(Progress& progress);
  void wait_ends();
  std::size_t total() const { return module_errors_.size() + plan_.size(); }
  /// Every selected id, module errors first, in the order an unsharded run's manifest lists them.
  std::vector<std::string> selected() const;
  /// Narrows the run to `ids` (a shard's): the other scenarios and module errors are neither run nor recorded.
  void keep(const std::vector<std::string>& ids);
  /// The finished records in discovery order (module errors first), as the manifest lists them.
  std::vector<ScenarioRecord> finished() const;
  /// How many records the manifest lists, and whether one of them failed the run (run_failed).
  std::size_t finished_count() const;
  bool any_failed() const;
  /// Writes the manifest with the finished records. Each record is serialized once, at the first write that lists
  /// it: a rewrite of thousands of records costs their concatenation, not their conversion.
  void write_finished();

 private:
  void spawn(Worker& w);
  void add_workers();
  void take_launch(Worker& w, bool forkable);
  void take_plan(json& ready);
  void take_plain_plan(protocol::PlainReady& ready);
  void take_head(json& backend, json& environment, const json& errors);
  void take_part(Worker& w, const json& found);
  void send_merge();
  void make_queues();
  std::deque<std::size_t>& queue_of(std::size_t index);
  void put_back(std::size_t index) { queue_of(index).push_front(index); }
  void handle_line(Worker& w, const std::string& line, Progress* progress);
  void handle_done(Worker& w, json& message, Progress* progress);
  bool take_plain_done(Worker& w, const protocol::PlainDone& done, Progress* progress);
  void finish_done(Worker& w, ScenarioRecord&& record, bool retiring, const json& libraries, Progress* progress);
  /// Records {name: version} of libraries a run imported (environment.libraries), adding to what is there.
  void add_libraries(const json& libraries);
  ScenarioRecord checked_record(std::size_t index, json&& entry);
  void misbehaved(Worker& w, const std::string& why, Progress* progress);
  void poll_worker(Worker& w, Progress* progress);
  void lose(Worker& w, const std::string& status, const std::string& type, const std::string& message,
            Progress& progress);
  void stop(Worker& w, const std::string& status, const std::string& type, const std::string& message,
            Progress& progress);
  void check_limits(Worker& w, Progress& progress);
  void dispatch(Progress& progress);
  void give_back(Worker& w);
  std::optional<std::size_t> take(std::size_t slot);
  void poll_workers(Progress* progress);
  std::size_t queue_depth() const;
  bool may_nap() const;
  std::set<pid_t> worker_pids() const;
  void save();

  const RunOptions& options_;
  Manifest& manifest_;
  std::vector<std::string> argv_;
  std::vector<Worker> workers_;
  Launch launch_ = Launch::kAsking;
  std::unique_ptr<ChildProcess> server_;  ///< the fork server once it is ready (kFork); before, workers_[0]'s process
  std::set<std::string> crashed_modules_;
  bool have_plan_ = false;
  std::vector<ScenarioRecord> module_errors_;
  std::vector<Planned> plan_;
  std::size_t done_ = 0;
  /// The mean seconds a scenario took its worker of late (moving, from the records; < 0: none yet): queue_depth.
  double recent_seconds_ = -1;
  bool last_look_took_done_ = false;  ///< the last poll_workers took at least one done reply (may_nap)
  std::vector<json> parts_;  ///< what the worker of each part found (slot 0's own is its worker's); null: not yet
  /// The scenarios not yet sent, by the part that imported them (their workers take them in order; one whose own part
  /// is done takes from the back of the fullest), and pytest's, which only slot 0 has. A scenario sent to a worker
  /// that ended before starting it goes back to the front of its queue.
  std::vector<std::deque<std::size_t>> queues_;
  std::deque<std::size_t> pinned_;
  std::set<std::size_t> bounced_;  ///< given back once because their worker died before starting them
  bool unsaved_ = false;
  Clock::time_point last_save_ = Clock::now();
  double last_save_seconds_ = 0;  ///< what the last save took
};

void Supervisor::start(const std::string& backend) {
  argv_ = worker_argv(options_, backend);
  workers_.resize(std::max(1, options_.jobs));
  parts_.assign(workers_.size(), json());
  for (std::size_t slot = 0; slot < workers_.size(); ++slot) workers_[slot].slot = slot;
  spawn(workers_.front());  // the others once it said whether it forks them (take_launch)
  while (!have_plan_) {
    if (g_stop_signal)
      throw RunAbort{"stopped by signal " + std::to_string(g_stop_signal) + " before any scenario ran",
                     kExitInterrupted};
    poll_workers(nullptr);
  }
  if (launch_ != Launch::kFork) return;
  server_ = std::move(workers_.front().process);
  for (Worker& w : workers_) spawn(w);
}

// A fork server's workers are its forks, ready at once: nothing is imported twice, and a replacement costs a fork.
// Without one (a backend that is not fork-safe), with more than one worker each imports its part of the scenario
// modules (discovery.discover_part), so that none imports them all: importing every module had taken each worker of
// the bundled corpus 1-2 s before its first scenario, whatever --jobs. A replacement imports the same part again.
void Supervisor::spawn(Worker& w) {
  if (server_) {
    try {
      return w.restart(ChildProcess::forked_by(*server_, kForkSeconds), true);
    } catch (const std::runtime_error& e) {
      server_->read_output();
      const std::string tail = server_->output().text();
      throw RunAbort{std::string(e.what()) + (tail.empty() ? std::string() : ", after printing:\n" + tail)};
    }
  }
  std::vector<std::string> argv = argv_;
  if (workers_.size() > 1)
    argv.insert(argv.end(), {protocol::flag::kPart, std::to_string(w.slot), protocol::flag::kParts,
                             std::to_string(workers_.size())});
  const bool offer = launch_ != Launch::kExec;  // only the first is started before the answer
  if (offer) argv.push_back(protocol::flag::kForkServer);
  const InProcessEntry* entry = options_.in_process_worker ? &options_.in_process_worker : nullptr;
  w.restart(std::make_unique<ChildProcess>(argv, ChildProcess::kMaxReplyLine, offer, entry), false);
}

// More workers, forks of the fork server, once `parity check`'s other run ended (RunOptions::workers_on_signal): each
// takes from the back of the fullest queue, as a worker whose own share is done does. A run of a backend that is not
// fork-safe would start processes that import their share again, and so adds none.
void Supervisor::add_workers() {
  if (!server_ || options_.workers_on_signal <= 0) return;
  std::size_t unsent = 0;
  for (const auto& queue : queues_) unsent += queue.size();
  if (unsent < kUnsentToGrow) return;
  for (int added = 0; added < options_.workers_on_signal; ++added) {
    Worker& w = workers_.emplace_back();
    w.slot = workers_.size() - 1;
    queues_.emplace_back();
    parts_.emplace_back();
    spawn(w);
  }
}

// The first worker loaded the backend and said whether it forks the others: if not, they start now, each importing
// its part. (A new server, started again after a module's import killed the last, says it again.)
void Supervisor::take_launch(Worker& w, bool forkable) {
  if (w.slot != 0 || launch_ == Launch::kExec) throw protocol::ProtocolError("a 'loaded' event it could not have sent");
  if (launch_ == Launch::kFork) return;
  launch_ = forkable ? Launch::kFork : Launch::kExec;
  if (launch_ == Launch::kExec)
    for (std::size_t slot = 1; slot < workers_.size(); ++slot) spawn(workers_[slot]);
}

// A worker said what its part found: slot 0's waits for the others' to make the plan; another's is ready for
// scenarios (none is sent before the plan).
void Supervisor::take_part(Worker& w, const json& found) {
  w.found = true;
  if (w.slot != 0) {
    parts_[w.slot] = found;
    w.become_ready();
  }
  send_merge();
}

// Slot 0's worker gets the other parts' findings once it and they all have reported.
void Supervisor::send_merge() {
  Worker& first = workers_.front();
  if (!first.found || first.merge_sent) return;
  json others = json::array();
  for (std::size_t slot = 1; slot < parts_.size(); ++slot) {
    if (parts_[slot].is_null()) return;
    others.push_back(parts_[slot]);
  }
  first.merge_sent = true;
  first.process->send_line(dump_json(json{{protocol::kMerge, others}}, -1));
}

// The ready reply's backend, environment and module errors.
void Supervisor::take_head(json& backend, json& environment, const json& errors) {
  have_plan_ = true;
  manifest_.backend = std::move(backend);
  manifest_.environment = std::move(environment);
  manifest_.environment["libraries"] = json::object();  // filled as scenarios finish (handle_done)
  // Where the command ran, which its relative --scenarios are taken from (check_resume_selection): the worker's own
  // is read after the backend and the scenario modules are imported, which may have changed it.
  std::error_code ec;
  if (const std::filesystem::path here = std::filesystem::current_path(ec); !ec)
    manifest_.environment["cwd"] = here.string();
  try {
    for (const json& e : errors) module_errors_.push_back(record_from_json(e));
  } catch (const std::exception& e) {  // json::exception, std::invalid_argument (a result file outside results/)
    throw protocol::ProtocolError(std::string("a ready event with a malformed module error: ") + e.what());
  }
}

void Supervisor::take_plan(json& ready) {
  using namespace protocol::field;
  take_head(ready.at(kBackend), ready.at(kEnvironment), ready.at(kErrors));
  // Moved out of the reply, not copied: 5,000 declarations are a few MB of JSON nodes, on the serial part of the run.
  for (json& s : ready.at(kScenarios)) {
    json timeout = s.at(kMeta).value("timeout", json());
    plan_.push_back({s.at(kId).get<std::string>(),
                     std::move(s.at(kMeta)),
                     "",
                     std::move(timeout),
                     s.at(kFile).get<std::string>(),
                     s.at(kPart).get<int>(),
                     {},
                     {}});
  }
}

// The plan read without a document (protocol::read_plain_ready): each declaration stays text, only its timeout read.
// Building and freeing 5,000 declarations' documents had been ~45k instructions a scenario on the run's serial part.
void Supervisor::take_plain_plan(protocol::PlainReady& ready) {
  take_head(ready.backend, ready.environment, ready.errors);
  plan_.reserve(ready.scenarios.size());
  for (const protocol::PlainPlanned& s : ready.scenarios)
    plan_.push_back({std::string(s.id),
                     json(),
                     std::string(s.meta),
                     s.timeout.empty() ? json() : parse_json(s.timeout, ""),
                     std::string(s.file),
                     s.part,
                     {},
                     {}});
}

// Events arrive in the order worker.h gives; one out of turn was not sent by the worker's own code (a scenario
// wrote into the reply descriptor) and is that worker's misbehaviour, never the run's fatal error.
void Supervisor::handle_line(Worker& w, const std::string& line, Progress* progress) {
  // A scenario's two replies in the form a worker writes them, taken without a document where that gives what the
  // parse would (protocol.h): the parse of each done reply had been half the supervisor's instructions (issue #20).
  if (w.state == WorkerState::kSent && line == protocol::kStartedLine) return w.begin();
  if (w.state == WorkerState::kRunning)
    if (const auto done = protocol::read_plain_done(line); done && take_plain_done(w, *done, progress)) return;
  // The plan, likewise: what the ready event does below.
  if (w.state == WorkerState::kStarting && w.slot == 0 && line.starts_with(R"({"backend":)"))
    if (auto ready = protocol::read_plain_ready(line)) {
      w.become_ready();
      if (!have_plan_) take_plain_plan(*ready);
      return;
    }
  json message = protocol::parse_reply(line);  // not const: take_plan moves the plan out of it
  const std::string event = message.at(protocol::kEvent).get<std::string>();
  const bool starting = w.state == WorkerState::kStarting;
  const bool startup_event = event == protocol::kLoaded || event == protocol::kImporting ||
                             event == protocol::kImported || event == protocol::kFound || event == protocol::kReady ||
                             event == protocol::kFatal;
  if (starting != startup_event)
    throw protocol::ProtocolError("a '" + event + "' event " + (starting ? "before" : "after") + " it was ready");
  if (event == protocol::kFatal)
    throw RunAbort{message.at(protocol::field::kMessage).get<std::string>(),
                   message.value(protocol::field::kNoTests, false) ? kExitNoTests : kExitUsage};
  if (event == protocol::kLoaded) {
    take_launch(w, message.at(protocol::field::kForkable).get<bool>());
  } else if (event == protocol::kImporting) {
    w.importing = message.at(protocol::field::kFile).get<std::string>();
  } else if (event == protocol::kImported) {
    w.importing.clear();  // a death from now on is no module's
  } else if (event == protocol::kFound) {
    if (workers_.size() < 2 || w.found || launch_ == Launch::kFork)
      throw protocol::ProtocolError("a 'found' event it could not have sent");
    take_part(w, message.at(protocol::field::kPart));
  } else if (event == protocol::kReady) {
    if (w.slot != 0) throw protocol::ProtocolError("a 'ready' event from a worker that makes no plan");
    w.become_ready();
    if (!have_plan_) take_plan(message);
  } else if (event == protocol::kStarted) {
    w.begin();
  } else {
    handle_done(w, message, progress);
  }
}

// Why a done record of the running scenario (its id) is not that scenario's own: it names another's result files, or
// none though it passed; "" when it is its own.
std::string foreign_record(const ScenarioRecord& record) {
  const std::string own_file = result_file_for(record.id);  // a SHA-256 of the id: once, for both names
  if (!record.file.empty() && record.file != own_file) return "a 'done' record naming another result file";
  if (!record.pickle_file.empty() && record.pickle_file != own_file + kPickleSuffix)
    return "a 'done' record naming another pickle file";
  if (pickle_offset_misplaced(record)) return "a 'done' record with a pickle offset but no result file to hold it";
  if (record.status == "ok" && record.file.empty()) return "an ok 'done' record without a result file";
  return "";
}

// "done": the record of the first scenario this worker was given; it goes on with the next one at once.
void Supervisor::handle_done(Worker& w, json& message, Progress* progress) {
  if (w.state != WorkerState::kRunning) throw protocol::ProtocolError("a 'done' event with no scenario running");
  ScenarioRecord record = checked_record(w.tasks.front(), std::move(message.at(protocol::field::kRecord)));
  finish_done(w, std::move(record), message.at(protocol::field::kRetiring).get<bool>(),
              message.value(protocol::field::kLibraries, json()), progress);
}

// A done reply read by protocol::read_plain_done, which made parse_reply's checks: checked_record's, on the record
// the parse would have given, its JSON fields pasted into its manifest entry. False, having changed nothing, where
// one fails: the reply is then parsed, and refused with checked_record's reason.
bool Supervisor::take_plain_done(Worker& w, const protocol::PlainDone& done, Progress* progress) {
  Planned& planned = plan_[w.tasks.front()];
  if (done.id != planned.id) return false;
  ScenarioRecord record;
  record.id = planned.id;
  record.status = done.status;
  record.file = done.file;
  record.pickle_file = done.pickle_file;
  record.pickle_offset = done.pickle_offset;
  record.seconds = done.seconds;
  for (const std::string& file : {record.file, record.pickle_file})
    if (!file.empty() && !is_safe_result_path(file)) return false;  // record_from_json's check
  if (!foreign_record(record).empty()) return false;
  if (!done.error.empty()) {
    try {
      record.error = parse_json(done.error, "");  // what the progress shows of it
    } catch (const json::exception&) {
      return false;
    }
  }
  PastedFields pasted = done.pasted;
  if (planned.meta_text.empty())
    record.meta = std::move(planned.meta);
  else
    pasted.meta = planned.meta_text;
  planned.entry = manifest_entry_text(record, pasted);
  finish_done(w, std::move(record), done.retiring, json(), progress);
  return true;
}

// The worker's first scenario has `record` (checked): it goes on with the next one, or retires.
void Supervisor::finish_done(Worker& w, ScenarioRecord&& record, bool retiring, const json& libraries,
                             Progress* progress) {
  const std::size_t index = w.finish(retiring);
  if (w.state == WorkerState::kRetiring) give_back(w);
  const double seconds = record.seconds;
  recent_seconds_ = recent_seconds_ < 0 ? seconds : 0.9 * recent_seconds_ + 0.1 * seconds;
  plan_[index].result = std::move(record);
  add_libraries(libraries);
  ++done_;
  unsaved_ = true;
  if (progress) progress->end(to_shown(*plan_[index].result));
  if (progress && w.state == WorkerState::kSent) progress->begin(plan_[w.tasks.front()].id);
}

// A done record is accepted only as the running scenario's own: its id, the result files that id names
// (manifest.h, the functions the worker wrote them with) or none, a result file whenever it passed. Its
// declaration is the plan's, whatever the record says: moved out of the plan, which needs it no more (check_limits
// and lose read it of scenarios not finished yet), as the record's values are moved out of the reply.
ScenarioRecord Supervisor::checked_record(std::size_t index, json&& entry) {
  using protocol::ProtocolError;
  const std::string& id = plan_[index].id;
  if (entry.at("id") != id) throw ProtocolError("a 'done' record for another scenario than the one it ran");
  try {
    ScenarioRecord record = record_from_json(std::move(entry));
    if (const std::string why = foreign_record(record); !why.empty()) throw ProtocolError(why);
    record.meta = plan_[index].take_declaration();
    return record;
  } catch (const json::exception& e) {
    throw ProtocolError(std::string("a malformed 'done' record: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw ProtocolError(e.what());
  }
}

// The scenarios waiting behind the first in a worker that ends: none of them started, so another worker runs them.
void Supervisor::give_back(Worker& w) {
  for (const std::size_t index : w.take_waiting()) put_back(index);
}

// What a worker that died or was stopped while writing its scenario's files left under their own names (a worker
// creates them in place: atomic_file.h's Publish::in_place): the scenario's record names no file, and a resumed run
// does not run it again, so nothing else would replace them.
void remove_unrecorded_files(const std::filesystem::path& dir, const std::string& id) {
  std::error_code ec;
  for (const std::string& file : {result_file_for(id), pickle_file_for(id)}) std::filesystem::remove(dir / file, ec);
}

// The scenario the worker ran ended without a record of its own: the worker died or was stopped. It is recorded
// with what the worker printed last, and a new worker takes the dead one's place.
void Supervisor::lose(Worker& w, const std::string& status, const std::string& type, const std::string& message,
                      Progress& progress) {
  give_back(w);
  const std::size_t index = w.tasks.front();
  if (w.state == WorkerState::kSent && bounced_.insert(index).second) {
    // It died between two scenarios (a thread the last one left behind, say): this one never began, so another
    // worker runs it, once; a worker that dies before starting it again is its crash.
    put_back(index);
    spawn(w);
    return;
  }
  ScenarioRecord record;
  record.id = plan_[index].id;
  remove_unrecorded_files(manifest_.dir, record.id);
  record.meta = plan_[index].declaration();
  record.status = status;
  record.seconds = seconds_between(w.started, Clock::now());
  const std::string tail = w.process->output().text();
  record.error = {
      {"type", type}, {"message", message}, {"traceback", tail.empty() ? "" : "last output of the worker:\n" + tail}};
  plan_[index].result = std::move(record);
  ++done_;
  unsaved_ = true;
  progress.end(to_shown(*plan_[index].result));
  spawn(w);
}

// The worker's scenario goes past a limit or the worker misbehaves: it is killed, with whatever it started.
void Supervisor::stop(Worker& w, const std::string& status, const std::string& type, const std::string& message,
                      Progress& progress) {
  w.process->kill();
  w.process->wait_end(0);  // killed: its end is a moment away
  lose(w, status, type, message, progress);
}

// A reply it could not have sent: a scenario wrote into the reply descriptor (or the worker lost track). The
// scenario it runs is its crash; one that is idle is replaced. One still starting (importing the scenario modules)
// ends the run: no scenario is to blame.
void Supervisor::misbehaved(Worker& w, const std::string& why, Progress* progress) {
  const std::string message = "its worker sent an invalid reply (" + why + ") and was stopped";
  if (progress && w.has_task()) return stop(w, "crash", "Crash", message, *progress);
  if (!progress || w.state == WorkerState::kStarting)
    throw RunAbort{"a worker sent an invalid reply (" + why + ") before it was ready"};
  w.process->kill();
  w.process->wait_end(0);
  spawn(w);
}

void Supervisor::check_limits(Worker& w, Progress& progress) {
  if (!w.has_task()) return;
  const json& own = plan_[w.tasks.front()].timeout;
  const double limit = own.is_number() ? own.get<double>() : options_.timeout;
  if (limit > 0 && seconds_between(w.started, Clock::now()) > limit) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", limit);
    stop(w, "timeout", "Timeout",
         "ran past its timeout of " + std::string(seconds) + " s (" +
             (own.is_number() ? "set by the scenario's timeout= argument" : "set by --timeout") +
             "); its worker was stopped",
         progress);
    return;
  }
  const std::size_t bytes = options_.max_memory_mb > 0 ? w.process->resident_bytes() : 0;
  if (bytes > options_.max_memory_mb * 1024 * 1024) {
    stop(w, "crash", "MemoryLimit",
         "its worker used " + std::to_string(bytes >> 20) + " MB, past the memory limit of " +
             std::to_string(options_.max_memory_mb) + " MB (--max-memory); it was stopped",
         progress);
  }
}

// What a killed run's writers left half-written under a temporary name (atomic_file.h, probe.py; earlier versions
// wrote their results so too): "<file>.tmp-<pid>...", never a result. A result file half-written in place
// (Publish::in_place) has its own name but no record: a scenario whose worker died or was stopped has its files removed
// as it is recorded (remove_unrecorded_files); one unfinished when the whole run was killed runs again.
// Only that ending counts: a result's own name can hold ".tmp-" where its scenario's id does (a parameter "x.tmp-1"),
// and any name containing it had been removed, its scenario run again.
bool is_partial_file_name(const std::string& name) {
  const std::size_t at = name.rfind(".tmp-");
  if (at == std::string::npos) return false;
  const std::string_view rest = std::string_view(name).substr(at + 5);  // <pid>, or <pid>-<n>
  const std::size_t dash = rest.find('-');
  const auto digits = [](std::string_view part) {
    return !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return digits(rest.substr(0, dash)) && (dash == std::string_view::npos || digits(rest.substr(dash + 1)));
}

void remove_partial_files(const std::filesystem::path& results) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(results, ec))
    if (is_partial_file_name(entry.path().filename().string())) std::filesystem::remove(entry.path(), ec);
}

void Supervisor::add_libraries(const json& libraries) {
  if (!libraries.is_object()) return;  // a manifest written before parity recorded them
  for (const auto& [name, version] : libraries.items()) manifest_.environment["libraries"][name] = version;
}

namespace {

// A recorded selection's `key` as compared: --scenarios' paths as the places they are, a relative one taken from
// `cwd`, the directory its command ran in (a config file's paths are absolute, the command line's as typed; links and
// ".." resolved where they exist, so "link/../x" is where it leads), --scenarios and --only as sets (their order
// selects nothing), -k as given.
std::string place_of(const std::filesystem::path& path, const std::filesystem::path& cwd) {
  const std::filesystem::path absolute = path.is_absolute() ? path : cwd / path;
  std::error_code ec;
  const std::filesystem::path place = std::filesystem::weakly_canonical(absolute, ec);
  return absolute_spelling(ec ? absolute : place).string();
}

nlohmann::json comparable_selection(const std::string& key, const nlohmann::json& value,
                                    const std::filesystem::path& cwd) {
  if (!value.is_array()) return value;
  std::set<std::string> items;
  for (const nlohmann::json& item : value) {
    if (!item.is_string()) return value;
    const std::string& text = item.get_ref<const std::string&>();
    items.insert(key == "paths" && !text.empty() ? place_of(text, cwd) : text);
  }
  return items;
}

// --resume finishes the run in the directory: the same selection (its --scenarios, --only and -k as recorded, where
// the manifest records them). Another one had ended 'complete' with the finished scenarios of the first selection
// dropped from the manifest and their files left behind (a resume without its --scenarios ran the bundled corpus).
void check_resume_selection(const Manifest& previous, const nlohmann::json& now) {
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::current_path(ec);
  const auto recorded_cwd = previous.environment.find("cwd");  // where its relative paths were taken from
  const std::filesystem::path there =
      recorded_cwd != previous.environment.end() && recorded_cwd->is_string() && !recorded_cwd->empty()
          ? std::filesystem::path(recorded_cwd->get<std::string>())
          : here;
  for (const char* key : {"paths", "only", "keyword"}) {
    const auto before = previous.run.find(key);
    if (before == previous.run.end() ||
        comparable_selection(key, *before, there) == comparable_selection(key, now.at(key), here))
      continue;
    const auto shown = [](const nlohmann::json& v) {
      return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    // The same spelling from another directory: where each was taken from says why they differ.
    const bool alike = shown(*before) == shown(now.at(key));
    throw RunAbort{previous.dir.string() + " holds a run of another selection (" + key + ": " + shown(*before) +
                   (alike ? " in " + there.string() : "") + ", now " + shown(now.at(key)) +
                   (alike ? " in " + here.string() : "") +
                   "): resume it with the --scenarios, --only and -k it was run with"};
  }
}

}  // namespace

std::size_t Supervisor::adopt(const Manifest& previous) {
  const std::string before = previous.backend.value("spec", "?"), now = manifest_.backend.value("spec", "?");
  if (before != now)
    throw RunAbort{previous.dir.string() + " holds a run of backend '" + before + "', not '" + now +
                   "': resume it with --backend " + before + ", or write this run elsewhere"};
  check_resume_selection(previous, manifest_.run);
  remove_partial_files(previous.dir / kResultsSubdir);
  std::map<std::string, const ScenarioRecord*> by_id;
  for (const ScenarioRecord& r : previous.scenarios) by_id[r.id] = &r;
  std::size_t adopted = 0;
  std::error_code ec;
  for (Planned& planned : plan_) {
    const auto found = by_id.find(planned.id);
    if (found == by_id.end()) continue;
    const ScenarioRecord& r = *found->second;
    bool files_there = true;
    for (const std::string& file : {r.file, r.pickle_file}) {
      try {  // a symbolic link or a FIFO among the results is refused, not adopted (nor run again over it)
        files_there = files_there && (file.empty() || is_safe_regular_file(previous.dir, file));
      } catch (const UnsafeFileError& e) {
        throw RunAbort{std::string("cannot resume: ") + e.what()};
      }
    }
    if (!files_there) {
      // Run again, it appends its pickle to its result file: a pickle file of its own that a run of manifest
      // version 1 left would stay behind, named by no record.
      if (!r.pickle_file.empty() && r.pickle_file == pickle_file_for(r.id))
        std::filesystem::remove(previous.dir / r.pickle_file, ec);
      continue;
    }
    planned.result = r;
    ++done_, ++adopted;
  }
  if (const auto libraries = previous.environment.find("libraries"); adopted && libraries != previous.environment.end())
    add_libraries(*libraries);  // what those scenarios used
  return adopted;
}

std::deque<std::size_t>& Supervisor::queue_of(std::size_t index) {
  const int part = plan_[index].part;
  if (part < 0) return queues_.size() > 1 ? pinned_ : queues_.front();  // alone, it runs them in plan order
  return queues_[static_cast<std::size_t>(part) % queues_.size()];
}

// Once the plan is final (a shard's, with what a resumed run finished taken out).
void Supervisor::make_queues() {
  queues_.assign(workers_.size(), {});
  for (std::size_t index = 0; index < plan_.size(); ++index)
    if (!plan_[index].result) queue_of(index).push_back(index);
}

// The next scenario for the worker in `slot`: pytest's for slot 0 (no other has them), else the next of its own
// part, else the last of the part with the most left (its module is imported for it): both ends of that part then
// meet in the middle.
std::optional<std::size_t> Supervisor::take(std::size_t slot) {
  const auto pop = [this](std::deque<std::size_t>& queue, bool back) -> std::optional<std::size_t> {
    while (!queue.empty()) {
      const std::size_t index = back ? queue.back() : queue.front();
      back ? queue.pop_back() : queue.pop_front();
      if (!plan_[index].result) return index;  // else finished already (the run this one resumes)
    }
    return std::nullopt;
  };
  if (slot == 0)
    if (const auto index = pop(pinned_, false)) return index;
  if (const auto index = pop(queues_[slot], false)) return index;
  std::deque<std::size_t>* fullest = nullptr;
  for (auto& queue : queues_)
    if (!fullest || queue.size() > fullest->size()) fullest = &queue;
  return pop(*fullest, true);
}

void Supervisor::dispatch(Progress& progress) {
  for (Worker& w : workers_) {
    while (w.ready() && w.tasks.size() < queue_depth()) {
      const std::optional<std::size_t> index = take(w.slot);
      if (!index) break;
      const Planned& planned = plan_[*index];
      if (w.queue(*index)) progress.begin(planned.id);
      const json command = {{protocol::kRun, planned.id}, {protocol::field::kFile, planned.file}};
      if (w.process->send_line(dump_json(command, -1))) continue;
      if (w.tasks.size() > 1) {
        // It died running the one before: poll_workers records that with how it ended; this one runs elsewhere.
        put_back(w.unqueue());
      } else {
        w.process->wait_end(1.0);  // its command pipe is gone: it ended, or a scenario closed the descriptor
        lose(w, "crash", "Crash", "its worker was gone before it could start", progress);
      }
      break;
    }
  }
}

// Waits up to 100 ms for any worker to reply or print, then reads everything available. The output of a worker
// that runs scenarios and printed little at the last look is not waited on: it is read at its next reply (what a
// scenario prints, and the restart line before each), one wake-up a scenario instead of two. One that prints more
// (kQuietOutput) is waited on again before its pipe fills, at most 100 ms after it began.
void Supervisor::poll_workers(Progress* progress) {
  const std::size_t done_before = done_;
  std::vector<pollfd> fds;
  if (server_) server_->read_output();  // it prints nothing once ready, unless something it imported does
  for (Worker& w : workers_) {
    if (!w.process) continue;  // not started before the first says whether it forks them
    w.process->flush_commands();
    fds.push_back({w.process->reply_fd(), POLLIN, 0});
    if (!w.has_task() || w.process->last_output_bytes() > kQuietOutput)
      fds.push_back({w.process->output_fd(), POLLIN, 0});
  }
  if (may_nap()) {
    const timespec nap{0, static_cast<long>(kNapSeconds * 1e9)};
    ::ppoll(nullptr, 0, &nap, nullptr);  // a stop signal ends it early
    ::poll(fds.data(), fds.size(), 0);
  } else {
    ::poll(fds.data(), fds.size(), 100);
  }
  for (Worker& w : workers_)
    if (w.process) poll_worker(w, progress);
  last_look_took_done_ = done_ > done_before;
}

// How many scenarios a ready worker is sent ahead: kQueued, kQueuedShort while they take less than a nap.
std::size_t Supervisor::queue_depth() const {
  return recent_seconds_ >= 0 && recent_seconds_ < kNapSeconds ? kQueuedShort : kQueued;
}

// The supervisor sleeps instead of waiting on the pipes (kNapSeconds) only while replies come quickly (the last look
// took one: a long scenario's worker is waited on as before) and no worker can run dry in the meantime: each runs a
// scenario with another queued behind it. Anything else (a worker starting, idle or retiring) is waited on at once.
bool Supervisor::may_nap() const {
  if (!last_look_took_done_) return false;
  for (const Worker& w : workers_)
    if (!w.process || w.state != WorkerState::kRunning || w.tasks.size() < 2) return false;
  return true;
}

std::set<pid_t> Supervisor::worker_pids() const {
  std::set<pid_t> pids;
  for (const Worker& w : workers_)
    if (w.process) pids.insert(w.process->pid());
  if (server_) pids.insert(server_->pid());
  return pids;
}

void Supervisor::poll_worker(Worker& w, Progress* progress) {
  w.process->read_output();
  std::vector<std::string> lines;
  bool open = true;
  try {
    open = w.process->read_replies(lines);
    for (const std::string& line : lines) handle_line(w, line, progress);
  } catch (const protocol::ProtocolError& e) {
    return misbehaved(w, e.what(), progress);
  } catch (const std::length_error& e) {
    return misbehaved(w, e.what(), progress);
  }
  // A worker's end shows as the end of its reply pipe, or, when something it started still holds that, as its exit.
  if (open && !w.process->exited()) return;
  // A closed reply pipe and no end: a scenario closed the descriptor. It has a second to end, then it is stopped.
  const std::string end = w.process->wait_end(1.0);
  const bool cut = w.process->was_killed();
  reap_children(worker_pids());  // what its scenarios started and left behind, now children of this process
  if (w.state == WorkerState::kRetiring) return spawn(w);
  if (w.state == WorkerState::kStarting && !w.importing.empty()) {
    // Importing a scenario module killed it: that module becomes a module error, the next worker skips it (a
    // worker started before this was known dies on it too, and is simply started again).
    if (crashed_modules_.insert(w.importing).second)
      argv_.insert(argv_.end(), {protocol::flag::kCrashedModule, w.importing + "=" + end});
    return spawn(w);
  }
  if (w.state == WorkerState::kStarting || !progress) {
    const std::string tail = w.process->output().text();
    throw RunAbort{"the worker process ended (" + end + ") before it was ready" +
                   (tail.empty() ? std::string() : ", after printing:\n" + tail)};
  }
  if (!w.has_task()) return spawn(w);
  lose(w, "crash", "Crash",
       cut ? "its worker closed its reply descriptor and ran on; it was stopped"
           : "its worker process died running it (" + end + ")",
       *progress);
}

bool Supervisor::run(Progress& progress) {
  make_queues();
  while (done_ < plan_.size()) {
    if (g_stop_signal) return false;
    if (g_more_workers) {
      g_more_workers = 0;
      add_workers();
    }
    dispatch(progress);
    poll_workers(&progress);
    for (Worker& w : workers_) check_limits(w, progress);
    kill_overdue_cleaners();  // what a stopped worker's group kept, past its grace
    save();
  }
  // All told to end before any is waited for (wait_ends): the workers' ends (pytest's teardown, exit handlers, the
  // exit of a process of a few hundred MB) overlap instead of following one another on the run's last stretch, and
  // with the final manifest's write.
  for (Worker& w : workers_) w.process->end_commands();
  if (server_) server_->end_commands();  // its socket closed: it ends
  return true;
}

void Supervisor::wait_ends() {
  for (Worker& w : workers_) w.process->wait_end(10.0);
  if (server_) server_->wait_end(10.0);
}

std::vector<std::string> Supervisor::selected() const {
  std::vector<std::string> ids;
  for (const ScenarioRecord& r : module_errors_) ids.push_back(r.id);
  for (const Planned& planned : plan_) ids.push_back(planned.id);
  return ids;
}

void Supervisor::keep(const std::vector<std::string>& ids) {
  const std::set<std::string> wanted(ids.begin(), ids.end());
  std::erase_if(module_errors_, [&](const ScenarioRecord& r) { return !wanted.count(r.id); });
  std::erase_if(plan_, [&](const Planned& p) { return !wanted.count(p.id); });
  for (Planned& planned : plan_) planned.result.reset(), planned.entry.clear();
}

std::vector<ScenarioRecord> Supervisor::finished() const {
  std::vector<ScenarioRecord> records = module_errors_;
  for (const Planned& planned : plan_)
    if (planned.result) records.push_back(*planned.result);
  return records;
}

std::size_t Supervisor::finished_count() const {
  std::size_t count = module_errors_.size();
  for (const Planned& planned : plan_) count += planned.result.has_value();
  return count;
}

bool Supervisor::any_failed() const {
  if (run_failed(module_errors_)) return true;
  for (const Planned& planned : plan_)
    if (planned.result && is_failing_run_status(planned.result->status)) return true;
  return false;
}

void Supervisor::write_finished() {
  std::vector<std::string> errors;  // a few, each a module's: serialized anew
  errors.reserve(module_errors_.size());
  for (const ScenarioRecord& r : module_errors_) errors.push_back(manifest_entry_text(r));
  std::vector<const std::string*> entries;
  entries.reserve(errors.size() + plan_.size());
  for (const std::string& text : errors) entries.push_back(&text);
  for (Planned& planned : plan_) {
    if (!planned.result) continue;
    if (planned.entry.empty()) planned.entry = manifest_entry_text(*planned.result);
    entries.push_back(&planned.entry);
  }
  write_manifest(manifest_, entries);
}

// What finished reaches the manifest within a second, or, once writing it takes longer than 50 ms (thousands of
// records), within 20 times what the last write took: a run killed outright (SIGKILL) loses at most that much. The
// whole manifest rewritten every second had been most of the supervisor's CPU at 3,000 scenarios on a loaded machine
// (bench/README, issue #20 target 3), growing with the run's wall time and its size.
void Supervisor::save() {
  const double interval = std::max(1.0, 20 * last_save_seconds_);
  if (!unsaved_ || seconds_between(last_save_, Clock::now()) < interval) return;
  const auto start = Clock::now();
  write_finished();
  last_save_ = Clock::now();
  last_save_seconds_ = seconds_between(start, last_save_);
  unsaved_ = false;
}

// The scenarios' temporary directory, one of the run's own: TMPDIR names it to the workers (and to what they start),
// and it goes with what is left in it when the run ends, after the orphans' reaper (run_scenarios). A scenario stopped
// at its timeout, or killed with its worker, never removes its own temporary files (a `with TemporaryDirectory()` cut
// short): a nightly run's timeouts had left them in /tmp run after run. Where none can be made (TMPDIR not writable),
// the workers keep the TMPDIR they had, as before. A run killed outright (SIGKILL: a CI job's timeout, the OOM killer)
// cannot remove its directory; it stays locked while its run lives, so the next run started under the same TMPDIR
// removes those no run holds any more.
class ScenarioTempDir {
 public:
  explicit ScenarioTempDir(Verbosity verbosity) {
    if (const char* given = std::getenv(kTmpDirEnv)) before_ = given;
    remove_orphaned_temp_directories("run", kPrefix, verbosity);
    try {
      dir_.emplace(kPrefix, TempDirectory::Lock::kHeld);
    } catch (const std::system_error& e) {
      if (verbosity != Verbosity::kQuiet)
        print_line("run", std::string("no temporary directory of the run's own (") + e.what() +
                              "): its scenarios' temporary files go to the TMPDIR it was given");
      return;
    }
    ::setenv(kTmpDirEnv, dir_->path().c_str(), 1);
  }
  // The environment restored first (a coverage run's report follows in this process), then the directory removed.
  ~ScenarioTempDir() {
    if (!dir_) return;
    if (before_)
      ::setenv(kTmpDirEnv, before_->c_str(), 1);
    else
      ::unsetenv(kTmpDirEnv);
  }
  ScenarioTempDir(const ScenarioTempDir&) = delete;
  ScenarioTempDir& operator=(const ScenarioTempDir&) = delete;

 private:
  static constexpr const char* kTmpDirEnv = "TMPDIR";
  static constexpr const char* kPrefix = "parity-run-";
  std::optional<std::string> before_;
  std::optional<TempDirectory> dir_;
};

void print_banner(const Manifest& manifest) {
  const json& b = manifest.backend;
  const auto field = [](const json& object, const char* key) { return printable(object.value(key, "?")); };
  std::fprintf(stderr, "parity %s | Python %s | NumPy %s | backend %s %s (%s)\n", PARITY_VERSION,
               field(manifest.environment, "python").c_str(), field(manifest.environment, "numpy").c_str(),
               field(b, "name").c_str(), field(b, "version").c_str(), field(b, "role").c_str());
}

int finish_run(Supervisor& supervisor, Manifest& manifest, Progress& progress, bool completed, double seconds) {
  manifest.run["seconds"] = seconds;
  manifest.complete = completed;
  // Written while the workers end (the 4.6 MB of 5,000 scenarios took ~15 ms, the ends ~35 ms, one after the other on
  // the serial tail of the run before: bench/README, issue #20 target 3); what they do as they end is no record's.
  supervisor.write_finished();
  if (completed) supervisor.wait_ends();
  progress.summary({{"results", manifest.dir.string()}});
  if (!completed) {
    std::fprintf(stderr, "parity run: stopped by signal %d; the manifest lists the %zu scenarios that finished\n",
                 static_cast<int>(g_stop_signal), supervisor.finished_count());
    return kExitInterrupted;
  }
  return supervisor.any_failed() ? kExitFailed : kExitOk;
}

// The shard's part of what the workers discovered; the partition goes into the manifest, for compare and merge.
ShardPlan narrow_to_shard(const ShardRequest& request, Supervisor& supervisor, Manifest& manifest) {
  const ShardPlan plan = ShardPlan::make(request, supervisor.selected());
  const std::vector<std::string> mine = plan.ids();
  std::fprintf(stderr, "parity run: shard %s: %zu of %zu scenarios\n", plan.shard.text().c_str(), mine.size(),
               plan.scenarios.size());
  supervisor.keep(mine);
  manifest.run["shard"] = plan.to_json();
  return plan;
}

// The results directory `out`, open and locked (flock) while this run writes it: two runs writing one --out at once
// had both ended 'results <out>', exit 0, the manifest the last one wrote, the other's results lost. A second one is
// refused before it writes anything. On a file system without flock (some NFS mounts) it is left unlocked.
FileDescriptor lock_results_directory(const std::filesystem::path& out) {
  FileDescriptor dir(::open(out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) throw RunAbort{"cannot open the results directory " + out.string() + ": " + std::strerror(errno)};
  if (::flock(dir.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    throw RunAbort{out.string() + " is being written by another parity run: wait for it to end, or write elsewhere"};
  return dir;
}

// --resume finishes the run in the directory: the same shard of the same partition, or unsharded both.
void check_resume_shard(const Manifest& previous, const std::optional<ShardPlan>& now) {
  std::optional<ShardPlan> before;
  try {
    before = recorded_plan(previous);
  } catch (const ShardError& e) {
    throw RunAbort{e.what()};
  }
  if (!before && !now) return;
  if (before && now && before->same_partition(*now) && before->shard.index == now->shard.index) return;
  auto describe = [](const std::optional<ShardPlan>& p) { return p ? "shard " + p->shard.text() : "an unsharded run"; };
  const bool repartitioned = before && now && before->shard.index == now->shard.index;
  throw RunAbort{
      previous.dir.string() + " holds " + describe(before) +
      (repartitioned ? " of another partition (other scenarios or --shard-times)" : ", not " + describe(now)) +
      ": resume it with the --shard and --shard-times it was run with"};
}

}  // namespace

std::string backend_name(const RunOptions& options) {
  if (!options.backend.empty()) return options.backend;
  const char* env = std::getenv("PARITY_BACKEND");
  return env ? env : "";
}

void remove_orphaned_temp_directories(const char* command, const std::string& prefix, Verbosity verbosity) {
  const std::size_t orphans = remove_orphaned_temp_directories(prefix);
  if (orphans > 0 && verbosity != Verbosity::kQuiet)
    print_line(command, "removed " + std::to_string(orphans) + " temporary director" + (orphans == 1 ? "y" : "ies") +
                            " left by 'parity " + command + "' processes killed outright (" + prefix + "*)");
}

void catch_more_workers_signal() {
  struct sigaction action {};
  action.sa_handler = on_more_workers_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &action, nullptr);
}

int run_scenarios(const RunOptions& options) {
  const std::string backend = backend_name(options);
  Manifest manifest;
  manifest.dir = options.out;
  manifest.run = {{"parity", PARITY_VERSION},       {"paths", options.selection.paths},
                  {"only", options.selection.only}, {"keyword", options.selection.keyword},
                  {"timeout", options.timeout},     {"started", utc_timestamp()}};
  std::optional<ShardRequest> shard;
  try {
    shard = resolve_shard_request(options.sharding);
  } catch (const ShardError& e) {
    print_line("run", e.what());
    return kExitUsage;
  }
  // Declared first, so it is released last, once the workers are gone; taken before a resumed run's manifest is read
  // (another run may be writing it), else once the workers have made the directory (lock_results_directory).
  FileDescriptor locked;
  std::optional<Manifest> previous;
  if (options.resume) {
    try {
      std::error_code ec;
      if (std::filesystem::is_directory(options.out, ec)) locked = lock_results_directory(options.out);
      previous = read_manifest(options.out);
    } catch (const RunAbort& e) {
      print_line("run", e.message);
      return e.code;
    } catch (const ManifestError& e) {
      print_line("run", std::string("--resume: nothing to resume: ") + e.what());
      return kExitUsage;
    }
  }
  g_stop_signal = 0;
  StopSignalHandler signals(on_stop_signal);
  // Declared before the reaper, so it goes last: what the scenarios left running is killed before their files go.
  const ScenarioTempDir scenario_temp(options.verbosity);
  // Declared before the supervisor, so it ends after the workers: then it kills what their scenarios left running.
  OrphanReaper reaper;
  Supervisor supervisor(options, manifest);
  try {
    supervisor.start(backend);  // the workers create the results directory once backend and selection are good
    if (locked.get() < 0) locked = lock_results_directory(options.out);
  } catch (const RunAbort& e) {
    print_line("run", e.message);
    return e.code;
  }
  print_banner(manifest);
  const std::optional<ShardPlan> plan =
      shard ? std::optional(narrow_to_shard(*shard, supervisor, manifest)) : std::nullopt;
  std::size_t adopted = 0;
  if (previous) {
    try {
      check_resume_shard(*previous, plan);
      adopted = supervisor.adopt(*previous);
    } catch (const RunAbort& e) {
      print_line("run", e.message);
      return kExitUsage;
    }
    manifest.run["resumed"] = true;
    std::fprintf(stderr, "parity run: resuming %s: %zu of %zu scenarios already finished\n", options.out.c_str(),
                 adopted, supervisor.total());
  }
  const auto start = Clock::now();
  Progress progress(stderr, progress_options(stderr, "run", supervisor.total() - adopted, options.verbosity));
  for (const ScenarioRecord& r : supervisor.finished()) progress.end(to_shown(r));
  write_manifest(manifest);  // an interrupted run leaves a manifest that says it is incomplete
  bool completed = false;
  try {
    completed = supervisor.run(progress);
  } catch (const RunAbort& e) {
    print_line("run", e.message);
    supervisor.write_finished();  // incomplete: what finished stays valid
    return kExitUsage;
  }
  return finish_run(supervisor, manifest, progress, completed, seconds_between(start, Clock::now()));
}

}  // namespace parity
