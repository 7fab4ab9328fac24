// The protocol between `parity run` and its workers: descriptors, events, and the checks every reply passes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "manifest.h"

namespace parity::protocol {

/// The worker reads its commands ({"run": ID} lines) here and writes its replies (one JSON object a line) there.
/// High numbers, not 3 and 4: a scenario that closes or reuses the low descriptors (daemon code, a test runner)
/// must not cut or garble the protocol. The worker marks both close-on-exec, so what it starts never holds them.
inline constexpr int kReplyFd = 200;
inline constexpr int kCommandFd = 201;

/// The line a worker prints on its stdout before each scenario (src/parity/run/worker.cc): its output tail starts again
/// there, so a crash report shows the dying scenario's output only. Sent through the output pipe itself, it cannot
/// be misordered with what the scenarios print, as a reply on the other pipe could.
inline constexpr const char* kOutputRestart = "\x1e parity: next scenario \x1e";

/// The worker's command line: `parity <kWorkerCommand>` with these flags, which the supervisor writes (runner.cc,
/// from `parity run`'s own options) and the `_worker` subcommand parses (cli/main.cc, into WorkerOptions).
inline constexpr const char* kWorkerCommand = "_worker";
namespace flag {
inline constexpr const char* kBackend = "--backend";  ///< the backend, resolved from PARITY_BACKEND already
inline constexpr const char* kRole = "--role";
inline constexpr const char* kOut = "--out";              ///< the results directory, absolute
inline constexpr const char* kScenarios = "--scenarios";  ///< repeated: one per scenario path
inline constexpr const char* kOnly = "--only";            ///< repeated: one per selected id
inline constexpr const char* kKeyword = "--keyword";
inline constexpr const char* kNoPickleProbe = "--no-pickle-probe";
inline constexpr const char* kCrashedModule = "--crashed-module";  ///< repeated: "FILE=how its worker ended"
inline constexpr const char* kPart = "--part";    ///< which part of the discovery it imports (worker.h), from 0
inline constexpr const char* kParts = "--parts";  ///< of how many (the run's --jobs)
/// Part 0 offers to be the run's fork server: it replies kLoaded once the backend is installed and, when the backend
/// is fork-safe, imports every module itself and then forks the workers (worker.h); else it goes on as part 0.
inline constexpr const char* kForkServer = "--fork-server";
}  // namespace flag

/// A command line to a worker is {kRun: ID, field::kFile: its module} (run that scenario) or, once, to part 0 of
/// several, {kMerge: [the other parts' found payloads]}.
inline constexpr const char* kRun = "run";
inline constexpr const char* kMerge = "merge";

/// A fork server's command channel is a socket (process.h): after its ready reply, each request to it is one byte
/// carrying, as SCM_RIGHTS, a new worker's command read end, reply write end and output write end, in that order;
/// it answers with the new worker's pid (a pid_t), or 0 when it could not fork one.
inline constexpr char kForkRequest = 'F';
inline constexpr int kForkDescriptors = 3;

/// Every reply is an object whose kEvent field names its event.
inline constexpr const char* kEvent = "event";

/// Events, in the order a worker sends them: loaded (with --fork-server only), importing (before each scenario module's
/// import), imported (all of them are; a death from now on is no module's), found (with more than one part), then ready
/// or fatal (part 0); per command, started, then done.
inline constexpr const char* kLoaded = "loaded";
inline constexpr const char* kImporting = "importing";
inline constexpr const char* kImported = "imported";
inline constexpr const char* kReady = "ready";
inline constexpr const char* kFatal = "fatal";
inline constexpr const char* kFound = "found";
inline constexpr const char* kStarted = "started";
inline constexpr const char* kDone = "done";

/// The fields of the events (parse_reply checks which event has which, and their JSON types).
namespace field {
inline constexpr const char* kFile = "file";  ///< importing, a ready scenario, a run command: the scenario module
inline constexpr const char* kForkable = "forkable";        ///< loaded: whether it will fork the workers (the backend's
                                                            ///< FORK_SAFE), so imports every module itself
inline constexpr const char* kMessage = "message";          ///< fatal: what is wrong
inline constexpr const char* kNoTests = "no_tests";         ///< fatal: the selection holds no scenario (exit 5)
inline constexpr const char* kBackend = "backend";          ///< ready: the backend's info()
inline constexpr const char* kEnvironment = "environment";  ///< ready: Python, NumPy, platform
inline constexpr const char* kScenarios = "scenarios";      ///< ready: [{kId, kMeta}] in discovery order
inline constexpr const char* kErrors = "errors";            ///< ready: the records of module errors
inline constexpr const char* kId = "id";
inline constexpr const char* kMeta = "meta";
inline constexpr const char* kPart = "part";      ///< ready: the part that imported it (-1: pytest's, part 0 alone);
                                                  ///< found: what that part found (discovery.part_payload)
inline constexpr const char* kRecord = "record";  ///< done: the scenario's record (manifest.h)
inline constexpr const char* kRetiring = "retiring";    ///< done: the worker exits after this reply
inline constexpr const char* kLibraries = "libraries";  ///< done: {name: version} of what it has imported
}  // namespace field

/// A reply the supervisor cannot accept: not JSON, an unknown event, a field missing or mistyped, or an event the
/// worker could not have sent now. Whatever a scenario wrote into the reply descriptor ends here.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses one reply line and checks its event's fields (their presence and JSON types); throws ProtocolError.
nlohmann::json parse_reply(const std::string& line);

/// The started reply, as the worker writes it: the supervisor takes this text without parsing it.
inline constexpr std::string_view kStartedLine = R"({"event":"started"})";

/// A done reply read without building its document (read_plain_done): the record's scalar fields, and its JSON fields
/// as their canonical texts (canonical_json.h), to paste into its manifest entry. Views into the reply's line.
struct PlainDone {
  std::string_view id, status, file, pickle_file;  ///< as parse_reply's strings hold them (no escape was in them)
  std::optional<std::uint64_t> pickle_offset;
  double seconds = 0;
  bool retiring = false;
  std::string_view error;  ///< the error object's text, or empty: the supervisor parses it (the progress shows it)
  PastedFields pasted;
};

/// The done reply `line` when it is exactly what a worker writes (worker.cc: nlohmann's compact dump, the record's
/// fields to_json's, no libraries, strings without escapes but in the record's JSON fields) and passes every check
/// parse_reply makes, read without a document: parse_reply would return the same values. nullopt for anything else,
/// which the caller then parses as any reply (and may refuse): this never refuses a line.
std::optional<PlainDone> read_plain_done(std::string_view line);

/// One scenario of a ready reply read by read_plain_ready. Views into the reply's line.
struct PlainPlanned {
  std::string_view id, file;  ///< as parse_reply's strings hold them (no escape was in them)
  std::string_view meta;      ///< the declaration's canonical text (canonical_json.h)
  std::string_view timeout;   ///< the text of its "timeout" member; empty when it has none
  int part = 0;
};

/// A ready reply read without building the plan's documents: its backend, environment and errors parsed (a few KB),
/// its scenarios' fields as they are written.
struct PlainReady {
  nlohmann::json backend, environment, errors;
  std::vector<PlainPlanned> scenarios;
};

/// The ready reply `line` when it is in the form a worker writes (worker.cc: nlohmann's compact dump, the plan's
/// entries in discovery.plan_text's sorted compact form, strings without escapes but in the declarations) and passes
/// every check parse_reply makes, read without building the plan: parse_reply would return the same values. nullopt
/// for anything else, which the caller then parses as any reply.
std::optional<PlainReady> read_plain_ready(std::string_view line);

}  // namespace parity::protocol
