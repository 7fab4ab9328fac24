// Shared by the test files: a per-test temporary directory, `contains`, `json_difference`, and the fresh-process half
// of the codec round-trip test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
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

/// Where `a` and `b` first differ ("" when nowhere), `where` naming `a` itself: of the same kind all the way down
/// and floats bit for bit, as a reader of the values tells them apart (json's == takes 1, 1u and 1.0 as equal, 0.0
/// and -0.0 too, and NaN as unequal to itself).
inline std::string json_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& where = "") {
  const std::string at = where.empty() ? "the value" : where;
  if (a.type() != b.type()) return at + ": a " + a.type_name() + " against a " + b.type_name();
  if (a.is_number_float())
    return std::bit_cast<std::uint64_t>(a.get<double>()) == std::bit_cast<std::uint64_t>(b.get<double>())
               ? ""
               : at + ": " + a.dump() + " against " + b.dump();
  if (!a.is_array() && !a.is_object()) return a == b ? "" : at + ": " + a.dump() + " against " + b.dump();
  if (a.size() != b.size())
    return at + ": " + std::to_string(a.size()) + " members against " + std::to_string(b.size());
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (a.is_object() && i.key() != j.key()) return at + ": key " + i.key() + " against " + j.key();
    const std::string inner = json_difference(*i, *j, where + "/" + (a.is_object() ? i.key() : "[]"));
    if (!inner.empty()) return inner;
  }
  return "";
}

}  // namespace parity::testing
