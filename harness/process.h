// Child processes for the run supervisor (runner.cc): spawn with pipes, read without blocking, kill, describe an end.
#pragma once

#include <sys/types.h>

#include <deque>
#include <string>
#include <vector>

namespace parity {

/// The last lines a process wrote (its stdout and stderr together), for the report of a crash or a timeout.
/// The line a worker prints before each scenario (harness/worker.cc): its output tail starts again there, so a crash
/// report shows the dying scenario's output only. Sent through the output pipe itself, it cannot be misordered with
/// what the scenarios print, as a reply on the other pipe could.
inline constexpr const char* kOutputRestart = "\x1e parity: next scenario \x1e";

class OutputTail {
 public:
  explicit OutputTail(std::size_t max_lines = 20) : max_lines_(max_lines) {}
  /// Appends output; a complete line equal to kOutputRestart drops everything before it.
  void append(const char* data, std::size_t size);
  /// The kept lines, the unfinished last one included, joined by '\n'.
  std::string text() const;
  void clear();

 private:
  std::size_t max_lines_;
  std::deque<std::string> lines_;
  std::string partial_;
};

/// One child: `argv` executed in its own process group (a terminal's Ctrl-C reaches the supervisor only), with a
/// pipe the parent writes commands to (file descriptor 4 in the child), a pipe for its replies (descriptor 3), its
/// stdout and stderr one pipe the parent reads into an OutputTail, and /dev/null as stdin. The first one makes the
/// parent ignore SIGPIPE, so that writing to a dead child fails instead of killing it.
class ChildProcess {
 public:
  /// Starts it; throws std::runtime_error when the process cannot be created.
  explicit ChildProcess(const std::vector<std::string>& argv);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int reply_fd() const { return reply_fd_; }
  int output_fd() const { return output_fd_; }

  /// Writes one line to its command pipe; false when it is gone (the pipe is closed).
  bool send_line(const std::string& line);
  /// Reads what is available on the reply pipe; complete lines go to `lines`. False at end of file.
  bool read_replies(std::vector<std::string>& lines);
  /// Reads what is available of its output into the tail; false at end of file.
  bool read_output();
  const OutputTail& output() const { return tail_; }

  /// Its resident memory in bytes (0 when it cannot be read).
  std::size_t resident_bytes() const;
  /// Whether it has ended, without waiting (reaps it when it has). A pipe can stay open after its end: whatever
  /// it started may hold it.
  bool exited();
  /// SIGKILLs its process group (the process and anything it started that stayed in the group).
  void kill_group();
  /// Closes its command pipe (a worker's signal to finish) and waits for it, `grace` seconds at most before
  /// killing its group; returns what ended it.
  std::string finish(double grace);
  /// Waits for it to end (after kill_group or end of file); returns what ended it: "exit code N", "signal N (SIGSEGV)".
  std::string wait_end();

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1, reply_fd_ = -1, output_fd_ = -1;
  bool waited_ = false;
  std::string end_;
  std::string reply_partial_;
  OutputTail tail_;
};

/// "exit code N" or "signal N (SIGNAME)" for a wait(2) status.
std::string describe_wait_status(int status);

}  // namespace parity
