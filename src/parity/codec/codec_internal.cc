// The helpers of codec_internal.h that the encoder, decoder and rebuilder share.
#include "codec_internal.h"

#include "codec.h"

namespace parity::detail {

Span span_of(int ndim, const npy_intp* shape, const npy_intp* strides, npy_intp itemsize) {
  Span span;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 0) span.empty = true;
    std::ptrdiff_t reach = 0;
    span.overflow |= __builtin_mul_overflow(strides[i], shape[i] - 1, &reach);
    span.overflow |=
        __builtin_add_overflow(reach < 0 ? span.low : span.high, reach, reach < 0 ? &span.low : &span.high);
  }
  if (span.empty) return {0, 0, true, span.overflow};
  span.overflow |= __builtin_add_overflow(span.high, itemsize, &span.high);
  std::ptrdiff_t size = 0;  // size() is high - low, which must be representable too
  span.overflow |= __builtin_sub_overflow(span.high, span.low, &size);
  return span;
}

std::string index_path(std::int64_t flat, int ndim, const npy_intp* shape) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(ndim));
  for (int d = ndim - 1; d >= 0; --d) index[static_cast<std::size_t>(d)] = flat % shape[d], flat /= shape[d];
  return parity::index_path(index);
}

std::vector<PyObject**> object_slots(PyArrayObject* array) {
  std::vector<PyObject**> slots;
  if (PyArray_SIZE(array) > 0)
    for_each_element(PyArray_BYTES(array), 0, PyArray_NDIM(array), PyArray_SHAPE(array), PyArray_STRIDES(array),
                     [&](char* at) { slots.push_back(reinterpret_cast<PyObject**>(at)); });
  return slots;
}

}  // namespace parity::detail
