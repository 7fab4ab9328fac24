// The protocol between `parity run` and its workers: descriptors, events, and the checks every reply passes.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

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

/// Events, in the order a worker sends them: importing (before each scenario module's import), imported (all of
/// them are; a death from now on is no module's), then ready or fatal; per command, started, then done.
inline constexpr const char* kImporting = "importing";
inline constexpr const char* kImported = "imported";
inline constexpr const char* kReady = "ready";
inline constexpr const char* kFatal = "fatal";
inline constexpr const char* kStarted = "started";
inline constexpr const char* kDone = "done";

/// A reply the supervisor cannot accept: not JSON, an unknown event, a field missing or mistyped, or an event the
/// worker could not have sent now. Whatever a scenario wrote into the reply descriptor ends here.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses one reply line and checks its event's fields (their presence and JSON types); throws ProtocolError.
nlohmann::json parse_reply(const std::string& line);

}  // namespace parity::protocol
