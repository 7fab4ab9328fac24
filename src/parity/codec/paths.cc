// The output-path grammar: how a value's place inside the outputs is written (outputs['a'][2].mask). parity.paths
// (python/parity/paths.py) is the same grammar in Python, for the fidelity digests: PathGrammar tests that they agree.
#include <cstdio>

#include "codec.h"

namespace parity {

std::string key_path(const std::string& path, const std::string& key) {
  std::string out;
  out.reserve(path.size() + key.size() + 4);
  out.append(path).append("['");
  for (char c : key) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out.append("']");
}

std::string item_path(const std::string& path, std::size_t i) {
  char index[24];
  const int n = std::snprintf(index, sizeof index, "[%zu]", i);
  std::string out;
  out.reserve(path.size() + static_cast<std::size_t>(n));
  return out.append(path).append(index, static_cast<std::size_t>(n));
}

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
