// Whole transfers over a pipe or socket between parity's own processes (the fork server, compare's fan-out).
#pragma once

#include <cstddef>

namespace parity {

/// Writes all `size` bytes of `data` to `fd`, again after EINTR and short writes. False when the other end is gone
/// or on any other error (errno says which); on a socket a closed other end is that false, never a SIGPIPE.
bool write_all(int fd, const void* data, std::size_t size);

/// Reads exactly `size` bytes from `fd` into `data`, again after EINTR and short reads. False at the end of the
/// stream before `size` bytes (the other end closed) or on an error.
bool read_all(int fd, void* data, std::size_t size);

}  // namespace parity
