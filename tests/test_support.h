// Shared by the test files: a per-test temporary directory, `contains`, and the fresh-process half of the codec
// round-trip test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <system_error>

namespace parity::testing {

/// Re-creates every codec layout case, reads DIR/<case>.parity and reports each difference in dtype,
/// byte order, shape, strides, flags, alignment, type or bytes. Returns the process exit code (0: all equal).
int verify_results_dir(const char* dir);

/// A fresh, empty directory named after the running test; removed with everything in it when destroyed.
/// The name holds the process id, the test suite and the test name (with any '/' of a parameterized or typed
/// test replaced), so no two tests and no two test processes running at once share a directory.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("parity-test-" + std::to_string(::getpid()) + "-" + test_id())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;  // a destructor must not throw; a directory left behind is harmless
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  // "Suite.Name" of the running test, reduced to characters that are safe in one path component.
  static std::string test_id() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string id = info ? std::string(info->test_suite_name()) + "." + info->name() : "outside-a-test";
    for (char& c : id)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    return id;
  }

  std::filesystem::path path_;
};

/// Whether `text` holds `part` (what most message checks ask).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace parity::testing
