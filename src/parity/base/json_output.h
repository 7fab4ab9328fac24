// The one way parity writes a large JSON document as text: nlohmann's dump, byte for byte, faster.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace parity {

/// What value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) returns, byte for byte: pretty with
/// `indent` spaces a level, compact when `indent` is negative; non-ASCII written as UTF-8, invalid UTF-8 replaced by
/// U+FFFD. Strings (and keys) of printable ASCII without a quote or backslash, nearly all of a report's, are copied as
/// they are; every other value is written by nlohmann's own serializer. At 2,000 scenarios the compare JSON's dump
/// took 22 ms, which after the last scenario is the longest of the reports' renders (issue #20).
std::string dump_json(const nlohmann::json& value, int indent);

}  // namespace parity
