// A ScenarioOutcome as bytes, as a compare --jobs process sends it to the parent that writes the reports.
#pragma once

#include <string>
#include <string_view>

#include "outcome.h"

namespace parity {

/// Appends `o` to `out`: every string's bytes and every double's bits as they are, every JSON value with its exact
/// kind (signed, unsigned or float number, binary), so the parent's reports are those one process writes. Written
/// field by field without building a document: nlohmann's CBOR of a document made of the outcome cost a compare
/// process and its parent together a third as much CPU as comparing a small scenario (issue #20, target 3). The bytes
/// are native-endian: for another process of this same executable on this machine only.
void append_outcome_wire(const ScenarioOutcome& o, std::string& out);

/// The outcome append_outcome_wire wrote as `bytes` (all of them); throws std::runtime_error if they are not such.
ScenarioOutcome outcome_from_wire(std::string_view bytes);

}  // namespace parity
