// The fork server (see fork_server.h): one request a worker, answered with its pid on the same socket.
#include "fork_server.h"

#include <Python.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "descriptor_io.h"
#include "process.h"
#include "protocol.h"

namespace parity {
namespace {

using Descriptors = int[protocol::kForkDescriptors];

// One request: its byte and the descriptors it carries; false at the end of the socket (or a malformed request,
// whose descriptors are closed: only the supervisor writes here, but nothing received may leak).
bool receive_request(int socket, Descriptors& fds) {
  char byte = 0;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(Descriptors))] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  while ((n = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  const cmsghdr* header = n == 1 ? CMSG_FIRSTHDR(&message) : nullptr;
  const bool whole = header && header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
                     header->cmsg_len == CMSG_LEN(sizeof(Descriptors)) && byte == protocol::kForkRequest;
  if (header && header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
    const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int received[protocol::kForkDescriptors] = {-1, -1, -1};
    std::memcpy(received, CMSG_DATA(header), std::min(count, std::size_t{protocol::kForkDescriptors}) * sizeof(int));
    if (!whole)
      for (int fd : received)
        if (fd >= 0) ::close(fd);
    std::memcpy(fds, received, sizeof fds);
  }
  return whole;
}

// In the new worker, before anything else: its own process group (as an exec'd worker's, process.cc), its parent
// the supervisor once the middle process ended, and the request's descriptors in place of the server's.
void become_worker(const Descriptors& fds, pid_t supervisor, pid_t middle) {
  ::setpgid(0, 0);
  for (int waited = 0; ::getppid() == middle && waited < 10000; ++waited) ::usleep(1000);
  // A supervisor killed outright takes its workers with it, and (end_group_when_supervisor_gone) what they started.
  ::prctl(PR_SET_PDEATHSIG, kSupervisorGoneSignal);
  if (::getppid() != supervisor) ::_exit(127);  // ... even one that died before the line above, or no subreaper
  const bool moved = ::dup2(fds[0], protocol::kCommandFd) == protocol::kCommandFd &&
                     ::dup2(fds[1], protocol::kReplyFd) == protocol::kReplyFd && ::dup2(fds[2], 1) == 1 &&
                     ::dup2(fds[2], 2) == 2;
  if (!moved) ::_exit(127);
  for (int fd : fds) ::close(fd);
  // dup2 cleared close-on-exec: what a scenario starts must not hold the protocol's descriptors (worker.cc).
  for (int fd : {protocol::kReplyFd, protocol::kCommandFd}) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Forks a worker through a middle process; returns its pid in the server (0 when it could not), 0 in the worker.
pid_t fork_worker(const Descriptors& fds, pid_t supervisor, bool& in_worker) {
  // What is buffered would be written again by the worker, on its own output. Frozen (gc.freeze), what the server
  // imported is never traversed by a worker's garbage collector, which would otherwise write into, and so copy,
  // every page of it.
  PyRun_SimpleString("import gc, sys\ngc.freeze()\nfor s in (sys.stdout, sys.stderr):\n    s.flush()\n");
  std::fflush(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return 0;
  PyOS_BeforeFork();
  const pid_t middle = ::fork();
  if (middle == 0) {
    // Only async-signal-safe calls here: the middle process forks the worker, says its pid and ends.
    const pid_t self = ::getpid();
    const pid_t worker = ::fork();
    if (worker == 0) {
      ::close(report[0]);
      ::close(report[1]);
      become_worker(fds, supervisor, self);
      PyOS_AfterFork_Child();
      in_worker = true;
      return 0;
    }
    if (worker > 0) ::setpgid(worker, worker);  // also here: the group exists before the supervisor may kill it
    [[maybe_unused]] const bool said = write_all(report[1], &worker, sizeof worker);
    ::_exit(0);
  }
  PyOS_AfterFork_Parent();
  ::close(report[1]);
  pid_t worker = 0;
  if (middle > 0) {
    if (::read(report[0], &worker, sizeof worker) != sizeof worker) worker = 0;
    while (::waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(report[0]);
  return worker > 0 ? worker : 0;
}

}  // namespace

bool serve_forks() {
  const pid_t supervisor = ::getppid();
  Descriptors fds = {-1, -1, -1};
  while (receive_request(protocol::kCommandFd, fds)) {
    bool in_worker = false;
    const pid_t pid = fork_worker(fds, supervisor, in_worker);
    if (in_worker) return true;
    for (int& fd : fds) ::close(fd), fd = -1;
    if (!write_all(protocol::kCommandFd, &pid, sizeof pid)) break;
  }
  return false;
}

}  // namespace parity
