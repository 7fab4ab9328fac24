// A private directory under the system's temporary directory (see temp_directory.h).
#include "temp_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
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

// The mount a descriptor is on: statx's mount id (each bind mount has its own, though its device is the file system's),
// else the one /proc/self/fdinfo gives (kernels before 5.8, or a statx a seccomp filter refuses); none where neither
// is there, and then nothing is entered: a device would not tell a bind mount of the same file system.
std::optional<std::uint64_t> mount_of(int fd) {
  struct statx sx {};
  // AT_STATX_DONT_SYNC: a FUSE file system is not asked (before Linux 6.6 even a statx for the mount id alone asked
  // it, and a stalled one hung the removal).
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) == 0 &&
      (sx.stx_mask & STATX_MNT_ID))
    return sx.stx_mnt_id;
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(fd));
  for (std::string line; std::getline(info, line);)
    if (line.starts_with("mnt_id:")) return std::strtoull(line.c_str() + 7, nullptr, 10);
  return std::nullopt;
}

// /proc/self/fd where a proc file system is mounted there (a descriptor is reopened, or its mode changed, through its
// entry: no name is looked up again); -1 where it is not.
int proc_fd_directory() {
  int dir = ::open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct statfs fs {};
  if (dir >= 0 && (::fstatfs(dir, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC)) ::close(dir), dir = -1;
  return dir;
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The directory pinned as the O_PATH descriptor `path` (on `mount`), opened for reading: through /proc/self/fd, or
// where there is none through its own "." (no name is looked up again, so no mount made on it meanwhile is entered);
// checked to be that same directory on that mount. With `open_up`, one that cannot be read (mode 000) is given u+rwx
// first, through /proc only. -1 where it cannot be.
int reopen_directory(int path, std::uint64_t mount, bool open_up) {
  struct stat pinned {
  }, opened{};
  if (::fstat(path, &pinned) != 0) return -1;
  const int procfs = proc_fd_directory();
  const std::string entry = std::to_string(path);
  int fd = -1;
  if (procfs >= 0) {
    fd = ::openat(procfs, entry.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && open_up && ::fchmodat(procfs, entry.c_str(), S_IRWXU, 0) == 0)
      fd = ::openat(procfs, entry.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(procfs);
  } else {
    fd =
        ::openat(path, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // the pinned one: no name looked up, no mount crossed
  }
  if (fd >= 0 && (::fstat(fd, &opened) != 0 || !same_file(opened, pinned) || mount_of(fd) != mount))
    ::close(fd), fd = -1;
  return fd;
}

// The directory `name` in the directory open as `parent`, opened for reading, never through a link and never on
// another mount than `mount` (a mount point a scenario left, bind mounts of the same file system and a stalled FUSE
// mount included, stays with what is in it, and is not even opened), and, where `expected` is given, only that
// directory (the one a sweep locked, a TempDirectory's own). With `open_up` it is given u+rwx (what a scenario left
// read-only, a chmod 0500 or 000 of its own or of its TMPDIR, could not be emptied). -1 where it cannot be.
int open_directory(int parent, const char* name, std::uint64_t mount, const struct stat* expected, bool open_up) {
  const int path = ::openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (path < 0) return -1;
  struct stat pinned {};
  int fd = -1;
  if (mount_of(path) == mount && ::fstat(path, &pinned) == 0 && (!expected || same_file(pinned, *expected)))
    fd = reopen_directory(path, mount, open_up);
  ::close(path);
  if (fd >= 0 && open_up) ::fchmod(fd, S_IRWXU);  // a 0500 one: its entries can be removed now
  return fd;
}

// The names in the directory open as `dir`, read before any is removed.
std::vector<std::string> names_in(int dir) {
  std::vector<std::string> names;
  const int copy = ::dup(dir);
  DIR* stream = copy < 0 ? nullptr : ::fdopendir(copy);
  if (!stream) {
    if (copy >= 0) ::close(copy);
    return names;
  }
  while (const dirent* entry = ::readdir(stream))
    if (const std::string_view name = entry->d_name; name != "." && name != "..") names.emplace_back(name);
  ::closedir(stream);
  return names;
}

// How deep a tree is removed: a descriptor is held a level (the process's limit), and what lies deeper stays.
constexpr std::size_t kMaxDepth = 4096;

// Removes everything in the directory open as `dir` (on `mount`), depth first and by descriptor, its levels on the
// heap: no link is followed and no other mount entered (open_directory). remove_all entered mount points: a scenario
// run as root that bind-mounted a directory of the host into its TMPDIR, and was stopped before it unmounted it, had
// that directory emptied with its TMPDIR. True when `dir` is empty.
bool empty_directory(int dir, std::uint64_t mount) {
  struct Level {
    int fd;
    std::vector<std::string> names;
    std::size_t next = 0;  ///< the name removed next; a level above the last is removing names[next]
  };
  std::vector<Level> levels;
  levels.push_back({dir, names_in(dir)});
  bool emptied = true;
  while (true) {
    Level& level = levels.back();
    if (level.next == level.names.size()) {  // emptied as far as it goes: it goes too, but `dir`, the caller's
      if (levels.size() == 1) return emptied;
      ::close(level.fd);
      levels.pop_back();
      Level& up = levels.back();
      emptied = ::unlinkat(up.fd, up.names[up.next++].c_str(), AT_REMOVEDIR) == 0 && emptied;
      continue;
    }
    const char* name = level.names[level.next].c_str();
    if (::unlinkat(level.fd, name, 0) == 0) {
      ++level.next;
      continue;
    }
    const int sub =
        errno == EISDIR && levels.size() < kMaxDepth ? open_directory(level.fd, name, mount, nullptr, true) : -1;
    if (sub >= 0) {
      levels.push_back({sub, names_in(sub)});  // `level` is not used again: the push may move it
      continue;
    }
    emptied = ::unlinkat(level.fd, name, AT_REMOVEDIR) == 0 && emptied;  // an empty one; else it stays
    ++level.next;
  }
}

// Removes `path` with everything in it on its parent's mount (a mount made over `path` itself is not entered either);
// with `expected`, only when `path` is that directory still (the sweep's locked one, a TempDirectory's own): never one
// put in its place. True when it is gone.
bool remove_tree(const std::filesystem::path& path, const struct stat* expected = nullptr) {
  const std::filesystem::path above = path.has_parent_path() ? path.parent_path() : ".";
  const int parent = ::open(above.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return false;
  const std::string name = path.filename().string();
  bool gone = false;
  if (!expected && (::unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT)) {
    gone = true;  // a link or a file, or nothing there
  } else if (const std::optional<std::uint64_t> mount = mount_of(parent)) {
    if (const int dir = open_directory(parent, name.c_str(), *mount, expected, true); dir >= 0) {
      empty_directory(dir, *mount);
      ::close(dir);
      // By name, after the check: an empty directory put there at this moment would go instead (nothing closes that on
      // Linux; it is empty, and put there by what ran in it).
      gone = ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0;
    }
  }
  ::close(parent);
  return gone;
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
    if (lock == Lock::kNone || lock_new_directory(path_, lock_fd_) != NewLock::kLostToASweep) {
      // The one made (the one locked, where it is): what the destructor removes, and nothing put in its place.
      struct stat made {};
      if (lock_fd_ >= 0 ? ::fstat(lock_fd_, &made) == 0 : ::lstat(path_.c_str(), &made) == 0)
        device_ = made.st_dev, inode_ = made.st_ino;
      return;
    }
    if (attempt == 8)  // a sweep in another process won each race: something is wrong, not unlucky
      throw std::system_error(EAGAIN, std::generic_category(), "locking " + pattern + ": taken by 9 sweeps in a row");
  }
}

TempDirectory::~TempDirectory() {
  struct stat own {};
  own.st_dev = static_cast<dev_t>(device_), own.st_ino = static_cast<ino_t>(inode_);
  remove_tree(path_, inode_ != 0 ? &own : nullptr);  // a destructor must not throw; what cannot be removed stays
  if (lock_fd_ >= 0) ::close(lock_fd_);              // after the removal: until then no sweep may take it
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
  const int base_fd = ::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  const std::optional<std::uint64_t> mount = base_fd >= 0 ? mount_of(base_fd) : std::nullopt;
  const std::string held = held_directory_prefix(prefix);
  std::error_code ec;
  std::filesystem::directory_iterator entries(base, ec);
  std::size_t removed = 0;
  for (; mount && !ec && entries != std::filesystem::directory_iterator(); entries.increment(ec)) {
    const std::filesystem::path path = entries->path();
    const std::string name = path.filename().string();
    if (name.size() != held.size() + kRandomChars || name.compare(0, held.size(), held) != 0) continue;
    // Not a link, nor a mount over one (opened by name, a stalled FUSE mount there had hung every later run's start)
    const int fd = open_directory(base_fd, name.c_str(), *mount, nullptr, false);
    if (fd < 0) continue;  // ... nor one not ours to read
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_uid == ::geteuid() && try_lock(fd) == 0 && remove_tree(path, &st)) ++removed;
    ::close(fd);
  }
  if (base_fd >= 0) ::close(base_fd);
  return removed;
}

}  // namespace parity
