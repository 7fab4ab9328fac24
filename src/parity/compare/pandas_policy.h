// The pandas policies (index, names, order): decoded pandas objects as a relaxed comparison sees them.
#pragma once

#include "codec.h"
#include "compare.h"

namespace parity {

/// Whether the pandas policies of `choice` would change `node` (an object a built-in pandas reducer wrote):
/// false for any other node, and for one pandas_normalized returned.
bool pandas_relaxed(const Node& node, const PolicyChoice& choice);

/// `node` as the pandas policies compare it (`references` resolves the parts that are references).
/// `names: ignore` drops the name and names parts of every pandas object. `index: equivalent` types every index
/// kind `pandas.Index` and writes a RangeIndex as its values, so that a RangeIndex and an integer Index with equal
/// values compare equal, part by part. `order: sorted` puts a DataFrame's or Series' rows in the stable order of
/// their index labels and a DataFrame's columns in the order of theirs.
Node pandas_normalized(const Node& node, const PolicyChoice& choice, const NodeIndex& references);

}  // namespace parity
