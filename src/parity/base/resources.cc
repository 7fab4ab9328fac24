// Finds parity's resources relative to the running executable (installed prefix or build tree), no path compiled in.
#include "resources.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "config.h"

namespace fs = std::filesystem;

namespace parity {
namespace {

// The name of the one-line file in the build tree's share/parity that names the Python the build was configured
// with; an installed parity finds its virtualenv's python beside it instead.
constexpr const char* kPythonLocator = "python-executable";

std::string env_or(const char* (*getenv)(const char*), const char* name, const std::string& fallback) {
  const char* value = getenv(name);
  return value && *value ? value : fallback;
}

// The prefix of a plain `cmake --install` when dir is the folder it put the package `parity` in
// (<prefix>/PARITY_INSTALL_PYTHONDIR/parity, where parity._core lies); else empty.
fs::path prefix_of_package(const fs::path& dir) {
  const fs::path package = fs::path(PARITY_INSTALL_PYTHONDIR) / "parity";
  fs::path prefix = dir;
  for (auto part = package.end(); part != package.begin();) {
    if (prefix.filename() != *--part) return {};
    prefix = prefix.parent_path();
  }
  return prefix;
}

// share/parity under the executable's folder, its parent or its grandparent: bin/ of a prefix, the build folder, and
// the build's tests/ and tests/fuzz/ folders; then under the prefix of an installed package holding the file.
fs::path find_share(const fs::path& exe_dir, std::string& searched) {
  std::vector<fs::path> roots;
  for (fs::path dir = exe_dir; roots.size() < 3; dir = dir.parent_path()) roots.push_back(dir);
  if (const fs::path prefix = prefix_of_package(exe_dir); !prefix.empty()) roots.push_back(prefix);
  for (const fs::path& root : roots) {
    const fs::path share = root / "share" / "parity";
    if (fs::is_directory(share / "fixtures")) return share;
    searched += (searched.empty() ? "" : ", ") + share.string();
  }
  return {};
}

// The folder holding the package `parity` that the embedded interpreter must import: the build tree's
// share/parity/python; else a plain `cmake --install`'s <prefix>/PARITY_INSTALL_PYTHONDIR, unless the prefix is a
// virtualenv (pip's install, or cmake's into $VIRTUAL_ENV), whose python already searches it; else none.
std::string find_package(const fs::path& share) {
  if (share.empty()) return "";
  if (fs::is_directory(share / "python" / "parity")) return (share / "python").string();
  const fs::path prefix = share.parent_path().parent_path();
  const fs::path installed = prefix / PARITY_INSTALL_PYTHONDIR;
  if (!fs::exists(prefix / "pyvenv.cfg") && fs::is_directory(installed / "parity")) return installed.string();
  return "";
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The virtualenv's python when the executable lives in a virtualenv's bin/ (pip installed it there); else the
// build tree's locator file; else the python3 found on PATH (an install outside any virtualenv).
std::string find_python(const fs::path& exe_dir, const fs::path& share) {
  if (fs::exists(exe_dir.parent_path() / "pyvenv.cfg") && fs::exists(exe_dir / "python"))
    return (exe_dir / "python").string();
  if (!share.empty() && fs::exists(share / kPythonLocator)) return first_line(share / kPythonLocator);
  if (fs::exists(exe_dir / "python3")) return (exe_dir / "python3").string();
  return "python3";
}

std::string under(const fs::path& share, const char* name) { return share.empty() ? "" : (share / name).string(); }

}  // namespace

Resources find_resources(const std::string& executable, const char* (*getenv)(const char*)) {
  const fs::path exe_dir = fs::path(executable).parent_path();
  std::string searched;
  const fs::path share = find_share(exe_dir, searched);
  Resources r;
  r.share = share.string();
  r.python_executable = env_or(getenv, "PARITY_PYTHON_EXECUTABLE", find_python(exe_dir, share));
  r.python_package = env_or(getenv, "PARITY_PYTHON_PACKAGE", find_package(share));
  r.fixtures = env_or(getenv, "PARITY_FIXTURES", under(share, "fixtures"));
  r.scenarios = env_or(getenv, "PARITY_SCENARIOS", under(share, "scenarios"));
  r.templates = env_or(getenv, "PARITY_TEMPLATES", under(share, "templates"));
  if (r.fixtures.empty() || r.scenarios.empty() || r.templates.empty())
    throw std::runtime_error(
        "parity's resources (share/parity: built-in backends, scenarios, templates) are not "
        "beside the executable " +
        executable + " (searched " + searched +
        "); reinstall parity, or set PARITY_FIXTURES, PARITY_SCENARIOS and PARITY_TEMPLATES");
  return r;
}

namespace {
std::vector<std::string>& anchors() {
  static std::vector<std::string> files;  // empty: the running executable (anchor_resources says when it is not)
  return files;
}
}  // namespace

void anchor_resources(std::vector<std::string> files) { anchors() = std::move(files); }

const Resources& resources() {
  static const Resources found = [] {
    const auto getenv = [](const char* name) -> const char* { return std::getenv(name); };
    std::string tried;
    for (const std::string& file : anchors()) {
      try {
        return find_resources(file, getenv);
      } catch (const std::runtime_error& e) {
        tried += std::string(tried.empty() ? "" : "; ") + e.what();
      }
    }
    if (!tried.empty()) throw std::runtime_error(tried);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot read /proc/self/exe to find parity's resources: " + ec.message());
    return find_resources(exe.string(), getenv);
  }();
  return found;
}

}  // namespace parity
