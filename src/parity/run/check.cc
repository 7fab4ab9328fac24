// `parity check`: forks the two runs, forwards their output under their names, then compares them (check.h).
#include "check.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "deadline.h"
#include "interpreter.h"
#include "outcome.h"
#include "process.h"
#include "resources.h"
#include "text.h"

namespace parity {
namespace {

// The runs, for the signal handler: a SIGINT or SIGTERM sent to `parity check` alone (a CI job's timeout, `kill`) is
// passed on as SIGTERM, so that each run stops as `parity run` does and its manifest lists what finished. A terminal's
// ^C reaches the runs directly as well (they share this process's group); a second SIGTERM changes nothing for them.
volatile std::sig_atomic_t g_check_signal = 0;
volatile pid_t g_run_pids[2] = {-1, -1};

extern "C" void on_check_signal(int sig) {
  g_check_signal = sig;
  for (const pid_t pid : g_run_pids)
    if (pid > 0) ::kill(pid, SIGTERM);
}

// Outside the runs (before they start, between them and the compare): the check's signal and the compare's
// (deadline.h), so that no run starts and the compare, should it already be on its way, stops at once.
extern "C" void on_check_or_compare_signal(int sig) {
  on_check_signal(sig);
  note_stop_signal(sig);
}

// One of the two runs: a forked copy of this process doing what `parity run` does.
struct RunSide {
  explicit RunSide(const char* run_name) : name(run_name) {}
  const char* name;  ///< "gold" or "candidate": how its lines are marked, and what the messages call it
  pid_t pid = -1;
  int output = -1;        ///< the read end of its stdout and stderr (one pipe), -1 once it ended
  std::string partial;    ///< the unfinished last line read
  int code = kExitUsage;  ///< its exit code once reaped (an end by a signal mapped to one: reap_run)
  bool reaped = false;
  bool stopped = false;  ///< stopped by the check because the other run ended it (follow_runs): not its own verdict
};

// How long a run that ends the check (ends_check) leaves the other to end on its own before stopping it: both runs
// refuse a bad --scenarios path or selection within milliseconds of each other, and each should say so itself.
constexpr int kOtherRunGraceMs = 1000;

// The child's side of start_run: never returns. The handlers are reset first, so that a signal before
// run_scenarios installs its own ends the run (check reads that as interrupted) instead of passing it on again.
// A check killed outright (SIGKILL: a CI job's timeout) stops its runs as a SIGTERM does: each ends its workers and
// what they started, where they had gone on to their end unwatched.
[[noreturn]] void run_in_child(const RunOptions& options, int output, pid_t check) {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  detail::stop_signal = 0;  // the compare's flag (a signal before this fork) is not the run's
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != check) ::_exit(kExitInterrupted);  // ... even one that died before the line above
  ::dup2(output, STDOUT_FILENO);
  ::dup2(output, STDERR_FILENO);
  int code = kExitUsage;
  try {
    code = run_scenarios(options);
  } catch (const std::exception& e) {
    print_line("run", printable(e.what(), Newlines::kKeep));
  }
  std::fflush(nullptr);
  ::_exit(code);
}

// Forks `side`'s run: a copy of this process, its interpreter started (check_scenarios), which the run itself never
// uses but its workers do when they are forks of it (RunOptions::in_process_worker).
void start_run(RunSide& side, const RunOptions& options, int slot) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // what this process has buffered must not be written by the copy as well
  const pid_t check = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("cannot fork the ") + side.name + " run: " + std::strerror(error));
  }
  if (pid == 0) run_in_child(options, fds[1], check);
  ::close(fds[1]);
  side.pid = pid;
  g_run_pids[slot] = pid;
  side.output = fds[0];
}

// Writes the complete lines of `side`'s output read so far to stderr, each marked with its name.
void forward_lines(RunSide& side, bool at_end) {
  if (at_end && !side.partial.empty() && side.partial.back() != '\n') side.partial += '\n';
  std::size_t start = 0;
  for (std::size_t newline; (newline = side.partial.find('\n', start)) != std::string::npos; start = newline + 1)
    std::fprintf(stderr, "[%s] %.*s", side.name, static_cast<int>(newline + 1 - start), side.partial.data() + start);
  side.partial.erase(0, start);
  std::fflush(stderr);
}

// Reads what `side` wrote; at its end of output, closes the pipe.
void read_run_output(RunSide& side) {
  char buffer[1 << 16];
  const ssize_t n = ::read(side.output, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n > 0) {
    side.partial.append(buffer, static_cast<std::size_t>(n));
    return forward_lines(side, false);
  }
  forward_lines(side, true);
  ::close(side.output);
  side.output = -1;
}

