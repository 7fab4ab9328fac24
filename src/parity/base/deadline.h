// A time limit on one scenario's compare (`compare --timeout`), and a stop signal, checked by its long loops as they
// go.
#pragma once

#include <signal.h>

#include <chrono>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <string>

namespace parity {

/// Thrown by check_deadline() once the current scenario's time is up; compare records it as status timeout.
struct TimeLimitExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Thrown by check_deadline() and check_interrupted() once a stop signal came (Ctrl-C, SIGTERM): the compare stops,
/// writes no report and exits 130. Not a std::exception, so that no scenario's handler takes it for that scenario's
/// error (before, a Ctrl-C was each compare process's current scenario's "internal error: KeyboardInterrupt", the
/// rest compared on, and the reports written with it, exit 1).
struct Interrupted {
  int signal;
};

namespace detail {
inline std::optional<std::chrono::steady_clock::time_point>& current_deadline() {
  static std::optional<std::chrono::steady_clock::time_point> deadline;
  return deadline;
}
inline volatile std::sig_atomic_t stop_signal = 0;  ///< set by note_stop_signal, a signal handler
}  // namespace detail

/// Whether a second stop signal ends the process (note_stop_signal): the parity program's, set by its main. Not in
/// the Python API's host, whose interpreter (a REPL, a notebook's kernel) a second Ctrl-C must not kill.
inline volatile std::sig_atomic_t second_stop_signal_ends_process = 0;

/// A signal handler (StopSignalHandler) for SIGINT and SIGTERM: check_interrupted throws from then on.
/// In the parity program (second_stop_signal_ends_process), a second signal ends the process by that signal at once:
/// code that never reaches a check (a scenario's reducer in an endless loop, under compare --jobs 1) is stopped by the
/// second Ctrl-C.
extern "C" inline void note_stop_signal(int sig) {
  if (detail::stop_signal && second_stop_signal_ends_process) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered once this handler returns (the signal is blocked while it runs)
  }
  detail::stop_signal = sig;
}

/// Throws Interrupted once note_stop_signal has run: between scenarios, and in check_deadline's loops.
inline void check_interrupted() {
  if (const int sig = detail::stop_signal) throw Interrupted{sig};
}

/// Clears the stop flag as it goes out of scope: declared before a StopSignalHandler, after the caller's handlers
/// are back. A Python API compare that a Ctrl-C stopped had left it set, and the caller's next compare stopped at once.
struct ClearedStopSignal {
  ClearedStopSignal() = default;
  ClearedStopSignal(const ClearedStopSignal&) = delete;
  ClearedStopSignal& operator=(const ClearedStopSignal&) = delete;
  ~ClearedStopSignal() { detail::stop_signal = 0; }
};

/// Installs `handler` for SIGINT and SIGTERM while it lives (without SA_RESTART: a blocked open or write returns
/// EINTR), then puts back what was there before: how `run` (runner.cc), `check` (check.cc) and `compare`
/// (compare_results.cc) end cleanly on a terminal's ^C or a CI job's SIGTERM, and how a report's wait on a reader
/// (write_named_file) ends.
class StopSignalHandler {
 public:
  explicit StopSignalHandler(void (*handler)(int)) {
    struct sigaction action {};
    action.sa_handler = handler;
    ::sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignalHandler() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignalHandler(const StopSignalHandler&) = delete;
  StopSignalHandler& operator=(const StopSignalHandler&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

/// Seconds from which a deadline is none (ScopedDeadline).
inline constexpr double kNoDeadlineBeyond = 1e9;

/// Sets the deadline `seconds` from now (none for seconds <= 0 or beyond kNoDeadlineBeyond) while it lives; the
/// previous one after.
class ScopedDeadline {
 public:
  explicit ScopedDeadline(double seconds) : previous_(detail::current_deadline()) {
    // Beyond ~31 years none either: a time point past ~292 years overflows the clock's nanoseconds (undefined; it
    // had made every compare of a run recorded with --timeout 1e10 a timeout at once). NaN is none too.
    detail::current_deadline() = seconds > 0 && seconds < kNoDeadlineBeyond
                                     ? std::optional(std::chrono::steady_clock::now() +
                                                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                         std::chrono::duration<double>(seconds)))
                                     : std::nullopt;
  }
  ~ScopedDeadline() { detail::current_deadline() = previous_; }
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

/// Throws TimeLimitExceeded (naming `where`) when the current deadline has passed. Cheap enough for every
/// block of elements or node of a walk.
inline void check_deadline(const char* where) {
  check_interrupted();
  const auto& deadline = detail::current_deadline();
  if (deadline && std::chrono::steady_clock::now() > *deadline)
    throw TimeLimitExceeded(std::string("time limit reached while comparing ") + where);
}

}  // namespace parity
