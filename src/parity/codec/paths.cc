// The output-path grammar: how a value's place inside the outputs is written (outputs['a'][2].mask). parity.paths
// (python/parity/paths.py) is the same grammar in Python, for the fidelity digests: PathGrammar tests that they agree.
#include "codec.h"

namespace parity {

std::string key_path(const std::string& path, const std::string& key) {
  std::string quoted;
  for (char c : key) quoted += (c == '\'' || c == '\\') ? std::string{'\\', c} : std::string{c};
  return path + "['" + quoted + "']";
}

std::string item_path(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::string state_path(const std::string& path, const std::string& key) {
  return !key.empty() && (key.front() == '[' || key.front() == '.') ? path + key : path + "." + key;
}

std::string index_path(const std::vector<std::int64_t>& index) {
  if (index.empty()) return "[()]";
  std::string s = "[";
  for (std::size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

}  // namespace parity
