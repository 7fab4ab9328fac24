// Parses JSON with a nesting limit (see json_input.h): deep input is refused by the parser's callback, which sees
// each array and object open, so no recursive copy, dump or destructor ever meets it.
#include "json_input.h"

#include <fstream>
#include <sstream>

using json = nlohmann::json;

namespace parity {
namespace {

// Thrown from inside nlohmann's parser, which lets an exception from its callback pass through untouched.
struct TooDeep {};

std::string prefixed(const std::string& what, const std::string& why) { return what.empty() ? why : what + ": " + why; }

}  // namespace

json parse_json(std::string_view text, const std::string& what, int max_depth) {
  // `depth` counts the containers open around the one starting: 0 for the document itself.
  const json::parser_callback_t limit = [max_depth](int depth, json::parse_event_t event, json&) {
    const bool opens = event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= max_depth) throw TooDeep{};
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), limit);
  } catch (const TooDeep&) {
    throw JsonInputError(prefixed(what, "JSON nested deeper than " + std::to_string(max_depth) +
                                            " levels (refused: parity reads no deeper)"));
  } catch (const json::out_of_range& e) {  // 406: a number beyond double's range (1e999)
    throw JsonInputError(prefixed(what, std::string("not valid JSON for parity (") + e.what() + ")"));
  } catch (const json::parse_error& e) {
    throw JsonInputError(prefixed(what, std::string("not JSON (") + e.what() + ")"));
  }
}

json read_json_file(const std::filesystem::path& file, const std::string& what, int max_depth) {
  const std::string name = what.empty() ? file.string() : what;
  std::ifstream in(file);
  if (!in) throw JsonInputError(name + ": cannot read it (missing, or not a readable file)");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), name, max_depth);
}

}  // namespace parity
