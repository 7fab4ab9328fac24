// Writes JSON text as nlohmann's dump does (see json_output.h): containers and plain strings here, the rest by it.
#include "json_output.h"

#include <array>

using json = nlohmann::json;

namespace parity {
namespace {

// The bytes nlohmann's dump_escaped copies without a second look (ensure_ascii off): printable ASCII and DEL, but the
// quote and the backslash. A string of these alone needs no escape and no UTF-8 check.
constexpr std::array<bool, 256> kPlainBytes = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

bool is_plain(const std::string& text) {
  for (const unsigned char c : text)
    if (!kPlainBytes[c]) return false;
  return true;
}

// serializer::dump's layout (its object and array cases, each with its pretty and compact forms), with plain strings
// appended directly; nlohmann's serializer, writing to the same string, does everything else.
class Dumper {
 public:
  Dumper(std::string& out, int indent)
      : out_(out),
        indent_(indent),
        nlohmann_(nlohmann::detail::output_adapter<char, std::string>(out), ' ', json::error_handler_t::replace) {}

  void value(const json& v, unsigned current) {
    switch (v.type()) {
      case json::value_t::object:
        return object(*v.get_ptr<const json::object_t*>(), current);
      case json::value_t::array:
        return array(*v.get_ptr<const json::array_t*>(), current);
      case json::value_t::string:
        if (const std::string& text = *v.get_ptr<const json::string_t*>(); is_plain(text)) return quoted(text);
        [[fallthrough]];
      default:
        return nlohmann_.dump(v, pretty(), false, pretty() ? static_cast<unsigned>(indent_) : 0, current);
    }
  }

 private:
  bool pretty() const { return indent_ >= 0; }
  void quoted(const std::string& text) {
    out_ += '"';
    out_ += text;
    out_ += '"';
  }
  // Before each member or element (`inner` its indentation) and before the closing bracket (`inner` the container's).
  void line(unsigned inner) {
    if (!pretty()) return;
    out_ += '\n';
    out_.append(inner, ' ');
  }
  template <class Container, class Each>
  void container(const Container& items, char open, char close, unsigned current, Each each) {
    out_ += open;
    if (items.empty()) {  // "{}" and "[]", without a line between them even when pretty
      out_ += close;
      return;
    }
    const unsigned inner = current + (pretty() ? static_cast<unsigned>(indent_) : 0);
    bool first = true;
    for (const auto& item : items) {
      if (!first) out_ += ',';
      first = false;
      line(inner);
      each(item, inner);
    }
    line(current);
    out_ += close;
  }
  void object(const json::object_t& members, unsigned current) {
    container(members, '{', '}', current, [this](const auto& member, unsigned inner) {
      if (is_plain(member.first))
        quoted(member.first);
      else
        nlohmann_.dump(json(member.first), false, false, 0, 0);
      out_ += pretty() ? ": " : ":";
      value(member.second, inner);
    });
  }
  void array(const json::array_t& elements, unsigned current) {
    container(elements, '[', ']', current, [this](const json& element, unsigned inner) { value(element, inner); });
  }

  std::string& out_;
  const int indent_;
  nlohmann::detail::serializer<json> nlohmann_;
};

}  // namespace

std::string dump_json(const json& value, int indent) {
  std::string out;
  Dumper(out, indent).value(value, 0);
  return out;
}

}  // namespace parity