// Waits for `side`'s process and keeps its exit code; an end by a stop signal counts as interrupted, any other
// signal (the run's own crash) as an infrastructure error, said on stderr.
void reap_run(RunSide& side) {
  // No signal is passed on to it from here: once reaped, its pid may be another process's. Until then it stays a
  // zombie at worst, its pid not reused.
  for (volatile pid_t& pid : g_run_pids)
    if (pid == side.pid) pid = -1;
  int status = 0;
  while (::waitpid(side.pid, &status, 0) < 0 && errno == EINTR) {
  }
  side.reaped = true;
  if (WIFEXITED(status)) {
    side.code = WEXITSTATUS(status);
    return;
  }
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  side.code = sig == SIGINT || sig == SIGTERM ? kExitInterrupted : kExitUsage;
  print_line("check", std::string("the ") + side.name + " run ended by signal " + std::to_string(sig) + " (" +
                          (::strsignal(sig) ? ::strsignal(sig) : "?") + ")");
}

int milliseconds_until(std::chrono::steady_clock::time_point when) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(when - std::chrono::steady_clock::now()).count();
  return static_cast<int>(std::max<decltype(left)>(left, 0));
}

// Whether a run's exit code ends the check before its compare (stop_code): anything but a finished run's 0 or 1.
bool ends_check(int code) { return code != kExitOk && code != kExitFailed; }

// Stops `other` as SIGTERM to the check would (its manifest lists what finished; check --resume finishes it) once
// `ended` has ended the check: a refused backend or resume on one side must not leave the other running for nothing.
void stop_other_run(const RunSide& ended, RunSide& other) {
  if (other.reaped || other.pid <= 0) return;
  print_line("check", std::string("the ") + ended.name + " run exited " + std::to_string(ended.code) +
                          ": stopping the " + other.name + " run");
  other.stopped = true;
  ::kill(other.pid, SIGTERM);
}

// Forwards both runs' output until both have closed it (their workers' output goes to the runs, never here), reaping
// each as its output ends: a run that ends the check stops the other once kOtherRunGraceMs have passed. When the
// first ends and leaves the check going, `first_ended` is called with the other, which still runs.
void follow_runs(std::array<RunSide, 2>& sides, const std::function<void(RunSide&)>& first_ended) {
  constexpr auto kNever = std::chrono::steady_clock::time_point::max();
  auto stop_at = kNever;  // set once a run ends the check
  for (;;) {
    std::array<pollfd, 2> fds{};
    std::array<RunSide*, 2> open{};
    nfds_t count = 0;
    for (RunSide& side : sides)
      if (side.output >= 0) {
        fds[count] = {side.output, POLLIN, 0};
        open[count++] = &side;
      }
    if (count == 0) return;
    const int ready = ::poll(fds.data(), count, stop_at == kNever ? -1 : milliseconds_until(stop_at));
    if (ready < 0) continue;                            // EINTR: a signal passed on to the runs
    if (std::chrono::steady_clock::now() >= stop_at) {  // the grace is over: the run still going stops
      for (std::size_t i = 0; i < sides.size(); ++i)
        if (sides[i].reaped && ends_check(sides[i].code) && !sides[i].stopped) stop_other_run(sides[i], sides[1 - i]);
      stop_at = kNever;
    }
    for (nfds_t i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      read_run_output(*open[i]);
      if (open[i]->output >= 0) continue;
      reap_run(*open[i]);  // its output ended with it
      if (ends_check(open[i]->code) && !open[i]->stopped && !g_check_signal && stop_at == kNever)
        stop_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(kOtherRunGraceMs);
      else if (count == 2 && !ends_check(open[i]->code) && !g_check_signal && first_ended)
        first_ended(*open[1 - i]);
    }
  }
}

// What ends a check before its compare, strongest first: an interrupted run, a refused one (a bad backend, path or
// selection), a selection of nothing. kExitOk when both runs finished (with or without failed scenarios).
int stop_code(const std::array<RunSide, 2>& sides) {
  if (g_check_signal) return kExitInterrupted;
  for (const int code : {int{kExitInterrupted}, int{kExitUsage}, int{kExitNoTests}})
    for (const RunSide& side : sides)
      if (side.code == code && !side.stopped) return code;
  for (const RunSide& side : sides)
    if (ends_check(side.code) && !side.stopped) return kExitUsage;  // an exit code run never gives
  return kExitOk;
}

std::string stop_message(const std::array<RunSide, 2>& sides) {
  if (sides[0].pid < 0) return "stopped by signal " + std::to_string(g_check_signal) + " before the runs: nothing run";
  std::string ended;
  for (const RunSide& side : sides)
    ended += std::string(ended.empty() ? "" : ", ") + "the " + side.name + " run exited " + std::to_string(side.code);
  return ended + ": nothing compared";
}

// The two runs side by side, their ends in `sides`; SIGINT and SIGTERM passed on to them meanwhile. The compare that
// follows handles its signals as `parity compare` does. `first_ended`: as follow_runs.
void run_both(const RunOptions& gold, const RunOptions& candidate, std::array<RunSide, 2>& sides,
              const std::function<void(RunSide&)>& first_ended) {
  StopSignalHandler signals(on_check_signal);
  if (g_check_signal) return;  // it came before this handler: no run starts (stop_code says interrupted)
  start_run(sides[0], gold, 0);
  try {
    start_run(sides[1], candidate, 1);
  } catch (...) {
    for (RunSide& side : sides)
      if (side.pid > 0) ::kill(side.pid, SIGTERM);
    follow_runs(sides, nullptr);
    throw;
  }
  follow_runs(sides, first_ended);
}

