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
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "deadline.h"
#include "descriptor_io.h"

namespace parity {
namespace {

using Clock = std::chrono::steady_clock;

// Items queued to a child: at least the next one waits while one runs, so that none idles on a round trip. Where
// items are short, enough for kQueued of work, and the parent sleeps kQueued / 2 between looks at the replies instead
// of being woken by each one: over 5,000 small scenarios (~0.6 ms each) those wake-ups and their context switches were
// a tenth of the CPU --jobs 2 spent beyond --jobs 1 (issue #20, target 3). A queue's few milliseconds are all a child
// can be left with when the others have run out.
constexpr std::size_t kMinAhead = 2, kMaxAhead = 16;
constexpr std::chrono::duration<double> kQueued = std::chrono::milliseconds(4);

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
  } catch (const Interrupted& e) {  // Ctrl-C reaches every process of the group: the parent says it, once
    status = 128 + e.signal;
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
  Clock::time_point since;       ///< when it started on sent.front(), as near as this process knows
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
      if (detail::stop_signal) stop();
      feed();
      if (ahead() > kMinAhead && std::all_of(children_.begin(), children_.end(),
                                             [](const Child& c) { return c.fd < 0 || c.sent.size() >= kMinAhead; }))
        std::this_thread::sleep_for(kQueued / 2);  // their replies wait in the sockets, waking no one
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
    c = Child{pid, sv[0], {}, {}, Clock::now()};
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

  // How many items to keep queued to each child: kMinAhead until an item's time is known.
  std::size_t ahead() const {
    if (seconds_per_item_ <= 0) return kMinAhead;
    return std::clamp<std::size_t>(1 + static_cast<std::size_t>(kQueued.count() / seconds_per_item_), kMinAhead,
                                   kMaxAhead);
  }

  void feed() {
    const std::size_t queue = ahead();
    for (std::size_t k = 0; k < children_.size(); ++k) {
      Child& c = children_[k];
      std::uint64_t item = 0;
      while (c.fd >= 0 && c.sent.size() < queue && next_item(k, item)) {
        if (c.sent.empty()) c.since = Clock::now();
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
    std::size_t at = 0, replies = 0;
    while (c.in.size() - at >= kHeader) {
      std::uint64_t header[2];
      std::memcpy(header, c.in.data() + at, kHeader);
      if (c.in.size() - at - kHeader < header[1]) break;
      if (c.sent.empty() || c.sent.front() != header[0])
        throw std::runtime_error("compare --jobs: a compare process replied out of turn");
      results_[header[0]] = c.in.substr(at + kHeader, header[1]);
      at += kHeader + header[1];
      c.sent.pop_front();
      ++replies;
    }
    c.in.erase(0, at);  // once: a sleep leaves many replies in one read
    if (replies > 0) {
      // The time per item, from the replies read since the last: what ahead() sizes the queues by.
      const Clock::time_point now = Clock::now();
      const double each = std::chrono::duration<double>(now - c.since).count() / static_cast<double>(replies);
      seconds_per_item_ = seconds_per_item_ <= 0 ? each : 0.75 * seconds_per_item_ + 0.25 * each;
      c.since = now;
    }
  }

  // Its socket ended: the item it worked on is lost, the ones waiting behind it go to the others.
  void died(Child& c) {
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(c.fd);
    c.fd = -1;
    if (detail::stop_signal) stop();  // it ended on the stop signal (exit 130): nothing lost, no process started again
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

  // A stop signal came: every child is killed and reaped, then Interrupted thrown (check_interrupted).
  void stop() {
    for (Child& c : children_) {
      if (c.fd < 0) continue;
      ::kill(c.pid, SIGKILL);
      while (::waitpid(c.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      ::close(c.fd);
      c.fd = -1;
    }
    check_interrupted();
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
  double seconds_per_item_ = 0;  ///< a moving average over every child's replies; 0 until the first
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
