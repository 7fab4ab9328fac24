// XXH3-128 over Python buffers, for parity.probe's fidelity digests and the pickle's buffer table (docs/format.md).
#include "digest.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "probe_walk.h"

#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>  // the library's AVX2/AVX-512 code where the CPU has it, SSE2 elsewhere
#else
#include <xxhash.h>
#endif

namespace py = pybind11;

namespace parity {
namespace {

// Buffers from this size are hashed with the GIL released: below it, releasing costs more than it frees.
constexpr Py_ssize_t kReleaseFrom = 1 << 16;

// A buffer held for the duration of a hash: PyBUF_SIMPLE, so the exporter refuses (BufferError) what is not
// one contiguous run of bytes rather than handing strided memory.
class HeldBuffer {
 public:
  explicit HeldBuffer(const py::handle& object) {
    if (PyObject_GetBuffer(object.ptr(), &view_, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;
  const void* data() const { return view_.buf; }
  Py_ssize_t size() const { return view_.len; }

 private:
  Py_buffer view_{};
};

}  // namespace

struct Xxh3::State {
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> xxh{XXH3_createState(), &XXH3_freeState};
  std::uint64_t length = 0;
};

Xxh3::Xxh3() : state_(std::make_unique<State>()) {
  if (!state_->xxh) throw std::bad_alloc();
  XXH3_128bits_reset(state_->xxh.get());
}

Xxh3::~Xxh3() = default;

// Locked, as hashlib's objects are: another thread may update the same hasher while this one runs unlocked.
void Xxh3::add(const void* data, std::size_t size) {
  const std::lock_guard<std::mutex> hold(lock_);
  if (XXH3_128bits_update(state_->xxh.get(), data, size) != XXH_OK)
    throw std::runtime_error("XXH3_128bits_update failed");
  state_->length += size;
}

void Xxh3::update(const py::handle& data) {
  const HeldBuffer held(data);
  const auto size = static_cast<std::size_t>(held.size());
  if (held.size() < kReleaseFrom) return add(held.data(), size);
  const py::gil_scoped_release unlocked;
  add(held.data(), size);
}

std::uint64_t Xxh3::length() const {
  const std::lock_guard<std::mutex> hold(lock_);
  return state_->length;
}

std::string Xxh3::hexdigest() const {
  XXH128_canonical_t canonical;
  {
    const std::lock_guard<std::mutex> hold(lock_);
    XXH128_canonicalFromHash(&canonical, XXH3_128bits_digest(state_->xxh.get()));
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char byte : canonical.digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

void define_digest_functions(py::module_& module) {
  py::class_<Xxh3>(module, "Xxh3", "A streaming XXH3-128 hash, with hashlib's update() and hexdigest().")
      .def(py::init([](const py::handle& data) {
             auto hasher = std::make_unique<Xxh3>();
             if (!data.is_none()) hasher->update(data);
             return hasher;
           }),
           py::arg("data") = py::none(), "A hash of `data`'s bytes (none: of nothing yet), as hashlib.sha256(data).")
      .def("update", &Xxh3::update, py::arg("data"),
           "Adds the bytes of a C-contiguous buffer, in place (the GIL released for a large one).")
      .def("hexdigest", &Xxh3::hexdigest, "The digest so far: 32 lowercase hex digits, big-endian.")
      .def_property_readonly("length", &Xxh3::length, "Bytes hashed so far.");
  // parity.probe.digests() calls it with probe's own functions as the hooks (_WALK_HOOKS): probe_walk.h.
  module.def(
      "digest_walk",
      [](const py::handle& obj, const py::handle& path, const py::handle& out, const py::handle& seen,
         const py::handle& shown, const py::handle& arrays, const py::handle& pending, const py::handle& deadline,
         Py_ssize_t fused_from, const py::tuple& hooks) {
        if (hooks.size() != 6) throw py::value_error("digest_walk takes six hooks");
        if (!PyDict_Check(seen.ptr()) || !PyDict_Check(out.ptr()))
          throw py::type_error("digest_walk's out and seen are dicts");
        digest_walk(obj, path, {out, seen, shown, arrays, pending, fused_from}, deadline,
                    {hooks[0].ptr(), hooks[1].ptr(), hooks[2].ptr(), hooks[3].ptr(), hooks[4].ptr(), hooks[5].ptr()});
      },
      py::arg("obj"), py::arg("path"), py::arg("out"), py::arg("seen"), py::arg("shown"), py::arg("arrays"),
      py::arg("pending"), py::arg("deadline"), py::arg("fused_from"), py::arg("hooks"),
      "parity.probe._digest_into(obj, path, out, 0, seen, shown, arrays, 'xxh3:', pending) for the common nodes, in "
      "C++; hooks: (_digest_into, _description, _array_head, _check_deadline, _state, _leaf_into), given every other "
      "node.");
  // parity.probe._small_values_text writes the rows it knows with it under NumPy's default print options: probe_walk.h.
  module.def("small_row_text", &small_row_text, py::arg("array"),
             "np.array2string(array, threshold=8) of a 1-D array of 1 to 8 float64, integer or bool elements under "
             "NumPy's default print options, or None where NumPy must write it.");
  // parity.probe.losses() calls it with probe._losses as the judge of every pair it does not settle: probe_walk.h.
  module.def(
      "loss_walk",
      [](const py::handle& faithful, const py::handle& unpickled, const py::handle& path, int depth,
         const py::handle& seen, const py::list& found, const py::handle& judge, const py::handle& array_head,
         const py::tuple& attribute_hooks, Py_ssize_t referenced_from, bool bare_arrays) {
        if (!PyDict_Check(seen.ptr())) throw py::type_error("loss_walk's seen is a dict");
        if (attribute_hooks.size() != 2) throw py::value_error("loss_walk takes two attribute hooks");
        loss_walk(faithful, unpickled, path, depth,
                  {found, seen, judge, array_head, attribute_hooks[0].ptr(), attribute_hooks[1].ptr(), referenced_from,
                   bare_arrays});
      },
      py::arg("faithful"), py::arg("unpickled"), py::arg("path"), py::arg("depth"), py::arg("seen"), py::arg("found"),
      py::arg("judge"), py::arg("array_head"), py::arg("attribute_hooks"), py::arg("referenced_from"),
      py::arg("bare_arrays"),
      "parity.probe.losses(faithful, unpickled, path, depth, seen) appended to `found`: the common equal pairs settled "
      "in C++ (array_head: probe._array_head; attribute_hooks: (probe._attributes, probe._loss)), every other pair "
      "given to judge(faithful, unpickled, path, depth, seen).");
}

}  // namespace parity
