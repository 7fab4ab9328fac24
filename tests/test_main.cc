// GoogleTest main for parity_tests: starts the one embedded interpreter before any test runs.
// `parity_tests --read-results DIR` is the fresh process that codec_test.cc re-reads its files in.
#include <gtest/gtest.h>

#include <cstring>

#include "interpreter.h"
#include "test_support.h"

int main(int argc, char** argv) {
  parity::start_interpreter();
  if (argc == 3 && std::strcmp(argv[1], "--read-results") == 0) return parity::testing::verify_results_dir(argv[2]);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
