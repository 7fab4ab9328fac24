// XXH3-128 for Python, the fidelity digest of parity.probe: a streaming hasher fed the leaves' bytes in place.
#pragma once

#include <pybind11/pybind11.h>

namespace parity {

/// Defines on `module` the class Xxh3: hashlib's interface (Xxh3(data), update(buffer), hexdigest()) over XXH3-128, so
/// that parity.probe digests a leaf with it as with hashlib.sha256. update takes any C-contiguous buffer (bytes, a
/// contiguous array's memory) without copying it and hashes a large one with the GIL released. hexdigest is 32
/// lowercase hex digits, the canonical (big-endian) form. parity._core and the parity program's builtin module
/// _parity_digest (src/parity/api/builtin_modules.cc) are both made with it.
void define_digest_functions(pybind11::module_& module);

}  // namespace parity
