// keep_until_exit: large structures a command-line process would free just before it ends, left to its end instead.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace parity {

/// Takes `value` and never frees it. For the command line's last steps only: a compare's manifests and report are
/// millions of small allocations at thousands of scenarios, and freeing them one by one cost a `compare --jobs 2` of
/// 5,000 small scenarios about a tenth of its serial part (issue #20, target 3), where the process's end returns the
/// memory at once. Library callers (the Python API) keep freeing what they made. The list hangs from a pointer in
/// static storage, so LeakSanitizer counts what it holds as reachable, not leaked.
inline void keep_until_exit(std::shared_ptr<void> value) {
  static auto* const kept = new std::vector<std::shared_ptr<void>>;  // never deleted: that is the point
  kept->push_back(std::move(value));
}

template <class T>
void keep_until_exit(T&& value) {
  keep_until_exit(std::static_pointer_cast<void>(std::make_shared<std::decay_t<T>>(std::forward<T>(value))));
}

}  // namespace parity
