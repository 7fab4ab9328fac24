// Where parity's resources (Python package, built-in backends, bundled corpus, templates, Python) are: found
// relative to the running executable, so that an installed or moved parity needs no source path compiled in.
#pragma once

#include <string>
#include <vector>

namespace parity {

/// The resource directories of this parity. Looked up from the executable's own location (/proc/self/exe): the
/// first of its folder, its parent and its grandparent that holds `share/parity/` is the root, so
/// `<prefix>/bin/parity` (installed) and `build/parity`, `build/tests/...` (the build tree, where the build links
/// `build/share/parity/*` to the sources) find the same layout; a file inside a plain `cmake --install`'s package
/// (`<prefix>/PARITY_INSTALL_PYTHONDIR/parity/_core*.so`) finds `<prefix>/share/parity`. Each field can be
/// overridden by the environment variable named beside it.
struct Resources {
  std::string share;              ///< the `share/parity` folder found (empty when none was)
  std::string python_executable;  ///< PARITY_PYTHON_EXECUTABLE: the interpreter to embed (its virtualenv's packages)
  std::string python_package;     ///< PARITY_PYTHON_PACKAGE: folder holding `parity`; empty: python's path has it
  std::string fixtures;           ///< PARITY_FIXTURES: built-in backends (the package parity_fixtures)
  std::string scenarios;          ///< PARITY_SCENARIOS: the bundled corpus, the default scenario path
  std::string templates;          ///< PARITY_TEMPLATES: the HTML report's templates
};

/// The resources of this process, looked up once. Throws std::runtime_error naming the folders it searched when
/// no `share/parity` is found and the environment does not name every folder.
const Resources& resources();

/// Makes resources() look up from these files, the first that finds a `share/parity` winning, instead of from the
/// running executable: for parity._core, loaded into whatever Python imports it, whose own file (a build tree's
/// <build>/python/_core*.so, a plain install's <prefix>/PARITY_INSTALL_PYTHONDIR/parity/_core*.so) or whose environment
/// (pip's <venv>/bin/python beside <venv>/share/parity) is what sits in parity's tree. Call before the first
/// resources() (the module's initialisation does).
void anchor_resources(std::vector<std::string> files);

/// The lookup itself, from an executable's path and the environment (`getenv`-like); resources() calls it with
/// /proc/self/exe and std::getenv. Exposed for the tests.
Resources find_resources(const std::string& executable, const char* (*getenv)(const char*));

}  // namespace parity
