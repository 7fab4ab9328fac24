// parity.probe's two walks of a scenario's outputs in C++ for the nodes most scenarios return: the fidelity digests and
// the pickle probe's losses.
#pragma once

#include <pybind11/pytypes.h>

namespace parity {

/// parity.probe's Python functions the walk hands every other node to, and calls where it needs their exact text.
struct DigestWalkHooks {
  pybind11::handle digest_into;     ///< _digest_into(obj, path, out, depth, seen, shown, arrays, algorithm, pending)
  pybind11::handle description;     ///< _description(obj, None): a small array's text (array2string's)
  pybind11::handle array_head;      ///< _array_head(obj): (head bytes, referable, in place)
  pybind11::handle check_deadline;  ///< _check_deadline(): raises DeadlineExceeded once the time limit is past
  pybind11::handle state;           ///< _state(obj): what a reducer records beside an ndarray subclass's array
  pybind11::handle leaf_into;       ///< _leaf_into(obj, path, out, shown, arrays, algorithm, pending, state): its leaf
};

/// parity.probe.digests() with the xxh3 algorithm: fills `out` ({path: digest}), `shown` and `arrays` (each None or a
/// dict) exactly as _digest_into(obj, path, out, 0, {}, shown, arrays, "xxh3:", pending) would, entry for entry and in
/// the same order (`state.seen` a new dict). Exact dicts with str keys, lists, tuples, floats, ints of 64 bits, bools,
/// None, str and C-contiguous ndarrays under `fused_from` bytes of plain element bytes are walked here (a Python walk
/// of them was ~15% of a small scenario's worker and ~9% of its compare), ndarray subclasses too (a proxy's, such as
/// cudf.pandas' or fsproxy's: every leaf of such a backend's scenarios) but for object arrays: their state from
/// `hooks.state`, then their array as a plain one's where it is one (else `hooks.leaf_into`), then the state's parts as
/// Python iterates them; every other node, with what lies under it, goes to `hooks.digest_into` with the walk's state.
/// `deadline`: probe._deadline (None, or time.monotonic()'s limit).
///
/// The state: digests()'s dicts and list; `seen`: the walk's {id: (path, object)}, a new dict, shared with the nodes
/// handed to Python; `fused_from`: probe._FUSED_FROM, the bytes from which an array is left to Python (where compare's
/// values kernel may hash it, and a large one is hashed with the GIL released).
struct DigestWalkState {
  pybind11::handle out, seen, shown, arrays, pending;
  Py_ssize_t fused_from = 0;
};
void digest_walk(const pybind11::handle& obj, const pybind11::handle& path, const DigestWalkState& state,
                 const pybind11::handle& deadline, const DigestWalkHooks& hooks);

/// parity.probe.losses(faithful, unpickled, path, depth, seen): appends to `found` what probe.py's _losses finds, pair
/// for pair and in the same order. A pair of exact dicts with the same str keys, lists or tuples of one length is
/// walked here, and a pair of equal floats (bit for bit), 64-bit ints, bools, None, str, or plain C-contiguous arrays
/// under `referenced_from` bytes of the same layout and dtype whose bytes are their values and are equal, is no loss;
/// so is such a pair of arrays of one ndarray subclass, then their attributes (`attributes`: probe._attributes) are
/// walked as pairs, as _dict_losses walks them (`loss`: probe._loss, for one the unpickled side lacks). Every other
/// pair, whatever it holds, goes to `judge` (probe._losses) with the walk's `seen`. `array_head`: probe._array_head,
/// which says whether an array's bytes are its values. `bare_arrays`: whether a plain ndarray has no attributes to
/// compare (no reducer registered like ndarray's).
struct LossWalkState {
  pybind11::handle found, seen, judge, array_head, attributes, loss;
  Py_ssize_t referenced_from = 0;
  bool bare_arrays = false;
};
/// np.array2string(a, threshold=8) of a 1-D ndarray of 1 to 8 float64, integer or bool elements, either byte order and
/// any strides, as NumPy writes it under its default print options (the caller checks those): each element as
/// FloatingFormat, IntegerFormat or BoolFormat writes it, padded to the row's width, the row wrapped at 75 columns.
/// None for any other array (a subclass too), and for a float row NumPy would write with exponents, nan or inf, or
/// with a value whose shortest text has 9 digits after the point ending in 5, a possible tie (probe.py's
/// _small_values_text then asks NumPy itself). A small array's description was most of a run's digest walk in NumPy's
/// formatting (bench/README, twenty-fifth session).
pybind11::object small_row_text(const pybind11::handle& array);

void loss_walk(const pybind11::handle& faithful, const pybind11::handle& unpickled, const pybind11::handle& path,
               int depth, const LossWalkState& state);

}  // namespace parity
