// Unit tests of TempDirectory: a private directory that goes with its contents, and nothing outside it.
#include "temp_directory.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "test_support.h"

namespace fs = std::filesystem;
using parity::held_directory_prefix;
using parity::remove_orphaned_temp_directories;
using parity::TempDirectory;
using parity::testing::TempDir;

namespace {
// What flock fails with in this test program (0: it works); a file system without flock, as some NFS mounts are.
int flock_fails_with = 0;
}  // namespace

// Every flock of this test program, TempDirectory's among them, comes here (the definition in the program wins over
// the C library's), and goes on to the kernel's unless flock_fails_with says otherwise.
extern "C" int flock(int fd, int operation) {
  if (flock_fails_with == 0) return static_cast<int>(::syscall(SYS_flock, fd, operation));
  errno = flock_fails_with;
  return -1;
}

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

TEST(TempDirectory, HeldIsNamedByItsPrefixAndThisHostsTag) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const std::string held = held_directory_prefix("parity-unit-");
  ASSERT_EQ(held.size(), std::string("parity-unit-").size() + 9);
  EXPECT_EQ(held.rfind("parity-unit-", 0), 0u);
  EXPECT_EQ(held.find_first_not_of("0123456789abcdef", 12), held.size() - 1) << held;
  EXPECT_EQ(held.back(), '-');
  EXPECT_EQ(held, held_directory_prefix("parity-unit-")) << "the same host, the same tag";
  const TempDirectory dir("parity-unit-", TempDirectory::Lock::kHeld);
  const std::string name = dir.path().filename().string();
  EXPECT_EQ(name.size(), held.size() + 6);
  EXPECT_EQ(name.rfind(held, 0), 0u) << name;
}

TEST(TempDirectory, SweepLeavesLinksFilesAndOtherNamesAlone) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const fs::path outside = tmp.path() / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "kept") << "kept";
  const std::string held = held_directory_prefix("parity-unit-");
  const std::string other_host =
      "parity-unit-" + std::string(held.substr(12, 8) == "00000000" ? "11111111" : "00000000");
  const std::vector<std::string> kept = {
      held + "link00",        held + "file00",
      held + "longer0",        // not six characters after the prefix
      "parity-unit-abcdef",    // no host's tag: the user's own, or an older parity's run, unlocked while it lives
      "parity-unit-backup",    // the user's own
      other_host + "-abcdef",  // another host's run on a shared TMPDIR: its locks may not be seen here
      "parity-other-abcdef"};
  fs::create_directory_symlink(outside, tmp.path() / kept[0]);
  std::ofstream(tmp.path() / kept[1]) << "a file";
  for (std::size_t i = 2; i < kept.size(); ++i) fs::create_directories(tmp.path() / kept[i] / "inside");
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(fs::symlink_status(tmp.path() / name))) << name;
  EXPECT_TRUE(fs::exists(outside / "kept"));
}

// Runs `body` in a child process that, when this one is root, is user nobody (65534), for whom a directory's mode
// counts; its exit status: 0 when `body` returned true, 2 when it threw.
int status_of_unprivileged(const std::function<bool()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    try {
      ::_exit(body() ? 0 : 1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ::_exit(2);
    }
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Whether a user other than the owner can reach `dir` (search every directory above it), as nobody must.
bool others_can_reach(const fs::path& dir) {
  for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !(st.st_mode & S_IXOTH)) return false;
    if (p == p.parent_path()) break;
  }
  return true;
}

// What a scenario may leave in its TMPDIR: a read-only directory with files, one that cannot even be read.
void leave_read_only(const fs::path& dir) {
  fs::create_directories(dir / "read-only" / "inner");
  std::ofstream(dir / "read-only" / "inner" / "file") << "x";
  fs::permissions(dir / "read-only" / "inner", fs::perms::owner_read | fs::perms::owner_exec);
  fs::permissions(dir / "read-only", fs::perms::owner_read | fs::perms::owner_exec);
  fs::create_directories(dir / "closed");
  std::ofstream(dir / "closed" / "file") << "x";
  fs::permissions(dir / "closed", fs::perms::none);
}

