// A private directory under the system's temporary directory (see temp_directory.h).
#include "temp_directory.h"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <system_error>

namespace parity {

TempDirectory::TempDirectory(const std::string& prefix) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) {  // its own message names no directory
    const char* given = std::getenv("TMPDIR");
    throw std::system_error(ec, "the temporary directory " + std::string(given ? given : "(TMPDIR unset)"));
  }
  std::string pattern = std::filesystem::absolute(base / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  path_ = pattern;
}

TempDirectory::~TempDirectory() {
  std::error_code ignored;  // a destructor must not throw; what cannot be removed stays
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace parity
