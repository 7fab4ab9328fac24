// Parses JSON with a nesting limit (see json_input.h): deep input is refused by the parser's SAX handler as each array
// and object opens, so no recursive copy, dump or destructor ever meets it.
#include "json_input.h"

#include <fstream>
#include <sstream>

using json = nlohmann::json;

namespace parity {
namespace {

// Thrown from inside nlohmann's parser, which lets an exception from its SAX handler pass through untouched.
struct TooDeep {};

// nlohmann's own DOM builder, counting the containers open. Not json::parse with a callback: its callback parser calls
// a std::function and keeps a flag per value, for every value: a sixth of the instructions of a manifest's parse. The
// value built, the lexer and so every error's text are the same.
class LimitedDomParser : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  LimitedDomParser(json& root, int max_depth) : json_sax_dom_parser(root, true), max_depth_(max_depth) {}
  bool start_object(std::size_t elements) { return opened() && json_sax_dom_parser::start_object(elements); }
  bool start_array(std::size_t elements) { return opened() && json_sax_dom_parser::start_array(elements); }
  bool end_object() { return --depth_, json_sax_dom_parser::end_object(); }
  bool end_array() { return --depth_, json_sax_dom_parser::end_array(); }

 private:
  // `depth_` counts the containers open around the one starting: 0 for the document itself.
  bool opened() {
    if (depth_ >= max_depth_) throw TooDeep{};
    ++depth_;
    return true;
  }
  const int max_depth_;
  int depth_ = 0;
};

std::string prefixed(const std::string& what, const std::string& why) { return what.empty() ? why : what + ": " + why; }

}  // namespace

json parse_json(std::string_view text, const std::string& what, int max_depth) {
  try {
    json doc;
    LimitedDomParser builder(doc, max_depth);
    json::sax_parse(text.begin(), text.end(), &builder);  // strict: nothing but whitespace after the value
    return doc;
  } catch (const TooDeep&) {
    throw JsonInputError(prefixed(
        what, "JSON nested deeper than " + std::to_string(max_depth) + " levels (refused: parity reads no deeper)"));
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
