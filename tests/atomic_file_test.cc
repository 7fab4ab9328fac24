// Unit tests of AtomicFile: readers see nothing or the whole file, and failures leave no debris behind.
#include "atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "deadline.h"
#include "test_support.h"

namespace fs = std::filesystem;
using parity::AtomicFile;
using parity::testing::TempDir;

namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_.path())) names.push_back(e.path().filename().string());
    return names;
  }

  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  TempDir dir_;
};

TEST_F(AtomicFileTest, CommitMakesTheFileAppearWithItsContent) {
  const fs::path target = dir_.path() / "out.bin";
  {
    AtomicFile f(target);
    f.write("hello");
    f.pad(3);
    const char raw[] = {'\x01', '\xff'};
    f.write(raw, sizeof raw);
    EXPECT_EQ(f.written(), 10u);
    EXPECT_FALSE(fs::exists(target)) << "visible before commit";
    f.commit();
    EXPECT_TRUE(fs::exists(target));
  }
  EXPECT_EQ(read(target), std::string("hello\0\0\0\x01\xff", 10));
  EXPECT_EQ(entries(), std::vector<std::string>{"out.bin"});
}

TEST_F(AtomicFileTest, LargeWritesAndPaddingAreComplete) {
  const fs::path target = dir_.path() / "big.bin";
  const std::string chunk(1 << 20, 'x');
  AtomicFile f(target);
  for (int i = 0; i < 5; ++i) f.write(chunk);
  f.pad(10000);  // more than one internal block of zeros
  f.commit();
  const std::string content = read(target);
  ASSERT_EQ(content.size(), 5u * chunk.size() + 10000u);
  EXPECT_EQ(content.substr(0, chunk.size()), chunk);
  EXPECT_EQ(content.substr(5 * chunk.size()), std::string(10000, '\0'));
}

TEST_F(AtomicFileTest, UncommittedFileLeavesNothingBehind) {
  {
    AtomicFile f(dir_.path() / "never.bin");
    f.write("partial");
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, UncommittedFileKeepsTheOldContent) {
  const fs::path target = dir_.path() / "keep.txt";
  std::ofstream(target) << "old";
  {
    AtomicFile f(target);
    f.write("new content that is never committed");
  }
  EXPECT_EQ(read(target), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"keep.txt"});
}

