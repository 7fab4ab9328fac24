// Unit tests of TempDirectory: a private directory that goes with its contents, and nothing outside it.
#include "temp_directory.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include "test_support.h"

namespace fs = std::filesystem;
using parity::remove_orphaned_temp_directories;
using parity::TempDirectory;
using parity::testing::TempDir;

namespace {

// TMPDIR set to `dir` for the test's length.
class TmpDirSet {
 public:
  explicit TmpDirSet(const fs::path& dir) {
    if (const char* was = std::getenv("TMPDIR")) before_ = was;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpDirSet() { before_ ? ::setenv("TMPDIR", before_->c_str(), 1) : ::unsetenv("TMPDIR"); }

 private:
  std::optional<std::string> before_;
};

TEST(TempDirectory, IsAPrivateDirectoryUnderTmpdirNamedByItsPrefix) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const TempDirectory dir("parity-unit-");
  EXPECT_EQ(dir.path().parent_path(), tmp.path());
  EXPECT_EQ(dir.path().filename().string().rfind("parity-unit-", 0), 0u);
  EXPECT_TRUE(dir.path().is_absolute());
  struct stat st {};
  ASSERT_EQ(::stat(dir.path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const TempDirectory other("parity-unit-");
  EXPECT_NE(dir.path(), other.path());
}

TEST(TempDirectory, GoesWithEverythingInItButNothingALinkInItNames) {
  const TempDir tmp;
  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "kept") << "kept";
  fs::path made;
  {
    const TmpDirSet set(tmp.path());
    const TempDirectory dir("parity-unit-");
    made = dir.path();
    fs::create_directories(made / "a" / "b");
    std::ofstream(made / "a" / "b" / "file") << "x";
    fs::create_directory_symlink(outside, made / "link");
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(made)));
  EXPECT_TRUE(fs::exists(outside / "kept"));
}

TEST(TempDirectory, ThatCannotBeMadeNamesWhere) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path() / "missing");
  try {
    const TempDirectory dir("parity-unit-");
    FAIL() << "made " << dir.path();
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find((tmp.path() / "missing").string()), std::string::npos) << e.what();
  }
}

// A TempDirectory with a held lock made in a child process that is then killed outright, as a run is by SIGKILL: the
// directory stays, unlocked. Returns its path.
fs::path left_by_a_killed_process(const std::string& prefix) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(fds[0]);
    const TempDirectory dir(prefix, TempDirectory::Lock::kHeld);
    const std::string path = dir.path().string() + "\n";
    if (::write(fds[1], path.data(), path.size()) != static_cast<ssize_t>(path.size())) ::_exit(1);
    ::pause();  // killed here, with the directory held
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string path;
  char ch;
  while (::read(fds[0], &ch, 1) == 1 && ch != '\n') path += ch;
  ::close(fds[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  return path;
}

TEST(TempDirectory, LeftByAKilledProcessIsRemovedByTheNextSweep) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const fs::path left = left_by_a_killed_process("parity-unit-");
  ASSERT_FALSE(left.empty());
  ASSERT_TRUE(fs::is_directory(left));
  std::ofstream(left / "partial") << "a scenario's file";
  fs::create_directories(left / "deeper");
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(left)));
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);
}

TEST(TempDirectory, HeldIsNotRemovedBySweepsHereOrInAnotherProcess) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const TempDirectory held("parity-unit-", TempDirectory::Lock::kHeld);
  std::ofstream(held.path() / "in-use") << "x";
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);  // another open description: refused here too
  const pid_t child = ::fork();
  if (child == 0) ::_exit(remove_orphaned_temp_directories("parity-unit-") == 0 ? 0 : 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(fs::exists(held.path() / "in-use"));
}

TEST(TempDirectory, SweepLeavesLinksFilesAndOtherNamesAlone) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "kept") << "kept";
  fs::create_directory_symlink(outside, tmp.path() / "parity-unit-link00");
  std::ofstream(tmp.path() / "parity-unit-file00") << "a file";
  fs::create_directories(tmp.path() / "parity-unit-longer000");  // not six characters after the prefix
  fs::create_directories(tmp.path() / "parity-other-abcdef");
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);
  for (const char* name : {"parity-unit-link00", "parity-unit-file00", "parity-unit-longer000", "parity-other-abcdef"})
    EXPECT_TRUE(fs::exists(fs::symlink_status(tmp.path() / name))) << name;
  EXPECT_TRUE(fs::exists(outside / "kept"));
}

TEST(TempDirectory, SweepUnderAMissingTmpdirRemovesNothing) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path() / "missing");
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);
}

}  // namespace
