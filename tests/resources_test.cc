// Unit tests of the resource lookup: relative to the executable in an installed prefix and in a build tree, the
// environment's overrides, and an error that names where it looked.
#include "resources.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "config.h"
#include "test_support.h"

namespace fs = std::filesystem;
using parity::find_resources;
using parity::testing::TempDir;

namespace {

std::map<std::string, std::string> g_env;  // the environment find_resources sees in these tests

const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

void touch(const fs::path& file, const std::string& text = "") {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

// share/parity as an install lays it out: built-in backends, corpus and templates.
fs::path make_share(const fs::path& root) {
  const fs::path share = root / "share" / "parity";
  touch(share / "fixtures" / "__init__.py");
  fs::create_directories(share / "scenarios");
  fs::create_directories(share / "templates");
  return share;
}

class ResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override { g_env.clear(); }
  TempDir dir_;
};

TEST_F(ResourcesTest, AVirtualenvInstallUsesItsPythonAndSitePackages) {
  const fs::path venv = dir_.path() / "venv";
  const fs::path share = make_share(venv);
  touch(venv / "pyvenv.cfg");
  touch(venv / "bin" / "python");
  touch(venv / PARITY_INSTALL_PYTHONDIR / "parity" / "__init__.py");
  const auto r = find_resources((venv / "bin" / "parity").string(), fake_getenv);
  EXPECT_EQ(r.share, share.string());
  EXPECT_EQ(r.python_executable, (venv / "bin" / "python").string());
  EXPECT_EQ(r.python_package, "");  // pip put the package into the virtualenv's site-packages
  EXPECT_EQ(r.fixtures, (share / "fixtures").string());
  EXPECT_EQ(r.scenarios, (share / "scenarios").string());
  EXPECT_EQ(r.templates, (share / "templates").string());
}

TEST_F(ResourcesTest, TheBuildTreeIsFoundFromTheBinaryAndFromTestsBelowIt) {
  const fs::path build = dir_.path() / "build";
  const fs::path share = make_share(build);
  touch(share / "python" / "parity" / "__init__.py");
  touch(share / "python-executable", "/somewhere/venv/bin/python\n");
  for (const fs::path& exe : {build / "parity", build / "tests" / "parity_tests", build / "tests" / "fuzz" / "f"}) {
    const auto r = find_resources(exe.string(), fake_getenv);
    EXPECT_EQ(r.share, share.string()) << exe;
    EXPECT_EQ(r.python_executable, "/somewhere/venv/bin/python") << exe;
    EXPECT_EQ(r.python_package, (share / "python").string()) << exe;
  }
}

// A plain `cmake --install --prefix P`: P/bin/parity, P/share/parity with the configured Python's locator, and the
// package (with _core) in P/PARITY_INSTALL_PYTHONDIR/parity.
TEST_F(ResourcesTest, APlainInstallFindsItsPackageFromTheExecutable) {
  const fs::path prefix = dir_.path() / "prefix";
  const fs::path share = make_share(prefix);
  touch(share / "python-executable", "/configured/python\n");
  touch(prefix / PARITY_INSTALL_PYTHONDIR / "parity" / "__init__.py");
  const auto r = find_resources((prefix / "bin" / "parity").string(), fake_getenv);
  EXPECT_EQ(r.share, share.string());
  EXPECT_EQ(r.python_executable, "/configured/python");
  EXPECT_EQ(r.python_package, (prefix / PARITY_INSTALL_PYTHONDIR).string());
}

TEST_F(ResourcesTest, APlainInstallsCoreModuleFindsTheSharedFolderOfItsPrefix) {
  const fs::path prefix = dir_.path() / "prefix";
  const fs::path share = make_share(prefix);
  const fs::path core = prefix / PARITY_INSTALL_PYTHONDIR / "parity" / "_core.cpython-311-x86_64-linux-gnu.so";
  touch(core);
  const auto r = find_resources(core.string(), fake_getenv);
  EXPECT_EQ(r.share, share.string());
  EXPECT_EQ(r.scenarios, (share / "scenarios").string());
  // The same file out of the install's layout, too deep for the executable's search, is not taken for it.
  const fs::path elsewhere = prefix / "lib" / "python" / "other-packages" / "parity" / "_core.so";
  touch(elsewhere);
  EXPECT_THROW(find_resources(elsewhere.string(), fake_getenv), std::runtime_error);
}

TEST_F(ResourcesTest, TheEnvironmentOverridesEachPath) {
  make_share(dir_.path());
  g_env = {{"PARITY_PYTHON_EXECUTABLE", "/py"},
           {"PARITY_PYTHON_PACKAGE", "/pkg"},
           {"PARITY_FIXTURES", "/fx"},
           {"PARITY_SCENARIOS", "/sc"},
           {"PARITY_TEMPLATES", "/tp"}};
  const auto r = find_resources((dir_.path() / "bin" / "parity").string(), fake_getenv);
  EXPECT_EQ(r.python_executable, "/py");
  EXPECT_EQ(r.python_package, "/pkg");
  EXPECT_EQ(r.fixtures, "/fx");
  EXPECT_EQ(r.scenarios, "/sc");
  EXPECT_EQ(r.templates, "/tp");
}

TEST_F(ResourcesTest, NoShareFolderIsAnErrorNamingWhereItLooked) {
  const fs::path exe = dir_.path() / "a" / "b" / "bin" / "parity";
  try {
    find_resources(exe.string(), fake_getenv);
    FAIL() << "no error without share/parity";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(exe.string()), std::string::npos) << what;
    EXPECT_NE(what.find((dir_.path() / "a" / "b" / "bin" / "share" / "parity").string()), std::string::npos) << what;
    EXPECT_NE(what.find("PARITY_SCENARIOS"), std::string::npos) << what;
  }
}

}  // namespace
