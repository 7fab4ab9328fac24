// Unit tests of TempDirectory: a private directory that goes with its contents, and nothing outside it.
#include "temp_directory.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include "test_support.h"

namespace fs = std::filesystem;
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

}  // namespace
