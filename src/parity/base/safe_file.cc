// Regular files of a results directory, reached without following symbolic links (see safe_file.h).
#include "safe_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "atomic_file.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

const char* file_kind(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

constexpr const char* kInsideResults = "parity reads only regular files inside a results directory";

[[noreturn]] void refuse(const fs::path& file, const std::string& why, const char* rule = kInsideResults) {
  throw UnsafeFileError(file.string() + ": " + why + "; " + rule);
}

// Why `name` under `at` could not be opened by openat(O_NOFOLLOW): ELOOP and ENOTDIR hide a symbolic link.
[[noreturn]] void open_failed(int at, const std::string& name, const fs::path& shown, int error) {
  struct stat st {};
  if ((error == ELOOP || error == ENOTDIR || error == ENXIO) &&
      ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    refuse(shown, std::string("is ") + file_kind(st.st_mode));
  throw std::system_error(error, std::generic_category(), shown.string());
}

// The flags the last component of `relative` is opened with: O_NONBLOCK so that a FIFO never blocks open().
int last_flags(bool want_directory) {
  return O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (want_directory ? O_DIRECTORY : 0);
}

// Walks `relative` under the directory `at` component by component (O_NOFOLLOW each); returns the open last
// component, or throws naming the component that is refused or cannot be opened.
FileDescriptor walk_beneath(FileDescriptor at, const fs::path& relative, const fs::path& shown, bool want_directory) {
  std::size_t left = std::distance(relative.begin(), relative.end());
  for (const fs::path& part : relative) {
    const std::string name = part.string();
    const bool last = --left == 0;
    FileDescriptor next(::openat(at.get(), name.c_str(),
                                 last ? last_flags(want_directory) : O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_DIRECTORY));
    if (next.get() < 0) open_failed(at.get(), name, shown, errno);
    at = std::move(next);
  }
  return at;
}

// `relative` under the directory `at` in one openat2 call that follows no symbolic link in any component and never
// leaves `at`: what walk_beneath opens when it succeeds, at a third of the system calls. -1 when it fails for any
// reason (a refused component, a kernel or sandbox without openat2): walk_beneath then says which part and why.
int open_in_one_call(int at, const fs::path& relative, bool want_directory) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(last_flags(want_directory));
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
  return static_cast<int>(::syscall(SYS_openat2, at, relative.c_str(), &how, sizeof how));
}

// `opened` (with last_flags) once its status shows the kind wanted, or refused naming `shown`, what it is and `rule`.
FileDescriptor checked_kind(FileDescriptor opened, const fs::path& shown, bool want_directory, struct stat& st,
                            const char* rule) {
  if (::fstat(opened.get(), &st) != 0) throw std::system_error(errno, std::generic_category(), shown.string());
  if (!(want_directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
    refuse(shown, std::string("is ") + file_kind(st.st_mode), rule);
  // Reads block as usual from here: O_NONBLOCK only kept open() from waiting on a FIFO's writer. F_SETFL sets only
  // the status flags, of which the file was opened with O_NONBLOCK alone.
  if (!want_directory) ::fcntl(opened.get(), F_SETFL, 0);
  return opened;
}

// Opens `relative` under `dir` with no symbolic link followed in it; returns the open last component and its
// status. Refuses lexically first what the kernel would resolve ("..", "."), so both ways refuse alike.
FileDescriptor open_beneath(const fs::path& dir, const fs::path& relative, bool want_directory, struct stat& st) {
  const fs::path shown = dir / relative;
  if (relative.empty() || relative.is_absolute()) refuse(shown, "is not a path inside the directory");
  for (const fs::path& part : relative) {
    const std::string name = part.string();
    if (name == ".." || name == "." || name.empty()) refuse(shown, "is not a path inside the directory");
  }
  FileDescriptor at(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (at.get() < 0) throw std::system_error(errno, std::generic_category(), dir.string());
  FileDescriptor opened(open_in_one_call(at.get(), relative, want_directory));
  if (opened.get() < 0) opened = walk_beneath(std::move(at), relative, shown, want_directory);
  return checked_kind(std::move(opened), shown, want_directory, st, kInsideResults);
}

}  // namespace

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor open_regular_file(const fs::path& dir, const fs::path& relative) {
  struct stat st {};
  return open_beneath(dir, relative, false, st);
}

OpenedFile open_sized_regular_file(const fs::path& dir, const fs::path& relative) {
  struct stat st {};
  FileDescriptor fd = open_beneath(dir, relative, false, st);
  return {std::move(fd), static_cast<std::uintmax_t>(st.st_size)};
}

FileDescriptor open_regular_file(const fs::path& file) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  return open_regular_file(dir, file.filename());
}

namespace {

// read_to_end, and with `text` the refusal of a NUL byte as each block is read (read_regular_text_file).
std::string read_all(const FileDescriptor& fd, const fs::path& shown, bool text) {
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), shown.string());
    if (n == 0) return out;
    if (const void* nul = text ? std::memchr(buffer, '\0', static_cast<std::size_t>(n)) : nullptr)
      throw UnsafeFileError(
          shown.string() + ": byte " +
          std::to_string(out.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - buffer)) +
          " is NUL, which no text holds: a damaged file, or a sparse one (read as zeros)");
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

std::string read_to_end(const FileDescriptor& fd, const fs::path& shown) { return read_all(fd, shown, false); }

std::string read_regular_file(const fs::path& dir, const fs::path& relative) {
  return read_to_end(open_regular_file(dir, relative), dir / relative);
}

std::string read_regular_text_file(const fs::path& dir, const fs::path& relative) {
  return read_all(open_regular_file(dir, relative), dir / relative, true);
}

std::string read_regular_file(const fs::path& file) { return read_to_end(open_regular_file(file), file); }

std::string read_named_text_file(const fs::path& file, const std::string& shown) {
  const fs::path named = shown.empty() ? file : fs::path(shown);
  // O_NOFOLLOW left out of last_flags: the user named the file, through a link or not.
  FileDescriptor opened(::open(file.c_str(), last_flags(false) & ~O_NOFOLLOW));
  if (opened.get() < 0) throw std::system_error(errno, std::generic_category(), named.string());
  struct stat st {};
  // A pipe already open in a process, named through /proc: a shell's `<(gunzip -c r.json.gz)` is /dev/fd/63, whose
  // writer the shell started. Read to its end, as the user asked. A FIFO named otherwise may never have a writer.
  if (open_file_link(file) && ::fstat(opened.get(), &st) == 0 && S_ISFIFO(st.st_mode)) {
    ::fcntl(opened.get(), F_SETFL, 0);
    return read_all(opened, named, true);
  }
  return read_all(checked_kind(std::move(opened), named, false, st, "parity reads a regular file there"), named, true);
}

bool is_safe_regular_file(const fs::path& dir, const fs::path& relative) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir / relative, ec))) {
    // A dangling symbolic link is not absent: symlink_status sees the link itself.
    return false;
  }
  open_regular_file(dir, relative);
  return true;
}

fs::path absolute_spelling(const fs::path& path) {
  fs::path normal = fs::absolute(path).lexically_normal();
  return normal.has_filename() || normal == normal.root_path() ? normal : normal.parent_path();
}

}  // namespace parity
