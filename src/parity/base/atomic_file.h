// Writes a file so that readers see either nothing or the complete file: a temp file renamed on commit, or, for a run's
// result files, the file created under its own name where no reader looks before the writer says it is whole.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string_view>

namespace parity {

/// How a file under construction reaches its name.
enum class Publish {
  /// Written under a temporary name and renamed on commit: nothing appears at the name until then, and an old file of
  /// that name stays whole. For every file a reader may open at any moment (the manifest, reports, the Python API's).
  by_rename,
  /// Created under its own name, exclusively: whatever was there (a file, a link, never followed) is removed first.
  /// One directory operation fewer than a rename (on ext4 a file created and renamed costs twice one created: a run
  /// writes one a scenario and side, bench/README, issue #20 target 2). Only for files no reader opens before their
  /// writer has said they are whole: a run's result files, which the manifest names once the worker's done reply has
  /// come (worker.cc's record_outputs, runner.cc). A killed writer leaves a partial file that no manifest names: the
  /// supervisor removes it as it records the scenario as crashed or timed out (runner.cc's remove_unrecorded_files),
  /// or, when the whole run was killed, the scenario's next run (--resume) replaces it.
  in_place,
  /// Written into what is already at the name, neither created nor removed: a device, a FIFO or a socket the user
  /// named as a destination (write_named_file).
  into_existing,
};

/// An output file under construction; commit() completes it. With Publish::by_rename nothing appears at `path` until
/// commit(); an uncommitted file (its temp file, or with Publish::in_place the file itself; never what was there with
/// Publish::into_existing) is removed by the destructor. Errors throw std::runtime_error naming the path and cause.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path, Publish publish = Publish::by_rename);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// Writes `count` zero bytes (padding between aligned sections).
  void pad(std::size_t count);
  std::size_t written() const { return written_; }
  /// The file, open for writing until commit(): a run's worker appends the pickle probe's payload to its result file
  /// through it (worker.cc, parity.probe.append_pickle), after the `written()` bytes written here.
  int fd() const { return fd_; }
  /// Closes, and renames into place (Publish::by_rename).
  void commit();

 private:
  [[noreturn]] void fail(const char* what) const;
  void stop_if_signalled() const;

  std::filesystem::path path_, temp_;
  Publish publish_;
  int fd_ = -1;
  std::size_t written_ = 0;
};

/// Writes `text` to `path` atomically.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

/// `path` with the symbolic links of its last component followed, a dangling one to where it points: where a file the
/// user named through a link (latest.json -> archive/today.json) is written, so that the link stays a link.
std::filesystem::path followed_links(std::filesystem::path path);

/// Where `path`'s links pass through an open file's link in /proc (/dev/stdout, /dev/fd/3, /proc/self/fd/1): that
/// link, /proc/<pid>/fd/N. What it names is an open file of a process (a pipe, a terminal, a file a shell opened), not
/// the name its link's text shows.
std::optional<std::filesystem::path> open_file_link(std::filesystem::path path);

/// Writes `text` to a file the user named as a destination (a report): a regular file, or none yet, is replaced
/// atomically at followed_links(path); a device, a FIFO or a socket there (/dev/null, a shell's >(...)), or an open
/// file named through /proc (open_file_link: /dev/stdout, even where it is `> build.log`), is written into as it is,
/// never replaced, which a rename over it did (as root, /dev/null itself; the user's build.log); a directory is
/// refused. A FIFO's reader is waited for. Throws std::runtime_error naming the path and cause; throws Interrupted
/// (deadline.h) when a stop signal comes while a reader keeps it waiting (a FIFO with none yet, a pipe that is full).
void write_named_file(const std::filesystem::path& path, std::string_view text);

}  // namespace parity
