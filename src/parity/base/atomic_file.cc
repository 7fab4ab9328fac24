// Temp-file-and-rename writing, or exclusive creation in place (see atomic_file.h). No fsync: rename is atomic against
// a killed process, which is the failure parity guards against; syncing every small result file would dominate batch
// runs.
#include "atomic_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>

#include "deadline.h"

namespace parity {

namespace {

// O_EXCL: a link at `path` is never followed (the open fails on it), so it is removed and the file created again.
int create_exclusively(const std::filesystem::path& path) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  const int fd = ::open(path.c_str(), kFlags, 0644);
  if (fd >= 0 || errno != EEXIST || ::unlink(path.c_str()) != 0) return fd;
  return ::open(path.c_str(), kFlags, 0644);
}

// The descriptor `link` (OpenFileLink::link) is in this process: /proc/<this pid>/fd/N or
// /proc/<this pid>/task/<tid>/fd/N. -1 for another process's.
int own_descriptor(const std::filesystem::path& link) {
  const std::string text = link.string();
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/";
  if (text.rfind(own, 0) != 0) return -1;
  const std::string name = link.filename().string();
  int fd = -1;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), fd);
  return error == std::errc() && end == name.data() + name.size() ? fd : -1;
}

// Opens what is at `path` to write into it as it is (Publish::into_existing). This process's own open file named
// through /proc (/dev/stdout) is its descriptor, duplicated, and written where that file stands, as the process's own
// output is: opened again, a socket cannot be, and a file (`> build.log`) would be written over from its start.
// Another's is opened to append. The open of a FIFO waits for its reader (a consumer started after parity gets the
// report), until a stop signal (check_interrupted).
int open_existing(const std::filesystem::path& path) {
  check_interrupted();  // one that came before: the open and the writes may never return on their own
  if (const auto link = open_file_link(path)) {
    if (const int own = own_descriptor(*link); own >= 0) {
      std::fflush(nullptr);  // what this process printed before stays before the report
      return ::fcntl(own, F_DUPFD_CLOEXEC, 0);
    }
  }
  for (;;) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd >= 0 || errno != EINTR) return fd;
    check_interrupted();
  }
}

// Where the symbolic link `path` points (a relative target taken from its directory); none where `path` is no link.
std::optional<std::filesystem::path> link_target(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(path, ec)) return std::nullopt;
  const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
  if (ec) return std::nullopt;
  return target.is_absolute() ? target : path.parent_path() / target;
}

constexpr int kMaxLinkHops = 40;  // the kernel's own limit on a path's links

}  // namespace

std::optional<std::filesystem::path> open_file_link(std::filesystem::path path) {
  namespace fs = std::filesystem;
  static const std::regex kDescriptors(R"(/proc/[0-9]+(/task/[0-9]+)?/fd)");
  for (int hops = 0; hops < kMaxLinkHops; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(path, ec)) return std::nullopt;
    const fs::path directory = fs::canonical(fs::absolute(path, ec).parent_path(), ec);
    if (!ec && std::regex_match(directory.string(), kDescriptors)) return directory / path.filename();
    const std::optional<fs::path> next = link_target(path);
    if (!next) return std::nullopt;
    path = *next;
  }
  return std::nullopt;
}

AtomicFile::AtomicFile(std::filesystem::path path, Publish publish) : path_(std::move(path)), publish_(publish) {
  temp_ = path_;  // in place: the file is its own temp, removed the same way when it is not committed
  if (publish_ == Publish::by_rename) {
    static std::atomic<unsigned> counter{0};  // two files for one target in one process never share a temp
    temp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  } else if (publish_ == Publish::in_place) {
    fd_ = create_exclusively(temp_);
  } else {
    fd_ = open_existing(path_);
    if (fd_ < 0 && errno == ENXIO)
      throw std::runtime_error("cannot write " + path_.string() +
                               ": a socket (or a device with nothing behind it) cannot be opened by name");
    if (fd_ < 0) fail("cannot open");
  }
  if (fd_ < 0) fail("cannot create");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    if (publish_ != Publish::into_existing) ::unlink(temp_.c_str());
  }
}

void AtomicFile::fail(const char* what) const {
  throw std::runtime_error(std::string(what) + " " + path_.string() + ": " + std::strerror(errno));
}

// A stop signal that came while a reader kept a report waiting (EINTR, or a write cut short) ends the write: only a
// report written into a pipe, a FIFO or a device (Publish::into_existing) can wait on another process.
void AtomicFile::stop_if_signalled() const {
  if (publish_ == Publish::into_existing) check_interrupted();
}

void AtomicFile::write(const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    // Before each write: a signal that came earlier, or that cut the last one short (EINTR, a short count, poll's
    // EINTR), since a write into a full pipe would never return to tell it.
    stop_if_signalled();
    const ssize_t n = ::write(fd_, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // a descriptor shared with another (stdout) that someone made non-blocking
      pollfd ready{fd_, POLLOUT, 0};
      ::poll(&ready, 1, -1);
      continue;
    }
    if (n < 0) fail("cannot write");
    bytes += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::size_t>(n);
  }
}

void AtomicFile::pad(std::size_t count) {
  static constexpr std::array<char, 4096> zeros{};
  while (count > 0) {
    const std::size_t n = std::min(count, zeros.size());
    write(zeros.data(), n);
    count -= n;
  }
}

void AtomicFile::commit() {
  if (::close(fd_) != 0) {
    fd_ = -1;
    if (publish_ != Publish::into_existing) ::unlink(temp_.c_str());
    fail("cannot close");
  }
  fd_ = -1;
  if (publish_ != Publish::by_rename) return;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp_.c_str());
    errno = saved;
    fail("cannot rename into place");
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

std::filesystem::path followed_links(std::filesystem::path path) {
  for (int hops = 0; hops < kMaxLinkHops; ++hops) {
    const std::optional<std::filesystem::path> next = link_target(path);
    if (!next) break;
    path = *next;
  }
  return path;
}

void write_named_file(const std::filesystem::path& path, std::string_view text) {
  struct stat st {};
  const bool stream = open_file_link(path).has_value();
  if (!stream && (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)))
    return write_file_atomically(followed_links(path), text);
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path.string() + ": it is a directory");
  // A Ctrl-C while a reader keeps the report waiting (a FIFO with none yet, a full pipe) is parity's: Python's
  // handler, where a command had started an interpreter (report --html, merge, coverage), only noted it, and the
  // wait went on.
  const StopSignalHandler stops(note_stop_signal);
  AtomicFile file(path, Publish::into_existing);
  file.write(text);
  file.commit();
}

}  // namespace parity
