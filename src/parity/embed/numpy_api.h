// Includes the NumPy C API with one shared API table; interpreter.cc defines it (see start_interpreter).
#pragma once

#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL PARITY_NUMPY_ARRAY_API
#ifndef PARITY_DEFINE_NUMPY_API
#define NO_IMPORT_ARRAY
#endif
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>
