// fan_out (see fan_out.h): children forked after the expensive set-up (interpreter, reducers, manifests), one
// socket pair each; the parent hands out items and gathers results, so a child's death costs one item.
#include "fan_out.h"

#include <Python.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <vector>

namespace parity {
namespace {

constexpr std::size_t kAhead = 2;  // items queued to a child: the next waits while one runs

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n, size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n, size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A child: reads item numbers until its parent closes the socket, replies (item, size, bytes) for each, and leaves
// without running this process's exit handlers or destructors, which belong to the parent.
[[noreturn]] void child_loop(int fd, const FanOut& f) {
  std::uint64_t item = 0;
  int status = 0;
  try {
    while (read_all(fd, &item, sizeof item)) {
      const std::string result = f.work(item);
      const std::uint64_t header[2] = {item, result.size()};
      if (!write_all(fd, header, sizeof header) || !write_all(fd, result.data(), result.size())) break;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parity: a compare process failed: %s\n", e.what());
    status = 3;
  }
  PyRun_SimpleString("import sys\nfor s in (sys.stdout, sys.stderr):\n    s.flush()\n");
  std::fflush(nullptr);
  ::_exit(status);
}

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = ::strsignal(WTERMSIG(status));
    return "signal " + std::to_string(WTERMSIG(status)) + (name ? std::string(" (") + name + ")" : "");
  }
  return "exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::deque<std::size_t> sent;  ///< items sent, in order; the first is the one it works on
  std::string in;                ///< bytes read, not yet a whole reply
};

class Pool {
 public:
  // Child k starts on the k-th of as many contiguous ranges of items: neighbouring scenarios share modules and the
  // libraries their outputs need, which each process imports at its first such scenario; handed out one by one, every
  // process had imported nearly all of them (the bundled corpus at --jobs 2: scikit-learn, pandas and SciPy twice,
  // 70% more CPU than --jobs 1).
  Pool(std::size_t count, int jobs, const FanOut& f)
      : f_(f), children_(std::min<std::size_t>(jobs, count)), ranges_(children_.size()) {
    for (std::size_t i = 0; i < count; ++i) ranges_[i * ranges_.size() / count].push_back(i);
    count_ = count;
  }

  void run() {
    std::fflush(nullptr);  // what is buffered here would otherwise be written again by every child
    for (Child& c : children_) spawn(c);
    while (delivered_ < count_) {
      feed();
      wait_for_replies();
      deliver();
    }
    for (Child& c : children_) end(c);
  }

 private:
  void spawn(Child& c) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw std::runtime_error(std::string("compare --jobs: socketpair: ") + std::strerror(errno));
    PyOS_BeforeFork();
    const pid_t pid = ::fork();
    if (pid == 0) {
      PyOS_AfterFork_Child();
      ::close(sv[0]);
      for (const Child& other : children_)
        if (other.fd >= 0) ::close(other.fd);  // a sibling's socket held here would hide that sibling's end
      child_loop(sv[1], f_);
    }
    PyOS_AfterFork_Parent();
    ::close(sv[1]);
    if (pid < 0) {
      ::close(sv[0]);
      throw std::runtime_error(std::string("compare --jobs: fork: ") + std::strerror(errno));
    }
    c = Child{pid, sv[0], {}, {}};
  }

  // The next item for child k: the front of its own range; once that is done, the far end of the longest range left
  // (what its owner would reach last), so that a thief also walks through neighbouring items.
  bool next_item(std::size_t k, std::uint64_t& item) {
    std::deque<std::size_t>* from = &ranges_[k];
    const bool own = !from->empty();
    if (!own)
      from = &*std::max_element(ranges_.begin(), ranges_.end(),
                                [](const auto& a, const auto& b) { return a.size() < b.size(); });
    if (from->empty()) return false;
    if (own) {
      item = from->front();
      from->pop_front();
    } else {
      item = from->back();
      from->pop_back();
    }
    return true;
  }

  bool items_left() const {
    return std::any_of(ranges_.begin(), ranges_.end(), [](const auto& r) { return !r.empty(); });
  }

  void feed() {
    for (std::size_t k = 0; k < children_.size(); ++k) {
      Child& c = children_[k];
      std::uint64_t item = 0;
      while (c.fd >= 0 && c.sent.size() < kAhead && next_item(k, item)) {
        c.sent.push_back(item);
        if (!write_all(c.fd, &item, sizeof item)) break;  // it ended: its end is read in wait_for_replies
      }
    }
  }

  void wait_for_replies() {
    std::vector<pollfd> fds;
    for (const Child& c : children_) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("compare --jobs: poll: ") + std::strerror(errno));
    for (std::size_t k = 0; k < children_.size(); ++k)
      if (fds[k].revents) read_from(children_[k]);
  }

  void read_from(Child& c) {
    char buffer[1 << 16];
    const ssize_t n = ::read(c.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) return died(c);
    c.in.append(buffer, static_cast<std::size_t>(n));
    constexpr std::size_t kHeader = 2 * sizeof(std::uint64_t);
    while (c.in.size() >= kHeader) {
      std::uint64_t header[2];
      std::memcpy(header, c.in.data(), kHeader);
      if (c.in.size() < kHeader + header[1]) break;
      if (c.sent.empty() || c.sent.front() != header[0])
        throw std::runtime_error("compare --jobs: a compare process replied out of turn");
      results_[header[0]] = c.in.substr(kHeader, header[1]);
      c.in.erase(0, kHeader + header[1]);
      c.sent.pop_front();
    }
  }

  // Its socket ended: the item it worked on is lost, the ones waiting behind it go to the others.
  void died(Child& c) {
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(c.fd);
    c.fd = -1;
    if (!c.sent.empty()) {
      const std::size_t lost = c.sent.front();
      results_[lost] = f_.lost(lost, how_it_ended(status));
      std::deque<std::size_t>& range = ranges_[static_cast<std::size_t>(&c - children_.data())];
      for (auto it = c.sent.rbegin(); it + 1 != c.sent.rend(); ++it) range.push_front(*it);
      c.sent.clear();
    }
    if (items_left()) spawn(c);
  }

  void deliver() {
    for (auto it = results_.find(delivered_); it != results_.end(); it = results_.find(delivered_)) {
      f_.done(delivered_, it->second);
      results_.erase(it);
      ++delivered_;
    }
  }

  void end(Child& c) {
    if (c.fd < 0) return;
    ::shutdown(c.fd, SHUT_WR);  // no more items: it leaves
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(c.fd);
    c.fd = -1;
  }

  const FanOut& f_;
  std::vector<Child> children_;
  std::vector<std::deque<std::size_t>> ranges_;  ///< by child: the items not sent yet (next_item)
  std::map<std::size_t, std::string> results_;
  std::size_t count_ = 0, delivered_ = 0;
};

}  // namespace

void fan_out(std::size_t count, int jobs, const FanOut& f) {
  if (jobs <= 1 || count <= 1) {
    for (std::size_t i = 0; i < count; ++i) f.done(i, f.work(i));
    return;
  }
  Pool(count, jobs, f).run();
}

}  // namespace parity
