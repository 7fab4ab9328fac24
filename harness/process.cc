// Child processes (see process.h): fork/exec with three pipes, non-blocking reads, process-group kills.
#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <stdexcept>

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

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// In the child, between fork and exec: only async-signal-safe calls. Commands on fd 4, replies on fd 3, output on
// 1 and 2, stdin /dev/null (a scenario that reads stdin must not swallow the commands).
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const Pipe& in, const Pipe& reply, const Pipe& out,
                             pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);       // a supervisor killed outright (SIGKILL) takes its workers with it
  if (::getppid() != parent) ::_exit(127);  // ... even when it died before the line above
  // Moved above the targets first: a pipe may already sit on 3 or 4, which a direct dup2 would clobber (or, on
  // itself, leave close-on-exec). dup2 onto a different descriptor clears O_CLOEXEC.
  const int null = ::fcntl(::open("/dev/null", O_RDONLY | O_CLOEXEC), F_DUPFD_CLOEXEC, 10);
  const int output = ::fcntl(out.write, F_DUPFD_CLOEXEC, 10), replies = ::fcntl(reply.write, F_DUPFD_CLOEXEC, 10);
  const int commands = ::fcntl(in.read, F_DUPFD_CLOEXEC, 10);
  ::dup2(null, 0);
  ::dup2(output, 1);
  ::dup2(output, 2);
  ::dup2(replies, 3);
  ::dup2(commands, 4);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  static const char msg[] = "parity: cannot start the worker process\n";
  [[maybe_unused]] ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  ::_exit(127);
}

// Reads what a non-blocking descriptor has; false at end of file (or a hard error).
bool drain(int fd, std::string& into) {
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

}  // namespace

void OutputTail::append(const char* data, std::size_t size) {
  partial_.append(data, size);
  std::size_t start = 0;
  for (std::size_t nl = partial_.find('\n'); nl != std::string::npos; nl = partial_.find('\n', start)) {
    if (partial_.compare(start, nl - start, kOutputRestart) == 0) {
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

ChildProcess::ChildProcess(const std::vector<std::string>& argv) {
  // A command to a child that died must be an error return of send_line, not a SIGPIPE that kills the parent.
  static const bool sigpipe_ignored = std::signal(SIGPIPE, SIG_IGN) != SIG_ERR;
  (void)sigpipe_ignored;
  Pipe in = make_pipe(), reply = make_pipe(), out = make_pipe();
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    for (int* fd : {&in.read, &in.write, &reply.read, &reply.write, &out.read, &out.write}) close_fd(*fd);
    throw std::runtime_error(std::string("cannot fork a worker process: ") + strerror(errno));
  }
  if (pid_ == 0) exec_child(argv, in, reply, out, parent);
  ::setpgid(pid_, pid_);  // also here: whichever of parent and child runs first, the group exists before a kill
  close_fd(in.read);
  close_fd(reply.write);
  close_fd(out.write);
  stdin_fd_ = in.write;
  reply_fd_ = reply.read;
  output_fd_ = out.read;
  for (int fd : {reply_fd_, output_fd_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
  if (!waited_) {
    kill_group();
    wait_end();
  }
  for (int* fd : {&stdin_fd_, &reply_fd_, &output_fd_}) close_fd(*fd);
}

bool ChildProcess::send_line(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(stdin_fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
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
  return open;
}

bool ChildProcess::read_output() {
  std::string data;
  const bool open = drain(output_fd_, data);
  tail_.append(data.data(), data.size());
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
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  waited_ = true;
  read_output();
  end_ = describe_wait_status(status);
  return true;
}

void ChildProcess::kill_group() {
  if (!waited_ && pid_ > 0) ::kill(-pid_, SIGKILL);
}

std::string ChildProcess::finish(double grace) {
  close_fd(stdin_fd_);
  for (int waited_ms = 0; waited_ms < grace * 1000; waited_ms += 20) {
    if (exited()) return end_;
    ::usleep(20000);
  }
  kill_group();
  return wait_end();
}

std::string ChildProcess::wait_end() {
  if (waited_) return end_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  waited_ = true;
  read_output();  // whatever it wrote last, up to its end
  return end_ = describe_wait_status(status);
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

}  // namespace parity
