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

/// Imports NumPy's C API into the one table parity's code shares (numpy_api.h), in a process whose interpreter runs:
/// start_interpreter does it for parity's executables, the extension module parity._core when it is imported.
/// Throws std::runtime_error naming `python` (the interpreter) when NumPy cannot be loaded.
void import_numpy_api(const std::string& python);

/// Starts the interpreter (once per process; later calls do nothing), imports NumPy's C API and the
/// `parity` package, and registers the built-in backends. Throws std::runtime_error when Python or
/// NumPy cannot be loaded. Every function here that touches Python objects requires it first.
void start_interpreter();

/// Starts the bare interpreter, for a process that may need only the standard library (the supervisor of a run reads
/// its configuration file with tomllib): a fifth of start_interpreter's cost, which NumPy's import is most of.
/// start_interpreter completes it later. Only standard-library code may run before that.
void start_python();

}  // namespace parity
