// The one door through which every JSON document parity reads passes: nesting limited while parsing.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace parity {

/// How deeply a manifest, a compare JSON, a times file or a worker's message may nest. nlohmann's copy, dump and
/// comparison recurse once per level, which this keeps far from the stack's end; it is also about where Python's
/// json.dumps stops (its recursion limit), so whatever a scenario's metadata could become, parity reads back.
/// Result files' headers nest more (several levels per output node): their decoder asks for its own bound.
inline constexpr int kJsonMaxDepth = 1000;

/// A document that is not JSON, nests deeper than allowed, or holds a number out of range (1e999). A
/// nlohmann::json::exception, so that the `catch (const json::exception&)` of each reader keeps naming its file.
class JsonInputError : public nlohmann::json::exception {
 public:
  explicit JsonInputError(const std::string& message) : exception(0, message.c_str()) {}
};

/// Parses `text` with at most `max_depth` nested arrays and objects, refused while parsing, before anything
/// recursive sees the value. `what` (a file name, or "" when the caller's own message names it) opens every message.
nlohmann::json parse_json(std::string_view text, const std::string& what, int max_depth = kJsonMaxDepth);

namespace detail {
/// parse_json's two readers, apart for the tests that hold them to each other. The fast one (simdjson) gives the value
/// nlohmann's parser would give, type for type, or nothing: for any text it cannot read or that nlohmann might read
/// otherwise (deeper than `max_depth`, an integer beyond 64 bits, a -0, a byte order mark), and for a document over
/// kFastJsonMaxBytes, for which parse_json falls back on nlohmann's, which reads it or throws as parse_json documents.
inline constexpr std::size_t kFastJsonMaxBytes = 16u << 20;
std::optional<nlohmann::json> parse_json_fast(std::string_view text, int max_depth);
nlohmann::json parse_json_with_nlohmann(std::string_view text, const std::string& what, int max_depth);
}  // namespace detail

/// Reads and parses `file` (see parse_json); the messages name `what` or else the file. Opens only what it can read as
/// a whole: a missing file is refused with "cannot read it".
nlohmann::json read_json_file(const std::filesystem::path& file, const std::string& what = "",
                              int max_depth = kJsonMaxDepth);

/// The value at JSON pointer `pointer` in `doc` ("/gold/run/seconds"), nullptr where there is none: what
/// doc.contains(json_pointer) and doc.at(json_pointer) give, without making a json_pointer (a vector of its tokens) and
/// looking the path up twice. The readers of a compare JSON take a dozen fields of each of thousands of scenarios so;
/// through json_pointer that had been half of the JUnit report's render (issue #20). A pointer through an array, with
/// an escape (~0, ~1) or not starting with '/' goes through json_pointer itself (which throws for the last).
const nlohmann::json* find_at(const nlohmann::json& doc, std::string_view pointer);

}  // namespace parity
