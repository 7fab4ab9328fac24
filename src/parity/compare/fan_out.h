// compare --jobs: per-item work spread over processes forked from this one, the results gathered here in order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace parity {

/// What fan_out is given: the work of item i (in a child), what a child's death during it means, and each result.
struct FanOut {
  /// Runs in a forked child (its Python state that of the parent at the fork): item i's result, as bytes.
  std::function<std::string(std::size_t i)> work;
  /// In this process: the result of item i, whose child died working on it (`how`: "signal 11", "exit status 3").
  std::function<std::string(std::size_t i, const std::string& how)> lost;
  /// In this process, for every item in order of i, as soon as it and every item before it have a result.
  std::function<void(std::size_t i, const std::string& result)> done;
};

/// Runs `f.work` for every i < count in up to `jobs` children forked from this process, child k working through the
/// k-th of as many contiguous ranges of items, then taking the far end of the longest range left (items queued ahead,
/// so none idles on a round trip: two, or a few milliseconds' worth where items are short, their replies then read
/// in batches); a child that dies gets its item recorded by `f.lost`, the items queued to it go back to its range, and
/// a new child takes its place. With jobs <= 1 (or one item) everything runs here, no fork. Once a stop signal came
/// (note_stop_signal, deadline.h) the children are killed and Interrupted is thrown.
/// Call it from the thread holding the GIL, with no other thread running Python.
void fan_out(std::size_t count, int jobs, const FanOut& f);

}  // namespace parity
