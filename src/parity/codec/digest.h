// XXH3-128 for Python, the fidelity digest of parity.probe: a streaming hasher fed the leaves' bytes in place.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "pybind11_fwd.h"

namespace parity {

/// A streaming XXH3-128 hash: the object behind parity.probe's Xxh3, which compare's values kernel also feeds in C++
/// (values.h, DigestTaps). Thread-safe: each update is locked, as hashlib's objects are.
class Xxh3 {
 public:
  Xxh3();
  ~Xxh3();
  /// Adds `size` bytes at `data`.
  void add(const void* data, std::size_t size);
  /// Adds the bytes of a C-contiguous Python buffer in place (the GIL released for a large one).
  void update(const pybind11::handle& data);
  /// Bytes added so far: whether a feeder gave a leaf all of its bytes.
  std::uint64_t length() const;
  /// The digest so far: 32 lowercase hex digits, the canonical (big-endian) form.
  std::string hexdigest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  mutable std::mutex lock_;
};

/// Defines on `module` the class Xxh3: hashlib's interface (Xxh3(data), update(buffer), hexdigest()) over XXH3-128, so
/// that parity.probe digests a leaf with it as with hashlib.sha256, plus `length` (bytes hashed so far). update takes
/// any C-contiguous buffer (bytes, a contiguous array's memory) without copying it and hashes a large one with the GIL
/// released. parity._core and the parity program's builtin module _parity_digest (src/parity/api/builtin_modules.cc)
/// are both made with it.
void define_digest_functions(pybind11::module_& module);

}  // namespace parity
