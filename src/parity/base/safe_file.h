// Opening files of a results directory that came from elsewhere: regular files only, no symlink followed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace parity {

/// A file of a results directory that parity refuses to read or copy: a symbolic link, a FIFO, a device, a
/// directory, a path that leaves the directory. The message names the file and what it is.
struct UnsafeFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A file descriptor closed when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

/// Opens `relative` (e.g. "results/a.parity") under the directory `dir` for reading. `dir` itself may be a
/// symbolic link (the user named it); no component of `relative` may be one, nor "..", nor absolute. The file
/// must be a regular file: a FIFO is refused without blocking (O_NONBLOCK), a device or directory too.
/// Throws UnsafeFileError naming the file, std::system_error (with the file) when it cannot be opened.
FileDescriptor open_regular_file(const std::filesystem::path& dir, const std::filesystem::path& relative);

/// open_regular_file(file's directory, file's name): for a file whose directory the user named.
FileDescriptor open_regular_file(const std::filesystem::path& file);

/// A file open_regular_file opened, with its size then (from the status that showed it a regular file).
struct OpenedFile {
  FileDescriptor fd;
  std::uintmax_t size = 0;
};

/// open_regular_file(dir, relative) with the file's size, which costs no system call more.
OpenedFile open_sized_regular_file(const std::filesystem::path& dir, const std::filesystem::path& relative);

/// What is left to read of the open file `fd`, to its end; `shown` names the file in a std::system_error.
std::string read_to_end(const FileDescriptor& fd, const std::filesystem::path& shown);

/// The whole contents of open_regular_file(dir, relative).
std::string read_regular_file(const std::filesystem::path& dir, const std::filesystem::path& relative);
std::string read_regular_file(const std::filesystem::path& file);

/// read_regular_file(dir, relative) of a text, which holds no NUL byte (a JSON text never does): the read stops at the
/// first block that holds one, with an UnsafeFileError naming the file and the byte's offset. A sparse file reads as
/// zeros, so one of a few KB on disk and terabytes long costs a block, not memory for its whole length.
std::string read_regular_text_file(const std::filesystem::path& dir, const std::filesystem::path& relative);

/// The whole text of a file the user named (a compare JSON, a baseline, --shard-times' file, a config file). A symbolic
/// link is followed, since the user named it, but what it reaches must be a regular file: a FIFO is refused without
/// blocking (a read of one would wait for a writer forever), a device or a directory too, and the read stops at a NUL
/// byte as read_regular_text_file's does. A pipe named through /proc (open_file_link: a shell's `<(...)`, /dev/fd/63)
/// is read to its end. Throws UnsafeFileError naming the file (or `shown`) and what it is,
/// std::system_error (with the file) when it cannot be opened.
std::string read_named_text_file(const std::filesystem::path& file, const std::string& shown = "");

/// `path` as one spelling of the place a user typed, which need not exist: absolute against the working directory, its
/// "." and ".." resolved lexically, no trailing slash ("./out/" and "out" are one).
std::filesystem::path absolute_spelling(const std::filesystem::path& path);

/// Throws UnsafeFileError unless `relative` under `dir` is a regular file reached without a symbolic link
/// (a check before linking or copying it elsewhere); returns false, touching nothing, when it does not exist.
bool is_safe_regular_file(const std::filesystem::path& dir, const std::filesystem::path& relative);

}  // namespace parity
