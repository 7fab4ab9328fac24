// The decoded tree: a node's accessors, kind names, and the index that resolves references.
#include <functional>
#include <type_traits>

#include "codec.h"
#include "codec_internal.h"

namespace parity {

namespace {
// What an accessor answers for a kind without the part it reads.
const std::vector<std::string> kNoKeys;
const std::vector<Node> kNoItems;
const std::string kNoText;
const pybind11::object kNoArray;

// The items of the kinds that have them, or nullptr.
template <class V>
auto* items_of(V& value) {
  using Items = std::conditional_t<std::is_const_v<V>, const std::vector<Node>, std::vector<Node>>;
  Items* items = nullptr;
  std::visit(
      [&](auto& part) {
        using T = std::decay_t<decltype(part)>;
        if constexpr (std::is_same_v<T, Node::Array>)
          items = &part.elements;
        else if constexpr (requires { part.items; })
          items = &part.items;
      },
      value);
  return items;
}
}  // namespace

// kind() is the variant's index: each alternative sits at its Kind's position, a reference after them all.
template <Node::Kind K, class T>
constexpr bool at_kind = std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(K), Node::Value>, T>;
static_assert(at_kind<Node::Kind::Dict, Node::Dict> && at_kind<Node::Kind::None, Node::None> &&
              at_kind<Node::Kind::Bytes, Node::Bytes> && at_kind<Node::Kind::Object, Node::Object> &&
              std::variant_size_v<Node::Value> == static_cast<std::size_t>(Node::Kind::Object) + 2);

Node::Kind Node::kind() const { return is_ref() ? Kind::None : static_cast<Kind>(value.index()); }

const std::string& Node::ref() const { return is_ref() ? std::get<Ref>(value).target : kNoText; }

const std::vector<std::string>& Node::keys() const {
  const auto* dict = std::get_if<Dict>(&value);
  return dict ? dict->keys : kNoKeys;
}

const std::vector<Node>& Node::items() const {
  const auto* items = items_of(value);
  return items ? *items : kNoItems;
}

std::span<Node> Node::items() {
  auto* items = items_of(value);
  return items ? std::span<Node>(*items) : std::span<Node>();
}

const std::string& Node::text() const {
  if (const auto* i = std::get_if<Int>(&value)) return i->hex;
  if (const auto* s = std::get_if<Str>(&value)) return s->utf8;
  if (const auto* b = std::get_if<Bytes>(&value)) return b->bytes;
  return kNoText;
}

bool Node::boolean() const {
  const auto* b = std::get_if<Bool>(&value);
  return b && b->value;
}

std::complex<double> Node::number() const {
  if (const auto* f = std::get_if<Float>(&value)) return {f->value, 0.0};
  if (const auto* c = std::get_if<Complex>(&value)) return c->value;
  return {};
}

const pybind11::object& Node::array() const {
  if (const auto* a = std::get_if<Array>(&value)) return a->array;
  if (const auto* s = std::get_if<Scalar>(&value)) return s->array;
  return kNoArray;
}

const Node* Node::array_form() const {
  const auto* object = std::get_if<Object>(&value);
  return object && !object->array_form.empty() ? &object->array_form.front() : nullptr;
}

const char* kind_name(Node::Kind kind) {
  static constexpr const char* names[] = {"dict",    "list", "tuple", "none",    "bool",   "int",   "float",
                                          "complex", "str",  "bytes", "ndarray", "scalar", "object"};
  return names[static_cast<int>(kind)];
}

std::unordered_set<std::string> detail::ref_targets(const Node& root) {
  std::unordered_set<std::string> targets;
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (node.is_ref()) targets.insert(node.ref());
    for (const Node& item : node.items()) visit(item);
    for (const Node& state : node.state) visit(state);
  };
  visit(root);
  return targets;
}

NodeIndex::NodeIndex(const Node& root) {
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (!node.path.empty() && !node.is_ref()) by_path_.emplace(node.path, &node);
    for (const Node& item : node.items()) visit(item);
    for (const Node& state : node.state) visit(state);
  };
  visit(root);
}

const Node& NodeIndex::resolve(const Node& node) const {
  if (!node.is_ref()) return node;
  const auto it = by_path_.find(node.ref());
  if (it == by_path_.end()) throw FormatError(node.path + ": refers to " + node.ref() + ", which does not exist");
  return *it->second;
}

}  // namespace parity