// The compare's set-up that needs neither manifest (warm_compare: the backends' reducers, the probes' module), done
// once the first run has ended well, beside the slower run's added workers (check_scenarios): it had been ~30 ms of
// the serial step between the runs and the compare's processes (bench/README, issue #20 target 2). The backends as
// their runs record them.
void warm_compare_early(const CheckOptions& options) {
  try {
    warm_compare({{"spec", "gold"}, {"role", "gold"}}, {{"spec", options.run.backend}, {"role", "candidate"}},
                 options.compare.options);
  } catch (const std::exception&) {  // compare_runs loads them again and says what fails
  }
}

// What the compare takes from the runs: their directories, the probe, the scenario paths and the backend they ran
// (this command ran their code already, so compare may import them for their reducers), and twice the runs' jobs
// (both runs' workers' worth of processes).
void fill_compare(CheckOptions& options) {
  CompareCommand& compare = options.compare;
  compare.gold = check_gold_dir(options.run.out).string();
  compare.candidate = check_candidate_dir(options.run.out).string();
  compare.options.pickle_probe = options.run.pickle_probe;
  compare.options.jobs = 2 * options.run.jobs;
  // Absolute, as the repro commands that name them are pasted elsewhere.
  const auto absolute = [](const std::string& path) {
    return std::filesystem::absolute(path).lexically_normal().string();
  };
  for (const std::string& path : options.run.selection.paths)
    if (path != resources().scenarios)  // trusted always: the repro commands need not name it
      compare.options.trusted_scenarios.push_back(absolute(path));
  const std::string& backend = options.run.backend;
  compare.options.trusted_backends.push_back(looks_like_path(backend) ? absolute(backend) : backend);
}

}  // namespace

std::filesystem::path check_gold_dir(const std::filesystem::path& out) { return out / "gold"; }
std::filesystem::path check_candidate_dir(const std::filesystem::path& out) { return out / "candidate"; }

int check_scenarios(CheckOptions& options, CompareReporter& reporter) {
  RunOptions& run = options.run;
  run.backend = backend_name(run);
  if (run.backend.empty()) {
    print_line("check", "no candidate backend: give --backend NAME (or set PARITY_BACKEND)");
    return kExitUsage;
  }
  // Each run's own lines are its failures and its summary; the compare shows every scenario.
  run.verbosity = options.compare.verbosity == Verbosity::kVerbose ? Verbosity::kNormal : Verbosity::kQuiet;
  // The run that ends last is given as many more workers as the first had (run.jobs) where forks make them cheap:
  // the gold run of 2,000 small scenarios ended up to 0.25 s before the fsproxy run here, a core idle meanwhile.
  run.workers_on_signal = run.jobs;
  RunOptions gold = run, candidate = run;
  gold.backend = gold.role = "gold";
  gold.out = check_gold_dir(run.out);
  candidate.role = "candidate";
  candidate.out = check_candidate_dir(run.out);
  g_check_signal = 0;
  std::array<RunSide, 2> sides{RunSide("gold"), RunSide("candidate")};
  std::optional<StopSignalHandler> until_compare;
  try {
    // Before the forks: the compare needs it, and the runs' workers, forks of the runs given in_process_worker,
    // begin with the interpreter and NumPy loaded instead of each starting its own.
    // From before the interpreter's start (whose NumPy import a Ctrl-C had broken: exit 2 with a traceback), through
    // the gap between the runs (run_both's own handler) and the compare (compare_results'), a Ctrl-C or SIGTERM stops
    // the check: no run starts, or the compare stops at once; no report, exit 130. Python's handler, back between the
    // runs and the compare, had made it a KeyboardInterrupt in the first scenario's reducer, that scenario's error,
    // and the rest compared on. Installed first, as compare_results' is, Python installs none of its own.
    until_compare.emplace(on_check_or_compare_signal);
    start_interpreter();
    catch_more_workers_signal();  // before the forks: each run has it from its first instruction
    fill_compare(options);
    run_both(gold, candidate, sides, [&options](RunSide& other) {
      ::kill(other.pid, SIGUSR1);  // more workers for it (RunOptions::workers_on_signal), on the cores freed
      warm_compare_early(options);
    });
  } catch (const std::exception& e) {
    print_line("check", printable(e.what(), Newlines::kKeep));
    return kExitUsage;
  }
  if (const int code = stop_code(sides); code != kExitOk) {
    print_line("check", stop_message(sides));
    return code;
  }
  const int code = compare_results(options.compare, reporter);
  // A run's failed scenario is a failure of the check even where compare, reading both runs, counted it otherwise.
  const bool run_failed = sides[0].code == kExitFailed || sides[1].code == kExitFailed;
  return code == kExitOk && run_failed ? kExitFailed : code;
}

}  // namespace parity
