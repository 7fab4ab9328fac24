// The compare report as JUnit XML, in the dialect Jenkins, GitLab and GitHub test reporters read.
#pragma once

#include <string>

#include "compare.h"

namespace parity {

/// One <testsuite> for the gold/candidate pair, one <testcase> per scenario (classname = module,
/// name = function with params): <failure> for fail and xpass, <error> for error, <skipped> for skip and xfail.
std::string report_to_junit(const CompareReport& report);

/// Replaces characters XML 1.0 cannot carry (control characters, lone surrogates) with U+FFFD.
std::string xml_safe(const std::string& text);

}  // namespace parity
