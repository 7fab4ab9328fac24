// Child processes (see process.h): fork/exec with three pipes, non-blocking reads and writes, waits with deadlines.
#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "safe_file.h"

namespace parity {
namespace {

struct Pipe {
  int read = -1, write = -1;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + strerror(errno));
  return {fds[0], fds[1]};
}

// A worker's output pipe, enlarged to kOutputPipeBytes where the system allows (best effort: a refusal leaves the
// usual 64 KiB). The supervisor reads a busy worker's quiet output only with its next reply (Supervisor::
// poll_workers): a scenario printing more than the pipe holds between two looks waits for the next one, up to 100 ms.
Pipe make_output_pipe() {
  Pipe pipe = make_pipe();
  ::fcntl(pipe.read, F_SETPIPE_SZ, kOutputPipeBytes);
  return pipe;
}

// A socket pair as a Pipe: `read` the child's end, `write` the parent's (both ways, and descriptors can travel).
Pipe make_socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error(std::string("cannot create a socket pair: ") + strerror(errno));
  return {fds[1], fds[0]};
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The child of an InProcessEntry: nothing of the parent's but its three channels stays open (the parent's ends of
// other workers' pipes would keep those workers from seeing their end), then the worker runs here. The process is a
// copy of a single-threaded one (a run's supervisor), so that anything may be called.
[[noreturn]] void run_entry(const InProcessEntry& entry, int argc, char** argv) {
  constexpr unsigned kLow = std::min(protocol::kReplyFd, protocol::kCommandFd);
  constexpr unsigned kHigh = std::max(protocol::kReplyFd, protocol::kCommandFd);
  static_assert(kHigh == kLow + 1, "the two protocol descriptors are neighbours");
  ::close_range(3, kLow - 1, 0);
  ::close_range(kHigh + 1, ~0U, 0);
  int code = 127;
  try {
    code = entry(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: %s\n", e.what());
  }
  std::fflush(nullptr);
  ::_exit(code);
}

// In the child, between fork and exec: only async-signal-safe calls. Commands and replies on the protocol's high
// descriptors, output on 1 and 2, stdin /dev/null (a scenario that reads stdin must not swallow the commands).
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const Pipe& in, const Pipe& reply, const Pipe& out,
                             pid_t parent, const InProcessEntry* entry) {
  ::setpgid(0, 0);
  // A supervisor killed outright takes its workers with it, and (end_group_when_supervisor_gone) what they started.
  ::prctl(PR_SET_PDEATHSIG, kSupervisorGoneSignal);
  if (::getppid() != parent) ::_exit(127);  // ... even when it died before the line above
  // SIGTERM's default action and no signal blocked, whatever parity was started with (a runner that blocks or ignores
  // SIGTERM): what a worker starts shields itself from SIGTERM only by asking to (kill_group_but_cleaners spares it).
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGTERM, &default_action, nullptr);
  // Moved above the targets first: a pipe may already sit on a target, which a direct dup2 would clobber (or, on
  // itself, leave close-on-exec). dup2 onto a different descriptor clears O_CLOEXEC; the copies on 10 and up close
  // at exec.
  const int null = ::fcntl(::open("/dev/null", O_RDONLY | O_CLOEXEC), F_DUPFD_CLOEXEC, 10);
  const int output = ::fcntl(out.write, F_DUPFD_CLOEXEC, 10), replies = ::fcntl(reply.write, F_DUPFD_CLOEXEC, 10);
  const int commands = ::fcntl(in.read, F_DUPFD_CLOEXEC, 10);
  const bool moved = ::dup2(null, 0) == 0 && ::dup2(output, 1) == 1 && ::dup2(output, 2) == 2 &&
                     ::dup2(replies, protocol::kReplyFd) == protocol::kReplyFd &&
                     ::dup2(commands, protocol::kCommandFd) == protocol::kCommandFd;
  if (moved) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (entry) run_entry(*entry, static_cast<int>(argv.size()), args.data());
    ::execv(args[0], args.data());
  }
  static const char msg[] = "parity: cannot start the worker process (its descriptors or the program)\n";
  [[maybe_unused]] ssize_t ignored = ::write(output, msg, sizeof msg - 1);
  ::_exit(127);
}

