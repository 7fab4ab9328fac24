// `parity compare` (see compare_results.h): the orchestration around compare_runs, short of the reports.
#include "compare_results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <future>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include "config.h"
#include "deadline.h"
#include "exit_keep.h"
#include "interpreter.h"
#include "process.h"
#include "runner.h"
#include "text.h"

namespace parity {
namespace {

constexpr auto kReplace = nlohmann::json::error_handler_t::replace;  // a damaged file's bad UTF-8 is shown, not thrown

// "pandas 2.2.3, scipy 1.14.1": the libraries a run imported (its manifest's environment.libraries).
std::string libraries_text(const Manifest& m) {
  const auto found = m.environment.find("libraries");
  if (found == m.environment.end() || !found->is_object() || found->empty()) return "none recorded";
  std::string text;
  for (const auto& [name, version] : found->items())
    text +=
        (text.empty() ? "" : ", ") + name + " " + (version.is_string() ? version.get<std::string>() : version.dump());
  return text;
}

// Under the banner: the library versions both runs used, so that an install that changed one is seen at once.
void print_libraries(std::FILE* out, const Manifest& gold, const Manifest& candidate) {
  const std::string g = libraries_text(gold), c = libraries_text(candidate);
  if (g == c && g == "none recorded") return;
  print_line(out, "compare", "libraries: gold " + g + (g == c ? " (the same for the candidate)" : "; candidate " + c));
}

// The compare stops short with a usage error, `message` saying why.
int refused(CompareReporter& reporter, const std::string& message) {
  reporter.refuse(message);
  return kExitUsage;
}

// Two results directories that cannot be meant as this pair: one directory twice, given the wrong way round, or runs
// of different scenario sets (nothing in common to compare). Empty when the pair is usable.
std::string pairing_mistake(const Manifest& gold, const Manifest& candidate, const std::vector<std::string>& only) {
  const std::string g = gold.dir.string(), c = candidate.dir.string();
  std::error_code ec;
  // One directory twice, a script's typo ($GOLD $GOLD): a pass that checks nothing.
  if (std::filesystem::equivalent(gold.dir, candidate.dir, ec))
    return g + " and " + c + " are the same results directory: compare a candidate backend's run with a gold run";
  if (gold.backend.value("role", "") == "candidate" && candidate.backend.value("role", "") == "gold")
    return g + " is a candidate run and " + c +
           " a gold run: they are swapped; give the gold run first: parity compare " + c + " " + g;
  if (gold.scenarios.empty() || candidate.scenarios.empty() || !compared_ids(gold, candidate, only).size()) return "";
  std::set<std::string> in_gold;
  for (const ScenarioRecord& r : gold.scenarios) in_gold.insert(r.id);
  for (const ScenarioRecord& r : candidate.scenarios)
    if (in_gold.count(r.id)) return "";
  return g + " and " + c + " have no scenario in common: they ran different scenario sets (gold: " +
         gold.run.value("paths", nlohmann::json::array()).dump(-1, ' ', false, kReplace) +
         ", candidate: " + candidate.run.value("paths", nlohmann::json::array()).dump(-1, ' ', false, kReplace) +
         "); run both over the same --scenarios";
}

// A compare of nothing passes nothing: two empty runs (that failed before their first scenario) or an --only that
// names no scenario of either are a mistake to report, never a green result; so is one --only id that neither run
// has, a typo as it is for `run --only` (an id in one run only is that scenario's `missing` failure). Empty when
// there is something and every id is known.
std::string nothing_compared(const Manifest& gold, const Manifest& candidate, const std::vector<std::string>& only) {
  const std::string both = gold.dir.string() + " and " + candidate.dir.string();
  if (compared_ids(gold, candidate, only).empty())
    return "the compare covered 0 scenarios: " +
           (only.empty() ? both + " list none (did their runs stop before the first scenario?)"
                         : "no scenario of " + both + " has an id given with --only");
  const std::vector<std::string> all = compared_ids(gold, candidate, {});
  const std::set<std::string> known(all.begin(), all.end());
  for (const std::string& id : only)
    if (!known.count(id)) return "no scenario of " + both + " has the id '" + id + "' given with --only";
  return "";
}

// The per-scenario time limit the runs had (run.timeout): the longer of the two, 0 (none) if either had none,
// RunOptions' default for manifests written before parity recorded it.
double recorded_timeout(const Manifest& gold, const Manifest& candidate) {
  double longest = 0;
  for (const Manifest* m : {&gold, &candidate}) {
    const auto it = m->run.find("timeout");
    const double t = it != m->run.end() && it->is_number() ? it->get<double>() : RunOptions().timeout;
    if (!(t > 0) || !std::isfinite(t)) return 0;
    longest = std::max(longest, t);
  }
  return longest;
}

// The gold and the candidate manifest, read side by side, each on a thread of its own, while this thread runs
// `meanwhile` (the interpreter's start, which must be on the main thread): each read is a parse of its whole file
// (megabytes at thousands of scenarios: ~90 ms of a 5,000-scenario compare, as long as Python's and NumPy's start,
// all before the first scenario), C++ only. Gold's error is the one told when both are unreadable, as when they were
// read one after the other; `meanwhile`'s exception is returned, to be thrown where its step would have come.
std::pair<Manifest, Manifest> read_manifests(const std::string& gold, const std::string& candidate,
                                             const std::function<void()>& meanwhile, std::exception_ptr& failed) {
  std::future<Manifest> first, second;
  try {
    first = std::async(std::launch::async, [&gold] { return read_manifest(gold); });
    second = std::async(std::launch::async, [&candidate] { return read_manifest(candidate); });
  } catch (const std::system_error&) {  // no thread to be had (a process limit): one after the other
    if (!first.valid()) first = std::async(std::launch::deferred, [&gold] { return read_manifest(gold); });
    second = std::async(std::launch::deferred, [&candidate] { return read_manifest(candidate); });
  }
  try {
    meanwhile();
  } catch (...) {
    failed = std::current_exception();
  }
  Manifest g = first.get();  // should it throw, `second`'s destructor waits for its thread
  return {std::move(g), second.get()};
}

}  // namespace

void CompareReporter::refuse(const std::string& message) { print_line("compare", message); }

int compare_results(const CompareCommand& command, CompareReporter& reporter) {
  CompareCommand args = command;  // its options get the shard, the timeout and the progress hooks
  // Ctrl-C and SIGTERM stop the compare at its next check (deadline.h): no report, exit 130. Installed before the
  // interpreter starts, so Python installs no KeyboardInterrupt handler of its own (and replaces one it had).
  // The flag is cleared on the way out (ClearedStopSignal). Not on the way in: a check's signal between its runs and
  // this compare is one (check_scenarios).
  std::optional<ClearedStopSignal> cleared;
  std::optional<StopSignalHandler> signals;
  if (args.own_stop_handler) cleared.emplace(), signals.emplace(note_stop_signal);
  Manifest gold, candidate;
  std::exception_ptr no_interpreter;  // thrown where the interpreter's start came before: after every refusal
  try {
    std::tie(gold, candidate) = read_manifests(args.gold, args.candidate, start_interpreter, no_interpreter);
  } catch (const ManifestError& e) {
    return refused(reporter, e.what());
  }
  if (const std::string nothing = nothing_compared(gold, candidate, args.options.only); !nothing.empty())
    return refused(reporter, nothing);
  try {  // the shard's ids: those of an unsharded compare's partition, or the partition the runs recorded
    args.options.shard = compare_shard_plan(gold, candidate, resolve_shard_request(args.sharding),
                                            compared_ids(gold, candidate, args.options.only));
  } catch (const ShardError& e) {
    return refused(reporter, e.what());
  }
  if (const std::string mistake = pairing_mistake(gold, candidate, args.options.only); !mistake.empty())
    return refused(reporter, mistake);
  // Before comparing anything: reports that cannot serve are a usage error, found in a moment.
  if (const std::string unusable = reporter.prepare(candidate); !unusable.empty()) return refused(reporter, unusable);
  if (no_interpreter) std::rethrow_exception(no_interpreter);
  const auto side = [](const Manifest& m, const std::string& dir) {
    return printable(m.backend.value("name", "?") + " " + m.backend.value("version", "?") + " (" + dir + ")");
  };
  std::fprintf(args.terminal, "parity %s | compare %s vs %s\n", PARITY_VERSION, side(gold, args.gold).c_str(),
               side(candidate, args.candidate).c_str());
  print_libraries(args.terminal, gold, candidate);
  args.options.timeout = args.timeout ? *args.timeout : recorded_timeout(gold, candidate);
  const std::size_t total = ids_to_compare(gold, candidate, args.options).size();
  Progress progress(args.terminal, progress_options(args.terminal, "compare", total, args.verbosity));
  args.options.on_start = [&progress](const std::string& id, std::size_t, std::size_t) { progress.begin(id); };
  const bool verbose = args.verbosity == Verbosity::kVerbose;
  std::size_t compared = 0;
  args.options.on_outcome = [&progress, &reporter, verbose, &compared](const ScenarioOutcome& s) {
    ++compared;
    progress.end(to_shown(s, verbose));
    reporter.outcome(s);
  };
  const std::string started = utc_timestamp();
  CompareReport report;
  try {
    report = compare_runs(gold, candidate, args.options);
  } catch (const DifferenceError& e) {
    return refused(reporter, e.what());
  } catch (const Interrupted& e) {
    progress.summary({});
    print_line("compare", "stopped by signal " + std::to_string(e.signal) + " after " + std::to_string(compared) +
                              " of " + std::to_string(total) + " scenarios; no report written");
    return kExitInterrupted;
  }
  report.started = started;
  std::vector<WrittenReport> written;
  try {
    reporter.write(report, written);
  } catch (const std::runtime_error& e) {
    progress.summary(written);
    return refused(reporter, std::string("cannot write the report: ") + e.what());
  } catch (const Interrupted& e) {  // a reader that stalled (a pipe, a FIFO) kept a report waiting: it is not whole
    progress.summary(written);
    print_line("compare", "stopped by signal " + std::to_string(e.signal) + " while a report was written");
    return kExitInterrupted;
  }
  progress.summary(written);
  reporter.tell(report, args.verbosity);
  int code = report.failed() ? kExitFailed : kExitOk;
  if (const int sig = detail::stop_signal) {  // it came after the last scenario: the reports are whole
    print_line("compare", "stopped by signal " + std::to_string(sig) + " as the reports were written");
    code = kExitInterrupted;
  }
  if (args.process_ends_after) {
    keep_until_exit(std::move(report));
    keep_until_exit(std::move(gold));
    keep_until_exit(std::move(candidate));
  }
  return code;
}

}  // namespace parity
