// Parses JSON with a nesting limit (see json_input.h): deep input is refused by the parser's SAX handler, which sees
// each array and object open, so no recursive copy, dump or destructor ever meets it.
#include "json_input.h"

#include <fstream>
#include <sstream>

using json = nlohmann::json;

namespace parity {
namespace {

// Thrown from inside nlohmann's parser, which lets an exception from its SAX handler pass through untouched.
struct TooDeep {};

// nlohmann's own DOM builder, refusing a container opened `max_depth` containers deep. A SAX handler rather than
// json::parse's callback: the callback parser calls a std::function and keeps a second stack for every key and
// value, which had been a fifth of the supervisor's parse of each worker reply (callgrind, issue #20).
class DepthLimitedBuilder {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<json>;
  DepthLimitedBuilder(json& result, int max_depth) : dom_(result, true), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(json::number_integer_t value) { return dom_.number_integer(value); }
  bool number_unsigned(json::number_unsigned_t value) { return dom_.number_unsigned(value); }
  bool number_float(json::number_float_t value, const json::string_t& text) { return dom_.number_float(value, text); }
  bool string(json::string_t& value) { return dom_.string(value); }
  bool binary(json::binary_t& value) { return dom_.binary(value); }
  bool key(json::string_t& value) { return dom_.key(value); }
  bool start_object(std::size_t size) { return opened() && dom_.start_object(size); }
  bool end_object() { return closed() && dom_.end_object(); }
  bool start_array(std::size_t size) { return opened() && dom_.start_array(size); }
  bool end_array() { return closed() && dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }

 private:
  // `depth_` counts the containers open around the one starting: 0 for the document itself.
  bool opened() {
    if (depth_ >= max_depth_) throw TooDeep{};
    ++depth_;
    return true;
  }
  bool closed() {
    --depth_;
    return true;
  }

  Dom dom_;
  int max_depth_;
  int depth_ = 0;
};

std::string prefixed(const std::string& what, const std::string& why) { return what.empty() ? why : what + ": " + why; }

}  // namespace

json parse_json(std::string_view text, const std::string& what, int max_depth) {
  try {
    json result;
    DepthLimitedBuilder builder(result, max_depth);
    json::sax_parse(text.begin(), text.end(), &builder);  // strict: nothing but blanks may follow the value
    return result;
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
