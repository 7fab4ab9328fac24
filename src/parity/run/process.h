// Child processes for the run supervisor (runner.cc): spawn with pipes, read without blocking, kill, describe an end.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "deadline.h"  // StopSignalHandler, which run and check install
#include "protocol.h"

namespace parity {

/// The last lines a process wrote (its stdout and stderr together), for the report of a crash or a timeout.
class OutputTail {
 public:
  explicit OutputTail(std::size_t max_lines = 20) : max_lines_(max_lines) {}
  /// Appends output; a complete line equal to protocol::kOutputRestart drops everything before it.
  void append(const char* data, std::size_t size);
  /// The kept lines, the unfinished last one included, joined by '\n'.
  std::string text() const;
  void clear();

 private:
  std::size_t max_lines_;
  std::deque<std::string> lines_;
  std::string partial_;
};

/// What a child's output pipe is enlarged to where the system allows (fs.pipe-max-size is 1 MiB by default): the
/// supervisor reads a busy worker's quiet output only with its next reply, so a pipe this size keeps a scenario that
/// prints a lot from waiting on a full pipe.
inline constexpr int kOutputPipeBytes = 1 << 20;

/// A worker's command line run in this process, its exit code returned: what a ChildProcess given one does after the
/// fork instead of executing argv[0]. For `parity check` (check.cc), whose process has started the interpreter and
/// loaded NumPy before forking its runs: their workers begin with both, as the fork server's copies do.
using InProcessEntry = std::function<int(int argc, char** argv)>;

/// One child: `argv` executed in its own process group (a terminal's Ctrl-C reaches the supervisor only), with a
/// pipe the parent writes commands to (protocol::kCommandFd in the child), a pipe for its replies
/// (protocol::kReplyFd), its stdout and stderr one pipe the parent reads into an OutputTail, and /dev/null as stdin.
/// Nothing here blocks on the child: reads and writes are non-blocking and every wait has a deadline, so that a
/// child that closes its pipes, leaves its process group or ignores its commands cannot stall the parent. The first
/// one makes the parent ignore SIGPIPE, so that writing to a dead child fails instead of killing it.
class ChildProcess {
 public:
  /// The longest reply line it may send: past it, a reply is refused rather than kept growing in this process.
  static constexpr std::size_t kMaxReplyLine = std::size_t{1} << 28;

  /// Starts it; throws std::runtime_error when the process cannot be created. With `command_socket` its command
  /// channel is a socket pair instead of a pipe, which can carry descriptors: what a fork server needs (forked_by).
  /// With `entry` the child runs entry(argc, argv) instead of executing argv[0], with every other descriptor closed.
  explicit ChildProcess(const std::vector<std::string>& argv, std::size_t max_reply_line = kMaxReplyLine,
                        bool command_socket = false, const InProcessEntry* entry = nullptr);
  /// A worker forked by `server` (started with a command socket, protocol::kForkRequest): its pipes are made here and
  /// sent to the server, which forks it and hands it to this process (a child subreaper, OrphanReaper), so that it
  /// is this process's child like any other. Throws std::runtime_error when the server does not answer with a pid
  /// within `seconds` (it ended, or cannot fork).
  static std::unique_ptr<ChildProcess> forked_by(ChildProcess& server, double seconds,
                                                 std::size_t max_reply_line = kMaxReplyLine);
  /// Kills it (and its group) unless it ended, and reaps it.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  int reply_fd() const { return reply_fd_; }
  int output_fd() const { return output_fd_; }

  /// Queues one line for its command pipe and writes what the pipe takes; false when it is gone (the pipe closed).
  bool send_line(const std::string& line);
  /// Writes what the command pipe takes of the queued lines; false when it is gone.
  bool flush_commands();
  /// Reads what is available on the reply pipe; complete lines go to `lines`. False at end of file. Throws
  /// std::length_error for a line longer than `max_reply_line` (what is read of it is dropped).
  bool read_replies(std::vector<std::string>& lines);
  /// Reads what is available of its output into the tail; false at end of file.
  bool read_output();
  /// How many bytes the last read_output read.
  std::size_t last_output_bytes() const { return last_output_bytes_; }
  const OutputTail& output() const { return tail_; }

