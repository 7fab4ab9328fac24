// pybind11's object types without pybind11.h, for the headers that only name them (issue #20, target 6).
#pragma once

// handle, object, the other Python types and error_already_set. Not pybind11.h: it alone makes GCC emit about 4 MB of
// pybind11's own functions into every file that includes it, ~9 CPU seconds at -O2 -g. pytypes.h leaves
// error_already_set's what() and deleter to pybind11.h, which defines them in every file that includes it; every
// program that links a layer links such files (interpreter.cc, for one), and the linker takes them from there. A file
// that uses what only pybind11.h defines (module_, gil_scoped_release, a caster of a bound class) includes it itself:
// the linker fails on a hidden symbol that no file defines.
#include <pybind11/pytypes.h>

namespace PYBIND11_NAMESPACE {
// Defined by pybind11.h, which the sources that make or import a module include; a declaration only names it.
class module_;
}  // namespace PYBIND11_NAMESPACE
