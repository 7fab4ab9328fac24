// Unit tests of safe_file: files of a results directory and files the user names, read without blocking or following.
#include "safe_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "test_support.h"

namespace fs = std::filesystem;
using parity::read_named_text_file;
using parity::read_regular_text_file;
using parity::UnsafeFileError;
using parity::testing::TempDir;

namespace {

void write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

// What the read throws, as text ("" when it reads).
template <typename Read>
std::string refusal(Read read) {
  try {
    read();
  } catch (const UnsafeFileError& e) {
    return std::string("unsafe: ") + e.what();
  } catch (const std::system_error& e) {
    return std::string("system: ") + e.what();
  }
  return "";
}

}  // namespace

TEST(NamedTextFile, ReadsAFileAndOneReachedThroughALink) {
  TempDir tmp;
  write(tmp.path() / "a.json", "{\"a\": 1}");
  fs::create_symlink(tmp.path() / "a.json", tmp.path() / "link.json");
  EXPECT_EQ(read_named_text_file(tmp.path() / "a.json"), "{\"a\": 1}");
  EXPECT_EQ(read_named_text_file(tmp.path() / "link.json"), "{\"a\": 1}");  // the user named it: followed
}

TEST(NamedTextFile, RefusesAFifoWithoutWaitingForAWriter) {
  TempDir tmp;
  const fs::path fifo = tmp.path() / "f.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // An ifstream's open of it would wait here for ever.
  EXPECT_EQ(refusal([&] { read_named_text_file(fifo); }),
            "unsafe: " + fifo.string() + ": is a FIFO; parity reads a regular file there");
  EXPECT_EQ(refusal([&] { read_named_text_file(fifo, "--flag " + fifo.string()); }),
            "unsafe: --flag " + fifo.string() + ": is a FIFO; parity reads a regular file there");
}

TEST(NamedTextFile, RefusesADirectoryAndSaysWhyAMissingFileCannotBeOpened) {
  TempDir tmp;
  EXPECT_EQ(refusal([&] { read_named_text_file(tmp.path()); }),
            "unsafe: " + tmp.path().string() + ": is a directory; parity reads a regular file there");
  EXPECT_EQ(refusal([&] { read_named_text_file(tmp.path() / "none"); }),
            "system: " + (tmp.path() / "none").string() + ": No such file or directory");
}

TEST(NamedTextFile, StopsAtTheFirstNulByteAsAResultsDirectorysTextDoes) {
  TempDir tmp;
  write(tmp.path() / "nul.json", std::string("{\"a\"\0 1}", 8));
  const std::string expected = ": byte 4 is NUL, which no text holds: a damaged file, or a sparse one (read as zeros)";
  EXPECT_EQ(refusal([&] { read_named_text_file(tmp.path() / "nul.json"); }),
            "unsafe: " + (tmp.path() / "nul.json").string() + expected);
  EXPECT_EQ(refusal([&] { read_regular_text_file(tmp.path(), "nul.json"); }),
            "unsafe: " + (tmp.path() / "nul.json").string() + expected);
}

TEST(RegularTextFile, RefusesALinkInsideAResultsDirectory) {
  TempDir tmp;
  write(tmp.path() / "a.json", "{}");
  fs::create_symlink(tmp.path() / "a.json", tmp.path() / "link.json");
  EXPECT_EQ(refusal([&] { read_regular_text_file(tmp.path(), "link.json"); }),
            "unsafe: " + (tmp.path() / "link.json").string() +
                ": is a symbolic link; parity reads only regular files inside a results directory");
}
