// A private directory under the system's temporary directory (see temp_directory.h).
#include "temp_directory.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <system_error>

namespace parity {

namespace {

constexpr std::size_t kRandomChars = 6;  // mkdtemp's XXXXXX

std::filesystem::path temp_base() {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) {  // its own message names no directory
    const char* given = std::getenv("TMPDIR");
    throw std::system_error(ec, "the temporary directory " + std::string(given ? given : "(TMPDIR unset)"));
  }
  return std::filesystem::absolute(base);
}

// `fd`, open on a directory, locked without waiting: false when another open description holds it.
bool try_lock(int fd) { return ::flock(fd, LOCK_EX | LOCK_NB) == 0; }

// Whether `path` still names the directory open at `fd` (a sweep may have removed it, or its name, meanwhile).
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat open_st {
  }, named_st{};
  return ::fstat(fd, &open_st) == 0 && ::lstat(path.c_str(), &named_st) == 0 && open_st.st_dev == named_st.st_dev &&
         open_st.st_ino == named_st.st_ino;
}

// The directory just made, locked; -1 when a sweep (remove_orphaned_temp_directories) opened it between its mkdtemp
// and this lock, and removes it or has: the caller makes another.
int lock_new_directory(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (try_lock(fd) && still_named(fd, path)) return fd;
  ::close(fd);
  return -1;
}

}  // namespace

TempDirectory::TempDirectory(const std::string& prefix, Lock lock) {
  const std::filesystem::path base = temp_base();
  for (int attempt = 0;; ++attempt) {
    std::string pattern = (base / (prefix + std::string(kRandomChars, 'X'))).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    path_ = pattern;
    if (lock == Lock::kNone) return;
    lock_fd_ = lock_new_directory(path_);
    if (lock_fd_ >= 0) return;
    if (attempt == 8)  // a sweep in another process won each race: something is wrong, not unlucky
      throw std::system_error(EAGAIN, std::generic_category(), "locking " + pattern);
  }
}

TempDirectory::~TempDirectory() {
  std::error_code ignored;  // a destructor must not throw; what cannot be removed stays
  std::filesystem::remove_all(path_, ignored);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // after the removal: until then no sweep may take it
}

// Each candidate is opened without following a link and locked before it is removed: a directory held by a living
// TempDirectory fails the lock, and one made but not yet locked is removed while locked here, which its maker sees
// (lock_new_directory) and makes another.
std::size_t remove_orphaned_temp_directories(const std::string& prefix) {
  std::filesystem::path base;
  try {
    base = temp_base();
  } catch (const std::system_error&) {
    return 0;  // no temporary directory: nothing in it to remove (TempDirectory's own error names it)
  }
  std::error_code ec;
  std::filesystem::directory_iterator entries(base, ec);
  std::size_t removed = 0;
  for (; !ec && entries != std::filesystem::directory_iterator(); entries.increment(ec)) {
    const std::filesystem::path path = entries->path();
    const std::string name = path.filename().string();
    if (name.size() != prefix.size() + kRandomChars || name.compare(0, prefix.size(), prefix) != 0) continue;
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // not a directory, a link, or not ours to read
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_uid == ::geteuid() && try_lock(fd) && still_named(fd, path)) {
      std::error_code ignored;
      if (std::filesystem::remove_all(path, ignored) > 0 && !ignored) ++removed;
    }
    ::close(fd);
  }
  return removed;
}

}  // namespace parity
