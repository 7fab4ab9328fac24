// A private directory under the system's temporary directory, removed with its contents when it goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace parity {

/// A new directory of its own (mkdtemp: mode 0700, a name no other process has) under the system's temporary
/// directory (TMPDIR, else /tmp), named `prefix` and six random characters (held_directory_prefix(`prefix`) and six
/// with Lock::kHeld), removed with everything in it when this goes, directories left read-only inside too; a symbolic
/// link inside is removed, never followed, and a mount left inside (or over it) is not entered: it stays, with what is
/// in it. The path is absolute.
class TempDirectory {
 public:
  /// kHeld: the directory stays locked (flock) while this lives in this process, so that a later process's
  /// remove_orphaned_temp_directories can tell it from one whose maker was killed before it could remove it. On a file
  /// system without flock it is made unlocked, where no sweep can lock it either.
  enum class Lock { kNone, kHeld };

  /// Throws std::system_error naming the directory it could not create (or open to lock).
  explicit TempDirectory(const std::string& prefix, Lock lock = Lock::kNone);
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;  ///< the directory, open and locked (Lock::kHeld), else -1
  /// The directory's device and inode once made: only that one is removed, never one put in its place.
  std::uint64_t device_ = 0, inode_ = 0;
};

/// The start of the names of the directories a TempDirectory of `prefix` makes with Lock::kHeld: `prefix`, eight hex
/// digits of a hash of this host's name, and '-'. What else starts with `prefix` (a directory of the user's own, an
/// unlocked one of an older parity still in use, one of a run on another host sharing the TMPDIR, whose locks this
/// host may not see) is no sweep's.
std::string held_directory_prefix(const std::string& prefix);

/// Removes, with their contents, the directories held_directory_prefix(`prefix`)XXXXXX under the system's temporary
/// directory that this user owns and no process holds locked: those a TempDirectory made with Lock::kHeld left behind
/// when its process was killed outright (SIGKILL: no destructor ran). A symbolic link, a file, another user's
/// directory or one that is still held is left alone; what cannot be read or removed is left as it is. Returns how
/// many it removed.
std::size_t remove_orphaned_temp_directories(const std::string& prefix);

}  // namespace parity