// Reads what a non-blocking descriptor has, 1 MiB at most (a child that writes as fast as this reads must not keep
// the caller here); false at end of file (or a hard error). A pipe's read that returns less than asked found it empty:
// no second read to hear EAGAIN (or the end, which the caller's next poll reports), two system calls a scenario fewer.
bool drain(int fd, std::string& into) {
  char buffer[65536];
  for (std::size_t total = 0; total < (std::size_t{1} << 20);) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      total += static_cast<std::size_t>(n);
      if (static_cast<std::size_t>(n) < sizeof buffer) return true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// One kForkRequest byte on `socket`, carrying `fds` (SCM_RIGHTS); false when it cannot be sent (the server ended).
bool send_fork_request(int socket, const int (&fds)[protocol::kForkDescriptors]) {
  char byte = protocol::kForkRequest;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(header), fds, sizeof fds);
  ssize_t n;
  while ((n = ::sendmsg(socket, &message, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == 1;
}

// The server's answer to a fork request: the new worker's pid, 0 when it could not fork, -1 when none came within
// `seconds` (or the server ended).
pid_t receive_forked_pid(int socket, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  pid_t pid = 0;
  std::size_t got = 0;
  while (got < sizeof pid) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd fd{socket, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) == 0) return -1;
    const ssize_t n = ::read(socket, reinterpret_cast<char*>(&pid) + got, sizeof pid - got);
    if (n > 0)
      got += static_cast<std::size_t>(n);
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
      return -1;
  }
  return pid;
}

// The processes whose /proc/PID/stat fields satisfy `wanted(ppid, pgrp)`.
template <class Wanted>
std::vector<pid_t> processes_where(Wanted wanted) {
  std::vector<pid_t> found;
  std::error_code ec;
  // increment(ec): a process ending as it is listed must end the scan at worst, never throw out of it.
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    std::getline(stat, text);
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so the fields start after the last ')'.
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(text.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 &&
        wanted(static_cast<pid_t>(ppid), static_cast<pid_t>(pgrp)))
      found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

// Whether `pid` ignores or blocks SIGTERM (SigIgn, SigBlk in /proc/PID/status): a process shielding itself from it.
// Resource trackers are started with SIGTERM blocked and ignore it once running, to outlive what they track.
bool shields_from_sigterm(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if ((line.starts_with("SigIgn:") || line.starts_with("SigBlk:")) &&
        (std::strtoull(line.c_str() + 7, nullptr, 16) >> (SIGTERM - 1)) & 1)
      return true;
  return false;
}

// SIGKILLs `pid` unless it shields itself from SIGTERM: such a process, a cleaner, gets SIGTERM instead and is spared
// (true). One that ignores SIGTERM (a resource tracker) goes on; one that blocks it ends when it unblocks it (a shell
// between fork and exec), unless it ignores it by then (a resource tracker still starting up).
bool kill_unless_cleaner(pid_t pid) {
  if (!shields_from_sigterm(pid)) {
    ::kill(pid, SIGKILL);
    return false;
  }
  ::kill(pid, SIGTERM);
  return true;
}

// The processes kill_group_but_cleaners spared, each by a pidfd (Linux 5.3; one that cannot be had is left to
// kill_children) and the time it was spared: kill_overdue_cleaners ends those that outlive their grace.
struct Spared {
  int pidfd;
  std::chrono::steady_clock::time_point when;
};
std::vector<Spared>& spared_cleaners() {
  static std::vector<Spared> spared;
  return spared;
}

void remember_spared(pid_t pid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) spared_cleaners().push_back({fd, std::chrono::steady_clock::now()});
}

// SIGKILLs the process group `pgid` but for its cleaners (kill_unless_cleaner): multiprocessing's and loky's resource
// trackers, once every other process holding their pipe has ended, remove what those registered (joblib's memmapping
// folders, loky's semaphores in /dev/shm) and end. A SIGKILL of the whole group had left those in /dev/shm for good
// after every stopped worker that was running a joblib pool. What is spared is killed after kCleanerGraceSeconds
// (kill_overdue_cleaners) or with the run (kill_children), whichever comes first. The group is stopped while its
// members are read from /proc, so that none forks another unseen.
void kill_group_but_cleaners(pid_t pgid) {
  if (::kill(-pgid, SIGSTOP) != 0) return;  // no process in it
  bool spared = false;
  try {
    for (const pid_t member : processes_where([pgid](pid_t, pid_t pgrp) { return pgrp == pgid; }))
      if (kill_unless_cleaner(member)) {
        remember_spared(member);
        spared = true;
      }
  } catch (...) {  // the members could not be read (no memory): all of them die, none is left stopped
    ::kill(-pgid, SIGKILL);
  }
  if (spared) ::kill(-pgid, SIGCONT);
}

// SIGKILLs `pid` and the process group it leads (but for its cleaners, unless `all`): the group for what it started,
// the process itself in case it left that group (setpgid) or leads another (setsid).
void kill_process_and_group(pid_t pid, bool all = false) {
  ::kill(pid, SIGKILL);
  if (all)
    ::kill(-pid, SIGKILL);
  else
    kill_group_but_cleaners(pid);
}

}  // namespace