TEST_F(AtomicFileTest, ExceptionBeforeCommitLeavesNothingBehind) {
  try {
    AtomicFile f(dir_.path() / "x.bin");
    f.write("some");
    throw std::logic_error("scenario failed mid-write");
  } catch (const std::logic_error&) {
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, MissingDirectoryThrowsNamingThePath) {
  const fs::path target = dir_.path() / "no" / "such" / "dir" / "f.bin";
  try {
    AtomicFile f(target);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(entries().empty());
  EXPECT_THROW(parity::write_file_atomically(target, "x"), std::runtime_error);
}

TEST_F(AtomicFileTest, FailedRenameThrowsAndRemovesTheTempFile) {
  // A non-empty directory at the target: the temp file can be written but not renamed onto it.
  const fs::path target = dir_.path() / "occupied";
  fs::create_directories(target / "child");
  try {
    parity::write_file_atomically(target, "data");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries(), std::vector<std::string>{"occupied"});
  EXPECT_TRUE(fs::is_directory(target / "child"));
}

TEST_F(AtomicFileTest, WriteFileAtomicallyReplacesAnExistingFile) {
  const fs::path target = dir_.path() / "report.json";
  std::ofstream(target) << "a much longer old content than the new one";
  parity::write_file_atomically(target, "{}\n");
  EXPECT_EQ(read(target), "{}\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
}

TEST_F(AtomicFileTest, WriteFileAtomicallyCreatesAnEmptyFile) {
  const fs::path target = dir_.path() / "empty";
  parity::write_file_atomically(target, "");
  ASSERT_TRUE(fs::exists(target));
  EXPECT_EQ(fs::file_size(target), 0u);
}

TEST_F(AtomicFileTest, ReplacedFileKeepsOldInodeForOpenReaders) {
  // A reader that opened the old file keeps reading it whole: replacement is a rename, not a rewrite.
  const fs::path target = dir_.path() / "data";
  parity::write_file_atomically(target, "first version");
  std::ifstream reader(target, std::ios::binary);
  parity::write_file_atomically(target, "second");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(reader), {}), "first version");
  EXPECT_EQ(read(target), "second");
}

TEST_F(AtomicFileTest, TwoFilesUnderConstructionInOneDirectory) {
  AtomicFile a(dir_.path() / "a");
  AtomicFile b(dir_.path() / "b");
  a.write("A");
  b.write("B");
  b.commit();
  a.commit();
  EXPECT_EQ(read(dir_.path() / "a"), "A");
  EXPECT_EQ(read(dir_.path() / "b"), "B");
}

// Publish::in_place (a run's result files): one directory operation, no temporary name.
TEST_F(AtomicFileTest, InPlaceFileIsWrittenUnderItsOwnNameAlone) {
  const fs::path target = dir_.path() / "result.parity";
  AtomicFile f(target, parity::Publish::in_place);
  f.write("whole");
  EXPECT_EQ(entries(), std::vector<std::string>{"result.parity"}) << "no temporary name beside it";
  f.commit();
  EXPECT_EQ(read(target), "whole");
  EXPECT_EQ(entries(), std::vector<std::string>{"result.parity"});
}

TEST_F(AtomicFileTest, InPlaceReplacesAFileAndALinkWithoutWritingThroughIt) {
  const fs::path half = dir_.path() / "half.parity", link = dir_.path() / "link.parity";
  const fs::path elsewhere = dir_.path() / "elsewhere";
  std::ofstream(half) << "a killed writer's longer, partial file";
  std::ofstream(elsewhere) << "not parity's";
  fs::create_symlink(elsewhere, link);
  for (const fs::path& target : {half, link}) {
    AtomicFile f(target, parity::Publish::in_place);
    f.write("new");
    f.commit();
    EXPECT_EQ(read(target), "new") << target;
  }
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(read(elsewhere), "not parity's");
}

TEST_F(AtomicFileTest, UncommittedInPlaceFileIsRemoved) {
  try {
    AtomicFile f(dir_.path() / "x.parity", parity::Publish::in_place);
    f.write("some");
    throw std::logic_error("the outputs could not be written whole");
  } catch (const std::logic_error&) {
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFileTest, ANamedFileThroughALinkIsWrittenWhereItPointsEvenADanglingOne) {
  fs::create_directory(dir_.path() / "archive");
  fs::create_symlink("archive/today.json", dir_.path() / "latest.json");  // dangling, relative
  fs::create_symlink(dir_.path() / "latest.json", dir_.path() / "chain.json");
  EXPECT_EQ(parity::followed_links(dir_.path() / "chain.json"), dir_.path() / "archive/today.json");
  parity::write_named_file(dir_.path() / "chain.json", "{}");
  EXPECT_TRUE(fs::is_symlink(dir_.path() / "chain.json") && fs::is_symlink(dir_.path() / "latest.json"));
  EXPECT_EQ(read(dir_.path() / "archive/today.json"), "{}");
}

TEST_F(AtomicFileTest, ANamedFifoIsWrittenIntoNeverReplacedAndADirectoryRefused) {
  const fs::path fifo = dir_.path() / "report.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so that the writer's open finds a reader
  ASSERT_GE(reader, 0);
  parity::write_named_file(fifo, "report");
  char got[16] = {};
  EXPECT_EQ(::read(reader, got, sizeof got), 6);
  EXPECT_EQ(std::string(got), "report");
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(entries(), std::vector<std::string>{"report.fifo"});  // no temp file beside it
  EXPECT_THROW(parity::write_named_file(dir_.path(), "x"), std::runtime_error);
}

TEST_F(AtomicFileTest, AFifosReaderIsWaitedForUntilAStopSignal) {
  const fs::path fifo = dir_.path() / "unread.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A stop signal (note_stop_signal, without SA_RESTART, as compare installs it) while the open waits for a reader:
  // Interrupted, where a failed open had been an exit 2 and the FIFO's wait had had no end.
  struct sigaction action {
  }, old{};
  action.sa_handler = parity::note_stop_signal;
  ::sigemptyset(&action.sa_mask);
  ASSERT_EQ(::sigaction(SIGALRM, &action, &old), 0);
  ::alarm(1);
  EXPECT_THROW(parity::write_named_file(fifo, "report"), parity::Interrupted);
  ::alarm(0);
  ::sigaction(SIGALRM, &old, nullptr);
  parity::detail::stop_signal = 0;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
}

TEST_F(AtomicFileTest, AnOpenFileNamedThroughProcIsWrittenWhereItStandsNeverReplaced) {
  const fs::path log = dir_.path() / "build.log";
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before\n", 7), 7);
  struct stat before {};
  ASSERT_EQ(::fstat(fd, &before), 0);
  const fs::path link = "/dev/fd/" + std::to_string(fd);  // /dev/fd -> /proc/self/fd
  EXPECT_EQ(parity::open_file_link(link),
            fs::path("/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd)));
  EXPECT_EQ(parity::open_file_link(log), std::nullopt);
  parity::write_named_file(link, "report\n");
  ASSERT_EQ(::write(fd, "after\n", 6), 6);  // the report moved the descriptor on, as the process's own writes do
  ::close(fd);
  struct stat now {};
  ASSERT_EQ(::stat(log.c_str(), &now), 0);
  EXPECT_EQ(now.st_ino, before.st_ino);
  EXPECT_EQ(read(log), "before\nreport\nafter\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"build.log"});
}

}  // namespace