  /// Its resident memory in bytes (0 when it cannot be read).
  std::size_t resident_bytes() const;
  /// Whether it has ended, without waiting. When it has, what it started and left in its process group is killed
  /// (before it is reaped, so that the group's id cannot have been reused), then it is reaped. A pipe can stay
  /// open after its end: what it started outside its group may hold it.
  bool exited();
  /// SIGKILLs it and its process group: the group for what it started, the process itself in case it left the group.
  /// Members of the group that ignore or block SIGTERM (resource trackers) get SIGTERM instead, here and in exited(),
  /// so that they remove what the others left in /dev/shm; they are killed kCleanerGraceSeconds later at the latest
  /// (kill_overdue_cleaners), or with the run (kill_children).
  void kill();
  /// Closes its command pipe: a worker's signal to finish. Without waiting, so that several end side by side.
  void end_commands();
  /// end_commands(), then wait_end(grace).
  std::string finish(double grace);
  /// Waits `grace` seconds at most for it to end, then kills it (and waits a few seconds more at most); returns
  /// what ended it: "exit code N", "signal N (SIGSEGV)".
  std::string wait_end(double grace);
  /// Whether wait_end or finish had to kill it.
  bool was_killed() const { return killed_; }

 private:
  explicit ChildProcess(std::size_t max_reply_line) : max_reply_line_(max_reply_line) {}
  /// Takes the parent's ends of a started child's three channels.
  void adopt_channels(int commands, int replies, int output);
  bool wait_until(double seconds);

  std::size_t max_reply_line_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1, reply_fd_ = -1, output_fd_ = -1;
  bool waited_ = false, killed_ = false;
  std::string end_;
  std::string pending_;  ///< commands the pipe did not take yet
  std::size_t last_output_bytes_ = 0;
  std::string reply_partial_;
  OutputTail tail_;
};

/// Makes this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER) while it lives: a process a
/// worker's scenario started, even one that left the worker's group or session (a double-forked daemon), becomes
/// this process's child when its parent ends instead of escaping to init. Its end kills and reaps every child of
/// this process that is left (kill_children).
class OrphanReaper {
 public:
  OrphanReaper();
  ~OrphanReaper();
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;
};

/// The children of this process (from /proc).
std::vector<pid_t> children_of_this_process();
/// Reaps the children that ended, other than `keep` (the workers, which reap their own), without waiting.
void reap_children(const std::set<pid_t>& keep);
/// SIGKILLs every child of this process and its process group, reaps them, and again for the orphans that then
/// become children, a bounded number of rounds; returns how many it killed. Those that ignore or block SIGTERM
/// (resource trackers, which a worker's stop spared: process.cc, kill_group_but_cleaners) get SIGTERM and go last,
/// after up to 2 s to remove what the others left and end on their own.
std::size_t kill_children();

/// How long a process spared as a cleaner at a worker's stop (ChildProcess::kill, exited) may run on: a resource
/// tracker removes what its pool left within a second of the pool's end; anything else that ignores SIGTERM there (a
/// scenario's own process) must not live on until the run's end, a core and memory outside every limit.
inline constexpr double kCleanerGraceSeconds = 10.0;
/// SIGKILLs the processes spared as cleaners more than `grace` seconds ago that are still there, through the pidfd
/// taken when they were spared (never another process that reused a pid); returns how many. The run's supervisor
/// calls it at every turn of its loop.
std::size_t kill_overdue_cleaners(double grace = kCleanerGraceSeconds);

/// The signal a worker gets when its supervisor ends (PR_SET_PDEATHSIG; set where a worker starts: exec_child, the fork
/// server's become_worker): a real-time signal, which nothing else sends.
extern const int kSupervisorGoneSignal;
/// In a worker, before it starts anything: at kSupervisorGoneSignal, SIGTERM to its whole process group, then its end.
/// A supervisor killed outright (a CI job's timeout, the OOM killer) stops no worker (kill_group_but_cleaners), and
/// what a worker had started lived on without it: a joblib scenario's loky pool waits for good on a queue whose
/// manager is gone (seen 30 minutes after a killed run). What shields itself from SIGTERM is spared, as at a worker's
/// stop: a resource tracker then removes what its pool registered and ends.
void end_group_when_supervisor_gone();

/// "exit code N" or "signal N (SIGNAME)" for a wait(2) status.
std::string describe_wait_status(int status);

}  // namespace parity
