// Temp-file-and-rename writing, or exclusive creation in place (see atomic_file.h). No fsync: rename is atomic against
// a killed process, which is the failure parity guards against; syncing every small result file would dominate batch
// runs.
#include "atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace parity {

namespace {

// O_EXCL: a link at `path` is never followed (the open fails on it), so it is removed and the file created again.
int create_exclusively(const std::filesystem::path& path) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
  const int fd = ::open(path.c_str(), kFlags, 0644);
  if (fd >= 0 || errno != EEXIST || ::unlink(path.c_str()) != 0) return fd;
  return ::open(path.c_str(), kFlags, 0644);
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path path, Publish publish) : path_(std::move(path)), publish_(publish) {
  temp_ = path_;  // in place: the file is its own temp, removed the same way when it is not committed
  if (publish_ == Publish::by_rename) {
    static std::atomic<unsigned> counter{0};  // two files for one target in one process never share a temp
    temp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  } else if (publish_ == Publish::in_place) {
    fd_ = create_exclusively(temp_);
  } else {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
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

void AtomicFile::write(const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, bytes, size);
    if (n < 0 && errno == EINTR) continue;
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
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit on a path's links
    std::error_code ec;
    if (!std::filesystem::is_symlink(path, ec)) break;
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    if (ec) break;
    path = target.is_absolute() ? target : path.parent_path() / target;
  }
  return path;
}

void write_named_file(const std::filesystem::path& path, std::string_view text) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return write_file_atomically(followed_links(path), text);
  if (S_ISDIR(st.st_mode)) throw std::runtime_error("cannot write " + path.string() + ": it is a directory");
  AtomicFile file(path, Publish::into_existing);
  file.write(text);
  file.commit();
}

}  // namespace parity
