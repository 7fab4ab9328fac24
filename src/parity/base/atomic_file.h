// Writes a file so that readers see either nothing or the complete file: a temp file renamed on commit.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace parity {

/// An output file under construction. Nothing appears at `path` until commit(); an uncommitted file's
/// temp file is removed by the destructor. Errors throw std::runtime_error naming the path and cause.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// Writes `count` zero bytes (padding between aligned sections).
  void pad(std::size_t count);
  std::size_t written() const { return written_; }
  /// Closes and renames into place.
  void commit();

 private:
  [[noreturn]] void fail(const char* what) const;

  std::filesystem::path path_, temp_;
  int fd_ = -1;
  std::size_t written_ = 0;
};

/// Writes `text` to `path` atomically.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace parity
