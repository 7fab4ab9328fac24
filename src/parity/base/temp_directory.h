// A private directory under the system's temporary directory, removed with its contents when it goes.
#pragma once

#include <filesystem>
#include <string>

namespace parity {

/// A new directory of its own (mkdtemp: mode 0700, a name no other process has) under the system's temporary
/// directory (TMPDIR, else /tmp), named `prefix` and six random characters, removed with everything in it when this
/// goes; a symbolic link inside is removed, never followed. The path is absolute.
class TempDirectory {
 public:
  /// Throws std::system_error naming the directory it could not create.
  explicit TempDirectory(const std::string& prefix);
  ~TempDirectory();
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace parity
