// The process that hosts Python for `parity run`: loads the backend, imports scenarios, runs those it is sent.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "runner.h"

namespace parity {

/// What `parity _worker` is started with; the run's supervisor (runner.cc, worker_argv) passes its own options, under
/// the flags protocol.h names.
struct WorkerOptions {
  std::string backend;  ///< as given to `parity run` (already resolved from PARITY_BACKEND by the supervisor)
  std::string role;
  std::filesystem::path out;
  Selection selection;
  bool pickle_probe = true;
  /// "FILE=how its worker ended": scenario modules whose import killed an earlier worker, reported, not imported.
  std::vector<std::string> crashed_modules;
  /// The part of the discovery it imports (discovery.discover_part): part 0 of 1 is all of it, and with more parts
  /// part 0 also makes the plan from the others' found replies, which the supervisor merges into one command.
  int part = 0, parts = 1;
  /// Offered to be the run's fork server (protocol::flag::kForkServer): when the backend is fork-safe it imports every
  /// module (parts is then 1) and, once ready, forks the workers (fork_server.h) instead of running scenarios.
  bool fork_server = false;
};

/// `parity _worker`: loads the backend, installs it (with fork_server, replies {"event": "loaded", forkable}),
/// discovers its part of the scenarios (replying {"event": "importing", file} before each module's import, so that an
/// import that kills it is known, and {"event": "imported"} after the last). With more than one part it replies
/// {"event": "found", part: what it found}; part 0 then reads the command {"merge": [the other parts' found]}. Part 0
/// replies one JSON line, either {"event": "ready", backend, environment, scenarios: [{id, meta, file, part}], errors:
/// [records of module errors]} or
/// {"event": "fatal", message, no_tests} (then exits 2, or 5 with no_tests true: the selection holds no scenario);
/// the others' found is their ready. Then, for each command line {"run": ID, "file": its module} (a module of
/// another part is imported then), replies {"event": "started"}, runs that scenario, writes its result files under
/// `out` and replies
/// {"event": "done", record, retiring}; when the next command has arrived by then, its started reply goes out in the
/// same write as that done (after the output restart line, protocol.h), so the supervisor wakes once a scenario.
/// Exits 0 at the end of the commands, or right after a reply with retiring
/// true (a MemoryError left it untrustworthy: a crash record). A fork server of a fork-safe backend runs no command
/// after its ready reply: it forks workers that do (fork_server.h), and exits 0 when the supervisor closes its socket.
/// Commands and replies travel on the descriptors
/// protocol.h names, with the events and their fields.
int worker_main(const WorkerOptions& options);

/// Prints the selected scenario ids (and modules that fail to import) without loading any backend.
int list_scenarios(const Selection& selection, bool as_json);

}  // namespace parity
