// The decoded tree's vocabulary: kind names, and the index that resolves references.
#include <functional>

#include "codec.h"

namespace parity {

const char* kind_name(Node::Kind kind) {
  static constexpr const char* names[] = {"dict",    "list", "tuple", "none",    "bool",   "int",   "float",
                                          "complex", "str",  "bytes", "ndarray", "scalar", "object"};
  return names[static_cast<int>(kind)];
}

NodeIndex::NodeIndex(const Node& root) {
  std::function<void(const Node&)> visit = [&](const Node& node) {
    if (!node.path.empty() && node.ref.empty()) by_path_.emplace(node.path, &node);
    for (const Node& item : node.items) visit(item);
    for (const Node& state : node.state) visit(state);
  };
  visit(root);
}

const Node& NodeIndex::resolve(const Node& node) const {
  if (node.ref.empty()) return node;
  const auto it = by_path_.find(node.ref);
  if (it == by_path_.end()) throw FormatError(node.path + ": refers to " + node.ref + ", which does not exist");
  return *it->second;
}

}  // namespace parity