TEST(TempDirectory, WhatAScenarioLeftReadOnlyGoesWithIt) {
  const TempDir tmp;
  fs::permissions(tmp.path(), fs::perms::all);  // nobody's TMPDIR
  if (::geteuid() == 0 && !others_can_reach(tmp.path()))
    GTEST_SKIP() << "root ignores a directory's mode, and user nobody cannot reach " << tmp.path();  // nobody's TMPDIR
  const TmpDirSet set(tmp.path());
  EXPECT_EQ(status_of_unprivileged([&] {
              fs::path made;
              {
                const TempDirectory dir("parity-unit-", TempDirectory::Lock::kHeld);
                made = dir.path();
                leave_read_only(made);
                fs::permissions(made, fs::perms::owner_read | fs::perms::owner_exec);  // its TMPDIR itself too
              }
              return !fs::exists(fs::symlink_status(made));
            }),
            0);
}

// Makes this process (a test's child) the only one in a mount namespace of its own, as root there: this user's own
// where it is not root (an unprivileged user namespace). False where neither can be had (a container without them).
bool in_a_mount_namespace_of_its_own() {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWNS) != 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
    std::ofstream("/proc/self/setgroups") << "deny";
    std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
    std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
  }
  return ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;  // nothing mounted here is seen outside
}

