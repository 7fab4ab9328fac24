// The one embedded Python interpreter of a parity process: started once, never finalized.
#pragma once

#include <string>

namespace parity {

/// The interpreter's part of resources() (resources.h): found relative to the executable; each can be overridden by
/// an environment variable of the same name.
struct InterpreterPaths {
  std::string python_executable;  ///< PARITY_PYTHON_EXECUTABLE: its virtualenv's packages become importable
  std::string python_package;     ///< PARITY_PYTHON_PACKAGE: directory that holds `parity` (empty: site-packages)
  std::string fixtures;           ///< PARITY_FIXTURES: directory of built-in backends (package parity_fixtures)
};

/// The configured paths, after environment overrides.
InterpreterPaths configured_paths();

/// Starts the interpreter (once per process; later calls do nothing), imports NumPy's C API and the
/// `parity` package, and registers the built-in backends. Throws std::runtime_error when Python or
/// NumPy cannot be loaded. Every function here that touches Python objects requires it first.
void start_interpreter();

}  // namespace parity
