// Parses JSON with a nesting limit (see json_input.h): deep input is refused by the parser's SAX handler as each array
// and object opens, so no recursive copy, dump or destructor ever meets it. simdjson reads the text first, and what it
// reads is rebuilt as the value nlohmann's parser makes of it; nlohmann parses whatever simdjson refuses, so that every
// document is read, and every error told, as before (issue #20: a manifest's parse was most of compare's serial part).
#include "json_input.h"

#include <simdjson.h>

#include <system_error>

#include "safe_file.h"

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

// Documents up to this size are read by a parser kept per thread (its buffers, ~14 bytes a byte of text, reused);
// larger ones by a parser of their own, freed with it, so that a large manifest's buffers are not kept.
constexpr std::size_t kKeptParserBytes = 64 * 1024;
// simdjson's own nesting bound: above the deepest limit parity asks for, so that rebuild() is what refuses depth.
constexpr std::size_t kSimdjsonMaxDepth = 4096;

// Whether `text` may hold the integer -0: nlohmann keeps it as a signed integer (which `is_number_unsigned` tells
// apart), simdjson's DOM as an integer 0 like any other. A number follows a structural character or whitespace.
bool may_hold_negative_zero(std::string_view text) {
  for (std::size_t at = text.find("-0"); at != std::string_view::npos; at = text.find("-0", at + 1)) {
    const char before = at ? text[at - 1] : ' ';
    const char after = at + 2 < text.size() ? text[at + 2] : ' ';
    const bool starts_value = std::string_view("[,: \t\n\r").find(before) != std::string_view::npos;
    const bool ends_number = std::string_view("0123456789.eE").find(after) == std::string_view::npos;
    if (starts_value && ends_number) return true;
  }
  return false;
}

template <typename T>
bool scalar(simdjson::dom::element element, json& out) {
  T value{};
  if (element.get(value)) return false;
  if constexpr (std::is_same_v<T, std::string_view>)
    out = std::string(value);
  else
    out = value;
  return true;
}

// `element` as nlohmann's parser builds it: a non-negative integer is unsigned, a negative one signed, the last of
// duplicate keys wins. False where a container would open `depth_left` levels down (parse_json then lets nlohmann
// refuse it, with its message). It recurses once a level, at most the caller's max_depth (2,064 for a result file's
// header): bounded, as the value's own destructor and dump, which recurse the same way.
bool rebuild(simdjson::dom::element element, json& out, int depth_left);

// An array's or an object's members, each rebuilt where `slot(out, member)` says (the array's next item, the object's
// member of that key) from the element it names.
template <typename Container, typename Slot>
bool rebuild_members(simdjson::dom::element element, json& out, json empty, int depth_left, Slot slot) {
  Container container;
  if (depth_left <= 0 || element.get(container)) return false;
  out = std::move(empty);
  for (auto member : container) {
    const auto [target, value] = slot(out, member);
    if (!rebuild(value, *target, depth_left - 1)) return false;
  }
  return true;
}

bool rebuild(simdjson::dom::element element, json& out, int depth_left) {
  using Type = simdjson::dom::element_type;
  using Slot = std::pair<json*, simdjson::dom::element>;
  switch (element.type()) {
    case Type::ARRAY:
      return rebuild_members<simdjson::dom::array>(element, out, json::array(), depth_left,
                                                   [](json& array, simdjson::dom::element item) {
                                                     return Slot{&array.get_ref<json::array_t&>().emplace_back(), item};
                                                   });
    case Type::OBJECT:
      return rebuild_members<simdjson::dom::object>(
          element, out, json::object(), depth_left, [](json& object, simdjson::dom::key_value_pair member) {
            return Slot{&object.get_ref<json::object_t&>()[std::string(member.key)], member.value};
          });
    case Type::INT64: {
      std::int64_t value = 0;
      if (element.get(value)) return false;
      out = value < 0 ? json(value) : json(static_cast<std::uint64_t>(value));
      return true;
    }
    case Type::UINT64:
      return scalar<std::uint64_t>(element, out);
    case Type::DOUBLE:
      return scalar<double>(element, out);
    case Type::STRING:
      return scalar<std::string_view>(element, out);
    case Type::BOOL:
      return scalar<bool>(element, out);
    case Type::NULL_VALUE:
      out = nullptr;
      return true;
  }
  return false;
}

bool parse_with_simdjson(simdjson::dom::parser& parser, std::string_view text, int max_depth, json& out) {
  if (parser.max_depth() != kSimdjsonMaxDepth && parser.allocate(text.size(), kSimdjsonMaxDepth)) return false;
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size()).get(root)) return false;  // copies the text into its padded buffer
  return rebuild(root, out, max_depth);
}

}  // namespace

namespace detail {

std::optional<json> parse_json_fast(std::string_view text, int max_depth) {
  // Above kFastJsonMaxBytes, simdjson's DOM and the value rebuilt from it side by side would hold ~3 bytes a byte of
  // text more at the peak than nlohmann's parse alone (a 100 MB manifest: 660 -> 958 MB): such a document, ~18,000
  // scenarios' manifest, is read by nlohmann, as before.
  if (text.size() > kFastJsonMaxBytes || max_depth < 0 || static_cast<std::size_t>(max_depth) >= kSimdjsonMaxDepth ||
      may_hold_negative_zero(text))
    return std::nullopt;
  json value;
  bool read;
  if (text.size() <= kKeptParserBytes) {
    thread_local simdjson::dom::parser kept;
    read = parse_with_simdjson(kept, text, max_depth, value);
  } else {
    simdjson::dom::parser own;
    read = parse_with_simdjson(own, text, max_depth, value);
  }
  if (!read) return std::nullopt;
  return value;
}

json parse_json_with_nlohmann(std::string_view text, const std::string& what, int max_depth) {
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

}  // namespace detail

json parse_json(std::string_view text, const std::string& what, int max_depth) {
  if (std::optional<json> value = detail::parse_json_fast(text, max_depth)) return std::move(*value);
  return detail::parse_json_with_nlohmann(text, what, max_depth);
}

namespace {

const json* find_with_json_pointer(const json& doc, std::string_view pointer) {
  const json::json_pointer at{std::string(pointer)};
  return doc.contains(at) ? &doc.at(at) : nullptr;
}

}  // namespace

const json* find_at(const json& doc, std::string_view pointer) {
  if (pointer.find('~') != std::string_view::npos || (!pointer.empty() && pointer.front() != '/'))
    return find_with_json_pointer(doc, pointer);
  const json* at = &doc;
  for (std::string_view rest = pointer; !rest.empty();) {
    rest.remove_prefix(1);  // its '/'
    const std::string_view key = rest.substr(0, rest.find('/'));
    rest.remove_prefix(key.size());
    if (at->is_array()) return find_with_json_pointer(doc, pointer);  // an index, "-", or what json_pointer refuses
    if (!at->is_object()) return nullptr;  // json_pointer's contains: no token goes into a string, number or null
    const json::object_t& members = *at->get_ptr<const json::object_t*>();
    const auto found = members.find(key);
    if (found == members.end()) return nullptr;
    at = &found->second;
  }
  return at;
}

json read_json_file(const std::filesystem::path& file, const std::string& what, int max_depth) {
  const std::string name = what.empty() ? file.string() : what;
  std::string text;
  try {
    text = read_named_text_file(file, name);
  } catch (const std::system_error& e) {
    throw JsonInputError(name + ": cannot read it (" + e.code().message() + ")");
  } catch (const UnsafeFileError& e) {
    throw JsonInputError(e.what());
  }
  return parse_json(text, name, max_depth);
}

}  // namespace parity
