// The Python modules built into every program that embeds parity's interpreter (the parity executable, its workers,
// the tests): registered before the interpreter starts, so they are never loaded from a file. The extension module
// parity._core is for a python of its own and is never loaded into these programs.
#include <pybind11/embed.h>

#include "codec.h"
#include "digest.h"

// The output-path grammar of paths.cc, which python/parity/paths.py re-exports for the fidelity digests.
PYBIND11_EMBEDDED_MODULE(_parity_paths, m) { parity::define_path_functions(m); }
// XXH3-128 (digest.cc), parity.probe's fidelity digest.
PYBIND11_EMBEDDED_MODULE(_parity_digest, m) { parity::define_digest_functions(m); }
