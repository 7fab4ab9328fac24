// A private directory under the system's temporary directory (see temp_directory.h).
#include "temp_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

// Gives the directory open as `fd` (any kind of descriptor, O_PATH included) u+rwx: what a scenario left read-only (a
// chmod 0500 of its own, or of its TMPDIR) could not be emptied. Through /proc, so that no name is followed.
void open_up(int fd) { ::chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), S_IRWXU); }

// The directory `name` (relative to the directory open as `parent`, or to the working directory: AT_FDCWD) opened for
// reading and given u+rwx, never through a link (by O_PATH first: one that cannot be read yet is opened up before it
// is read); -1 where it cannot be, or where it is on another device than `device` (when given): a mount point (a
// scenario's own, left mounted), which stays with what is in it.
int open_directory(int parent, const char* name, std::optional<dev_t> device = std::nullopt) {
  const int path = ::openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (path < 0) return -1;
  struct stat st {};
  int fd = -1;
  if (::fstat(path, &st) == 0 && (!device || st.st_dev == *device)) {
    open_up(path);
    fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  ::close(path);
  return fd;
}

// The names in the directory open as `dir`, read before any is removed.
std::vector<std::string> names_in(int dir) {
  std::vector<std::string> names;
  DIR* stream = ::fdopendir(::dup(dir));
  if (!stream) return names;
  while (const dirent* entry = ::readdir(stream))
    if (const std::string_view name = entry->d_name; name != "." && name != "..") names.emplace_back(name);
  ::closedir(stream);
  return names;
}

// Removes everything in the directory open as `dir` (on `device`), depth first and by descriptor: no link is followed
// and no other file system entered. remove_all entered a mount point and emptied it: a scenario run as root that
// bind-mounted a directory of the host into its TMPDIR, and was stopped before it unmounted it, had that directory's
// files removed with its TMPDIR. True when `dir` is empty.
bool empty_directory(int dir, dev_t device) {
  bool emptied = true;
  for (const std::string& name : names_in(dir)) {
    if (::unlinkat(dir, name.c_str(), 0) == 0) continue;
    if (const int sub = errno == EISDIR ? open_directory(dir, name.c_str(), device) : -1; sub >= 0) {
      empty_directory(sub, device);
      ::close(sub);
    }
    emptied = ::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 && emptied;
  }
  return emptied;
}

// Removes `path` with everything in it that is on its file system; true when it is gone.
bool remove_tree(const std::filesystem::path& path) {
  const int dir = open_directory(AT_FDCWD, path.c_str());
  if (dir < 0) return ::unlink(path.c_str()) == 0 || errno == ENOENT;  // a link, or nothing there
  struct stat st {};
  const bool emptied = ::fstat(dir, &st) == 0 && empty_directory(dir, st.st_dev);
  ::close(dir);
  return emptied && ::rmdir(path.c_str()) == 0;
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