// In a mount namespace of its own (a test's child): a tmpfs and a bind mount of `host` (a directory of this file
// system: the same device) left in a TempDirectory, and a tmpfs over another one itself; true when each went without
// its mounts being entered (their files and modes as they were) and with what was beside them.
bool mounts_left_in_temp_directories_stay(const fs::path& host) {
  fs::create_directories(host / "sub");
  std::ofstream(host / "precious") << "the host's";
  fs::permissions(host, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  const fs::perms host_mode = fs::status(host).permissions();
  fs::path made, over;
  {
    const TempDirectory dir("parity-unit-", TempDirectory::Lock::kHeld);
    const TempDirectory covered("parity-unit-");
    made = dir.path(), over = covered.path();
    for (const char* name : {"tmpfs", "bound", "beside/inner"}) fs::create_directories(made / name);
    std::ofstream(made / "beside" / "inner" / "file") << "x";
    if (::mount("parity-test", (made / "tmpfs").c_str(), "tmpfs", 0, "size=1m") != 0 ||
        ::mount(host.c_str(), (made / "bound").c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount("parity-test", over.c_str(), "tmpfs", 0, "size=1m") != 0)
      ::_exit(78);
    std::ofstream(made / "tmpfs" / "kept") << "the mount's";
    std::ofstream(over / "kept") << "the mount's";
  }
  const bool kept = fs::exists(made / "tmpfs" / "kept") && fs::exists(host / "precious") && fs::exists(host / "sub") &&
                    fs::status(host).permissions() == host_mode && fs::exists(over / "kept");
  const bool beside_gone = !fs::exists(made / "beside");
  // A killed run's directory with a tmpfs over it: the sweep had opened it by name, into the mount (a stalled FUSE
  // mount there hangs the open), and emptied the mount.
  const fs::path orphan = left_by_a_killed_process("parity-unit-");
  const bool mounted = ::mount("parity-test", orphan.c_str(), "tmpfs", 0, "size=1m") == 0;
  std::ofstream(orphan / "kept") << "the mount's";
  const bool swept_around =
      mounted && remove_orphaned_temp_directories("parity-unit-") == 0 && fs::exists(orphan / "kept");
  for (const fs::path& mount : {made / "tmpfs", made / "bound", over, orphan}) ::umount2(mount.c_str(), MNT_DETACH);
  return kept && beside_gone && swept_around;
}

TEST(TempDirectory, GoesWithoutEnteringAFileSystemMountedInIt) {
  // A scenario run as root that bind-mounted a directory of the host into its TMPDIR and was stopped before it
  // unmounted it: remove_all went into the mount and emptied the host's directory.
  const TempDir tmp;
  const TmpDirSet set(tmp.path() / "tmp");
  fs::create_directories(tmp.path() / "tmp");
  const pid_t child = ::fork();
  if (child == 0) {
    if (!in_a_mount_namespace_of_its_own()) ::_exit(77);
    try {
      ::_exit(mounts_left_in_temp_directories_stay(tmp.path() / "host") ? 0 : 1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ::_exit(2);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77 || WEXITSTATUS(status) == 78)
    GTEST_SKIP() << "no mount namespace of its own, or no mount in it, can be had here (a container without user "
                    "namespaces)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a mount's files or modes changed (1), or what was beside them kept";
}

// A tree `depth` directories deep in `dir` (a test's child: it changes directory).
bool make_deep_tree(const fs::path& dir, int depth) {
  if (::chdir(dir.c_str()) != 0) return false;
  for (int level = 0; level < depth; ++level)
    if (::mkdir("d", 0700) != 0 || ::chdir("d") != 0) return false;
  std::ofstream("file") << "x";
  return ::chdir("/") == 0;
}

TEST(TempDirectory, ADeepTreeGoesOnASmallStack) {
  // The removal had recursed a level a frame: a tree a scenario left a few thousand directories deep overflowed a
  // small stack (a thread's), tens of thousands the main one (where the descriptor limit allows that many).
  constexpr int kDepth = 3000;
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  const pid_t child = ::fork();
  if (child == 0) {
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_max < kDepth + 100) ::_exit(77);
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
    static fs::path made;
    try {
      auto* dir = new TempDirectory("parity-unit-");
      made = dir->path();
      if (!make_deep_tree(made, kDepth)) ::_exit(3);
      pthread_attr_t attributes;
      ::pthread_attr_init(&attributes);
      ::pthread_attr_setstacksize(&attributes, 256 * 1024);
      pthread_t thread;
      auto remove = [](void* d) -> void* {
        delete static_cast<TempDirectory*>(d);
        return nullptr;
      };
      if (::pthread_create(&thread, &attributes, remove, dir) != 0) ::_exit(4);
      ::pthread_join(thread, nullptr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ::_exit(2);
    }
    ::_exit(fs::exists(fs::symlink_status(made)) ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    GTEST_SKIP() << "fewer than " << kDepth + 100 << " descriptors may be open here (RLIMIT_NOFILE's hard limit)";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << " (a stack overflow)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the tree stayed (1), or could not be made (3, 4)";
}

TEST(TempDirectory, RemovesNoDirectoryPutInItsPlace) {
  // A scenario that renamed its TMPDIR away and made another of that name: the one it made had gone in its place (and
  // a sweep, which locks and checks a killed run's directory, had removed whatever was put there after its check).
  for (const auto lock : {TempDirectory::Lock::kHeld, TempDirectory::Lock::kNone}) {
    const TempDir tmp;
    const TmpDirSet set(tmp.path());
    fs::path made;
    {
      const TempDirectory dir("parity-unit-", lock);
      made = dir.path();
      fs::rename(made, tmp.path() / "moved");
      fs::create_directories(made / "put-there");
    }
    EXPECT_TRUE(fs::exists(made / "put-there")) << (lock == TempDirectory::Lock::kHeld ? "held" : "unlocked");
  }
}

TEST(TempDirectory, SweepRemovesWhatAKilledRunLeftReadOnly) {
  const TempDir tmp;
  fs::permissions(tmp.path(), fs::perms::all);  // nobody's TMPDIR
  if (::geteuid() == 0 && !others_can_reach(tmp.path()))
    GTEST_SKIP() << "root ignores a directory's mode, and user nobody cannot reach " << tmp.path();
  const TmpDirSet set(tmp.path());
  EXPECT_EQ(status_of_unprivileged([] {
              const fs::path left = left_by_a_killed_process("parity-unit-");
              if (left.empty()) return false;
              leave_read_only(left);
              return remove_orphaned_temp_directories("parity-unit-") == 1 && !fs::exists(fs::symlink_status(left));
            }),
            0);
}

TEST(TempDirectory, OnAFileSystemWithoutFlockIsMadeUnlockedAndNoSweepTakesIt) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path());
  flock_fails_with = ENOLCK;
  fs::path made;
  {
    const TempDirectory dir("parity-unit-", TempDirectory::Lock::kHeld);
    made = dir.path();
    std::ofstream(made / "in-use") << "x";
    EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);
    EXPECT_TRUE(fs::exists(made / "in-use"));
  }
  flock_fails_with = 0;
  EXPECT_FALSE(fs::exists(fs::symlink_status(made)));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(tmp.path())) left.push_back(entry.path().filename().string());
  EXPECT_TRUE(left.empty()) << "the attempts left " << left.size() << " directories, the first " << left.front();
}

TEST(TempDirectory, SweepUnderAMissingTmpdirRemovesNothing) {
  const TempDir tmp;
  const TmpDirSet set(tmp.path() / "missing");
  EXPECT_EQ(remove_orphaned_temp_directories("parity-unit-"), 0u);
}

}  // namespace
