// Whole transfers over a pipe or socket between parity's own processes (the fork server, compare's fan-out).
#pragma once

#include <cstddef>

namespace parity {

/// Writes all `size` bytes of `data` to `fd`, again after EINTR and short writes; false on an error (errno says
/// which). On a socket a closed other end is that false, never a SIGPIPE; on a pipe it is SIGPIPE unless the caller
/// ignores the signal. A pipe costs one failed send first.
bool write_all(int fd, const void* data, std::size_t size);

/// Reads exactly `size` bytes from `fd` into `data`, again after EINTR and short reads. False at the end of the
/// stream before `size` bytes (the other end closed) or on an error.
bool read_all(int fd, void* data, std::size_t size);

}  // namespace parity
