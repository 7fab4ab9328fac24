// A private directory under the system's temporary directory (see temp_directory.h).
#include "temp_directory.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
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

// Eight hex digits of a hash (FNV-1a) of this host's name: locks are this kernel's (or, on NFS mounted with local
// locks, this host's), so a sweep must not judge the directories of runs on another host sharing the TMPDIR.
std::string host_tag() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  std::uint32_t hash = 2166136261u;
  for (const char* c = name; *c; ++c) hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  return hex;
}

// flock(LOCK_EX | LOCK_NB) on `fd`, open on a directory: 0, or the errno (EWOULDBLOCK: another open description holds
// it; anything else: this file system has no flock, as some NFS mounts).
int try_lock(int fd) {
  int result;
  do result = ::flock(fd, LOCK_EX | LOCK_NB);
  while (result != 0 && errno == EINTR);
  return result == 0 ? 0 : errno;
}

// Whether `path` still names the directory open at `fd` (a sweep may have removed it, or its name, meanwhile).
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat open_st {
  }, named_st{};
  return ::fstat(fd, &open_st) == 0 && ::lstat(path.c_str(), &named_st) == 0 && open_st.st_dev == named_st.st_dev &&
         open_st.st_ino == named_st.st_ino;
}

// What lock_new_directory found.
enum class NewLock { kHeld, kLostToASweep, kNoLocksHere };

// Locks the directory just made, its descriptor left in `fd`. kLostToASweep: a sweep (remove_orphaned_temp_directories)
// opened it between its mkdtemp and this lock, and removes it or has: the caller makes another. kNoLocksHere: the file
// system has no flock; the directory stays, unlocked, where no sweep can lock it either. Throws what else went wrong,
// the directory removed.
NewLock lock_new_directory(const std::filesystem::path& path, int& fd) {
  fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return NewLock::kLostToASweep;
    ::rmdir(path.c_str());
    throw std::system_error(error, std::generic_category(), "opening " + path.string());
  }
  const int error = try_lock(fd);
  if (error == 0 && still_named(fd, path)) return NewLock::kHeld;
  ::close(fd);
  fd = -1;
  return error == 0 || error == EWOULDBLOCK ? NewLock::kLostToASweep : NewLock::kNoLocksHere;
}

// Gives `dir` and every directory below it u+rwx, never through a link: what a scenario left read-only (a chmod 0500
// of its own, or of its TMPDIR) stops remove_all at the first entry it cannot unlink. Through an O_PATH descriptor, so
// that a name swapped for a link meanwhile changes nothing outside.
void open_up(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  ::chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), S_IRWXU);
  ::close(fd);
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (std::error_code type_ec; it->symlink_status(type_ec).type() == std::filesystem::file_type::directory)
      open_up(it->path());
}

// Removes `path` with everything in it; true when it is gone.
bool remove_tree(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (!ec) return true;
  open_up(path);
  ec.clear();
  std::filesystem::remove_all(path, ec);
  return !ec;
}

}  // namespace

std::string held_directory_prefix(const std::string& prefix) { return prefix + host_tag() + "-"; }

TempDirectory::TempDirectory(const std::string& prefix, Lock lock) {
  const std::filesystem::path base = temp_base();
  const std::string name = lock == Lock::kHeld ? held_directory_prefix(prefix) : prefix;
  for (int attempt = 0;; ++attempt) {
    std::string pattern = (base / (name + std::string(kRandomChars, 'X'))).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    path_ = pattern;
    if (lock == Lock::kNone || lock_new_directory(path_, lock_fd_) != NewLock::kLostToASweep) return;
    if (attempt == 8)  // a sweep in another process won each race: something is wrong, not unlucky
      throw std::system_error(EAGAIN, std::generic_category(), "locking " + pattern + ": taken by 9 sweeps in a row");
  }
}

TempDirectory::~TempDirectory() {
  remove_tree(path_);                    // a destructor must not throw; what cannot be removed stays
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
  const std::string held = held_directory_prefix(prefix);
  std::error_code ec;
  std::filesystem::directory_iterator entries(base, ec);
  std::size_t removed = 0;
  for (; !ec && entries != std::filesystem::directory_iterator(); entries.increment(ec)) {
    const std::filesystem::path path = entries->path();
    const std::string name = path.filename().string();
    if (name.size() != held.size() + kRandomChars || name.compare(0, held.size(), held) != 0) continue;
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;  // not a directory, a link, or not ours to read
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_uid == ::geteuid() && try_lock(fd) == 0 && still_named(fd, path) &&
        remove_tree(path))
      ++removed;
    ::close(fd);
  }
  return removed;
}

}  // namespace parity
