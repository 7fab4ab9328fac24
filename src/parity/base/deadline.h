// A time limit on one scenario's compare (`compare --timeout`), checked by its long loops as they go.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

namespace parity {

/// Thrown by check_deadline() once the current scenario's time is up; compare records it as status timeout.
struct TimeLimitExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
inline std::optional<std::chrono::steady_clock::time_point>& current_deadline() {
  static std::optional<std::chrono::steady_clock::time_point> deadline;
  return deadline;
}
}  // namespace detail

/// Sets the deadline `seconds` from now (none for seconds <= 0) while it lives; the previous one after.
class ScopedDeadline {
 public:
  explicit ScopedDeadline(double seconds) : previous_(detail::current_deadline()) {
    detail::current_deadline() = seconds > 0
                                     ? std::optional(std::chrono::steady_clock::now() +
                                                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                         std::chrono::duration<double>(seconds)))
                                     : std::nullopt;
  }
  ~ScopedDeadline() { detail::current_deadline() = previous_; }
  ScopedDeadline(const ScopedDeadline&) = delete;
  ScopedDeadline& operator=(const ScopedDeadline&) = delete;

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

/// Throws TimeLimitExceeded (naming `where`) when the current deadline has passed. Cheap enough for every
/// block of elements or node of a walk.
inline void check_deadline(const char* where) {
  const auto& deadline = detail::current_deadline();
  if (deadline && std::chrono::steady_clock::now() > *deadline)
    throw TimeLimitExceeded(std::string("time limit reached while comparing ") + where);
}

}  // namespace parity