void OutputTail::append(const char* data, std::size_t size) {
  partial_.append(data, size);
  std::size_t start = 0;
  for (std::size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
    if (partial_.compare(start, nl - start, protocol::kOutputRestart) == 0) {
      lines_.clear();
    } else {
      lines_.push_back(partial_.substr(start, nl - start));
      if (lines_.size() > max_lines_) lines_.pop_front();
    }
    start = nl + 1;
  }
  partial_.erase(0, start);
  if (partial_.size() > 4096) partial_.erase(0, partial_.size() - 4096);  // a line without end is kept short
}

std::string OutputTail::text() const {
  std::string out;
  for (const std::string& line : lines_) out += line + "\n";
  return out + partial_;
}

void OutputTail::clear() {
  lines_.clear();
  partial_.clear();
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, std::size_t max_reply_line, bool command_socket,
                           const InProcessEntry* entry)
    : max_reply_line_(max_reply_line) {
  // A command to a child that died must be an error return of send_line, not a SIGPIPE that kills the parent.
  static const bool sigpipe_ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  (void)sigpipe_ignored;
  Pipe in = command_socket ? make_socket_pair() : make_pipe(), reply = make_pipe(), out = make_output_pipe();
  const pid_t parent = ::getpid();
  if (entry) std::fflush(nullptr);  // what this process buffered, the copy would write again at its end
  pid_ = ::fork();
  if (pid_ < 0) {
    for (int* fd : {&in.read, &in.write, &reply.read, &reply.write, &out.read, &out.write}) close_fd(*fd);
    throw std::runtime_error(std::string("cannot fork a worker process: ") + strerror(errno));
  }
  if (pid_ == 0) exec_child(argv, in, reply, out, parent, entry);
  ::setpgid(pid_, pid_);  // also here: whichever of parent and child runs first, the group exists before a kill
  close_fd(in.read);
  close_fd(reply.write);
  close_fd(out.write);
  adopt_channels(in.write, reply.read, out.read);
}

void ChildProcess::adopt_channels(int commands, int replies, int output) {
  stdin_fd_ = commands;
  reply_fd_ = replies;
  output_fd_ = output;
  for (int fd : {stdin_fd_, reply_fd_, output_fd_}) set_nonblocking(fd);
}

std::unique_ptr<ChildProcess> ChildProcess::forked_by(ChildProcess& server, double seconds,
                                                      std::size_t max_reply_line) {
  std::unique_ptr<ChildProcess> child(new ChildProcess(max_reply_line));
  Pipe in = make_pipe(), reply = make_pipe(), out = make_output_pipe();
  const int theirs[protocol::kForkDescriptors] = {in.read, reply.write, out.write};
  const bool asked = server.flush_commands() && send_fork_request(server.stdin_fd_, theirs);
  const pid_t pid = asked ? receive_forked_pid(server.stdin_fd_, seconds) : -1;
  for (int* fd : {&in.read, &reply.write, &out.write}) close_fd(*fd);
  if (pid <= 0) {
    for (int* fd : {&in.write, &reply.read, &out.read}) close_fd(*fd);
    throw std::runtime_error(pid == 0 ? "the fork server could not fork a worker"
                                      : "the fork server did not answer within " + std::to_string(int(seconds)) +
                                            " s (it ended, or hangs)");
  }
  child->pid_ = pid;
  child->adopt_channels(in.write, reply.read, out.read);
  return child;
}

