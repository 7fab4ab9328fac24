// Glob matching without recursion or std::regex, for patterns and text that come from files (declared differences).
#pragma once

#include <string>

namespace parity {

/// Whether all of `text` matches `pattern`, as Python's fnmatch.fnmatchcase decides (backend.py validates the
/// same patterns with it): `*` any run of characters, `?` one character, `[abc]`, `[a-z]`, `[!a-z]` one character
/// of (or not of) a set, an unclosed `[` itself, no escapes. Both are UTF-8 and compared by code point; bytes that are
/// not UTF-8 count as one character each. Iterative, O(pattern x text) at worst and no stack per character, so a
/// hostile pattern costs time in proportion to its size and never overflows the stack.
/// With `literal_brackets` (the patterns of output paths, which hold '[' in every index: outputs['x'][0]), a '[' is
/// itself and no set is read (`outputs['x'][*]`: any index), and glob.escape's `[[]` still stands for '['.
bool glob_match(const std::string& pattern, const std::string& text, bool literal_brackets = false);

}  // namespace parity
