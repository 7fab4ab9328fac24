// JSON text in the exact form nlohmann's compact dump writes it: recognised without building a document, and
// re-indented as its pretty dump would write it, so that a run pastes a worker's record into the manifest.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace parity::canonical {

/// The length of the value that starts `text` if that value is canonical: nlohmann's parse would read it and its
/// dump(-1, ' ', false, replace) write it back byte for byte (object keys strictly increasing, as its std::map keeps
/// them, no duplicates; a string's escapes its own and nothing else escaped; valid UTF-8; a number's text its own
/// form). 0 when it is not, or when the value is outside what this reader takes on: a key holding an escape, objects
/// and arrays nested more than `max_depth` deep. A caller falls back to parsing then; 0 proves nothing wrong.
std::size_t value_length(std::string_view text, int max_depth);

/// value_length's, and where `text` is an object, the text of its member `key` in `member` (left as it is when it has
/// none): one pass over a declaration finds its timeout (runner.cc).
std::size_t value_length(std::string_view text, int max_depth, std::string_view key, std::string_view& member);

/// The length of the string token (quotes included) that starts `text` if it holds no escape and is valid UTF-8
/// without control characters, so that its content is the string's value as written; 0 otherwise.
std::size_t plain_string_length(std::string_view text);

/// Appends `value` (canonical, value_length's) as nlohmann's dump(1) writes it at indentation `indent`, what a
/// manifest entry holds (manifest.h): the pretty form of the same document.
void append_indented(std::string& out, std::string_view value, unsigned indent);

}  // namespace parity::canonical