ChildProcess::~ChildProcess() {
  wait_end(0);
  for (int* fd : {&stdin_fd_, &reply_fd_, &output_fd_}) close_fd(*fd);
}

bool ChildProcess::send_line(const std::string& line) {
  if (stdin_fd_ < 0) return false;
  pending_ += line + "\n";
  return flush_commands();
}

bool ChildProcess::flush_commands() {
  while (!pending_.empty()) {
    const ssize_t n = ::write(stdin_fd_, pending_.data(), pending_.size());
    if (n > 0) {
      pending_.erase(0, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);  // full: the rest goes with a later call
  }
  return true;
}

bool ChildProcess::read_replies(std::vector<std::string>& lines) {
  const bool open = drain(reply_fd_, reply_partial_);
  std::size_t start = 0;
  for (std::size_t nl = reply_partial_.find('\n'); nl != std::string::npos; nl = reply_partial_.find('\n', start)) {
    lines.push_back(reply_partial_.substr(start, nl - start));
    start = nl + 1;
  }
  reply_partial_.erase(0, start);
  if (reply_partial_.size() > max_reply_line_) {
    reply_partial_.clear();
    throw std::length_error("a reply line longer than " + std::to_string(max_reply_line_) + " bytes");
  }
  return open;
}

bool ChildProcess::read_output() {
  std::string data;
  const bool open = drain(output_fd_, data);
  tail_.append(data.data(), data.size());
  last_output_bytes_ = data.size();
  return open;
}

std::size_t ChildProcess::resident_bytes() const {
  std::ifstream statm("/proc/" + std::to_string(pid_) + "/statm");
  std::size_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

bool ChildProcess::exited() {
  if (waited_) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_)
    return false;
  // Unreaped, its pid is still taken, so the group of that id is still what it started (what left the group is
  // the orphan reaper's, process.h).
  kill_group_but_cleaners(pid_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  waited_ = true;
  read_output();  // whatever it wrote last, up to its end
  end_ = describe_wait_status(status);
  return true;
}

void ChildProcess::kill() {
  if (waited_ || pid_ <= 0) return;
  kill_process_and_group(pid_);
}

void ChildProcess::end_commands() { close_fd(stdin_fd_); }

std::string ChildProcess::finish(double grace) {
  end_commands();
  return wait_end(grace);
}

// Waits for its end up to `seconds`; true when it ended. A pidfd (Linux 5.3) wakes the wait at the exit: polled every
// 5 ms, a run's last stretch (each worker's end, then the fork server's) lost up to 5 ms at each. Where no pidfd can
// be had (an older kernel, a sandbox), it polls.
bool ChildProcess::wait_until(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  if (exited() || seconds <= 0) return waited_;
  // Readable once the process has ended; -1 where the kernel has no pidfd_open (before 5.3): a 5 ms poll then.
  const FileDescriptor pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
  bool said_ended = false;  // the pidfd became readable
  while (!exited()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (pidfd.get() >= 0 && !said_ended) {
      pollfd ended{pidfd.get(), POLLIN, 0};
      const int ready = ::poll(&ended, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1000)));
      said_ended = ready > 0;
      if (ready >= 0 || errno == EINTR) continue;
    }
    // No pidfd, or one that said the process ended where waitid cannot see it (reaped elsewhere: ECHILD; it stays
    // readable): polled every 5 ms, not spun on to the deadline.
    std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(5)));
  }
  return waited_;
}

