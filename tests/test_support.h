// Shared by test_main.cc and codec_test.cc: the fresh-process half of the codec round-trip test.
#pragma once

namespace parity::testing {

/// Re-creates every codec layout case, reads DIR/<case>.parity and reports each difference in dtype,
/// byte order, shape, strides, flags, alignment, type or bytes. Returns the process exit code (0: all equal).
int verify_results_dir(const char* dir);

}  // namespace parity::testing