std::string ChildProcess::wait_end(double grace) {
  if (wait_until(grace)) return end_;
  kill();
  killed_ = true;
  // SIGKILL ends a process at once unless it is stuck in the kernel (a hung file system): then it is left.
  if (wait_until(10.0)) return end_;
  waited_ = true;
  return end_ = "no end within 10 s of SIGKILL";
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "signal " + std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : "");
  }
  return "status " + std::to_string(status);
}

OrphanReaper::OrphanReaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }

OrphanReaper::~OrphanReaper() {
  kill_children();
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

std::vector<pid_t> children_of_this_process() {
  const pid_t self = ::getpid();
  return processes_where([self](pid_t ppid, pid_t) { return ppid == self; });
}

void reap_children(const std::set<pid_t>& keep) {
  for (const pid_t child : children_of_this_process())
    if (!keep.count(child)) ::waitpid(child, nullptr, WNOHANG);
}

namespace {

// SIGKILLs the children of this process with their groups and reaps them, again for the orphans that then become
// children, a bounded number of rounds; with `spare_cleaners`, cleaners are spared (kill_unless_cleaner).
std::size_t kill_children_rounds(bool spare_cleaners) {
  std::size_t killed = 0;
  for (int round = 0; round < 20; ++round) {
    std::vector<pid_t> children;
    for (const pid_t child : children_of_this_process())
      if (!spare_cleaners || !kill_unless_cleaner(child)) children.push_back(child);
    if (children.empty()) break;
    for (const pid_t child : children)
      kill_process_and_group(child, !spare_cleaners);  // a daemon leads its own group (setsid): it goes with it
    killed += children.size();
    // Their ends make their own children ours: the next round finds them. A kill takes effect at once, but the
    // reaping waits a little for each, a second at most in all.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (const pid_t child : children)
      while (::waitpid(child, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return killed;
}

// Waits up to `seconds` for the cleaners left (children shielding themselves from SIGTERM) to end, reaping them.
void wait_for_cleaners(double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    reap_children({});
    const std::vector<pid_t> children = children_of_this_process();
    if (std::none_of(children.begin(), children.end(), shields_from_sigterm)) return;
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

const int kSupervisorGoneSignal = SIGRTMIN + 4;  // past glibc's own (SIGRTMIN is after those); nothing sends it

namespace {
extern "C" void end_group_at_supervisor_gone(int) {
  ::kill(0, SIGTERM);      // this process's group, this process too; async-signal-safe, as is the rest
  ::_exit(128 + SIGTERM);  // in case this process handles or ignores SIGTERM (a scenario's handler)
}
}  // namespace

void end_group_when_supervisor_gone() {
  struct sigaction action {};
  action.sa_handler = end_group_at_supervisor_gone;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(kSupervisorGoneSignal, &action, nullptr);
}

std::size_t kill_overdue_cleaners(double grace) {
  std::vector<Spared>& spared = spared_cleaners();
  if (spared.empty()) return 0;
  const auto now = std::chrono::steady_clock::now();
  std::size_t killed = 0;
  std::erase_if(spared, [&](const Spared& s) {
    pollfd ended{s.pidfd, POLLIN, 0};  // a pidfd reads as ready once its process has ended
    const bool gone = ::poll(&ended, 1, 0) > 0;
    if (!gone && now - s.when < std::chrono::duration<double>(grace)) return false;
    if (!gone && ::syscall(SYS_pidfd_send_signal, s.pidfd, SIGKILL, nullptr, 0) == 0) ++killed;
    ::close(s.pidfd);
    return true;
  });
  return killed;
}

std::size_t kill_children() {
  // No child left and no cleaner spared, as at an orderly end: one scan of /proc rather than the rounds' four (~1 ms
  // each here, more on a host running more processes).
  if (spared_cleaners().empty() && children_of_this_process().empty()) return 0;
  // Everything else first, so that the cleaners' pipes close: they remove what it left and end within the grace.
  std::size_t killed = kill_children_rounds(true);
  wait_for_cleaners(2.0);
  killed += kill_children_rounds(false);
  kill_overdue_cleaners(0.0);  // none is left by now: their pidfds are closed
  return killed;
}

}  // namespace parity
