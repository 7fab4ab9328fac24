// Starts the embedded interpreter inside the configured virtualenv and imports NumPy's C API once.
#define PARITY_DEFINE_NUMPY_API
#include "interpreter.h"

#include <pybind11/embed.h>

#include <cstdlib>
#include <stdexcept>

#include "numpy_api.h"
#include "resources.h"

namespace py = pybind11;

namespace parity {
namespace {

// Setting `executable` makes CPython's getpath find the virtualenv's pyvenv.cfg, so sys.prefix and
// site-packages are the virtualenv's, exactly as if that python had been started.
void initialize(const std::string& executable) {
#ifdef PARITY_SANITIZE
  // A sanitized build (CMake's PARITY_SANITIZE) gives Python's objects to malloc, which ASan replaces, instead of
  // pymalloc: pymalloc's arenas are mmap'd, which LeakSanitizer does not scan, so at exit every block that only
  // Python objects point to would be reported as leaked. ASan then checks Python's objects too (a write from
  // parity's code past a bytes object's end). A PYTHONMALLOC of the environment still decides.
  // Before anything below: PyConfig_SetBytesString pre-initializes Python, with the default allocator.
  PyPreConfig preconfig;
  PyPreConfig_InitPythonConfig(&preconfig);
  if (!std::getenv("PYTHONMALLOC")) preconfig.allocator = PYMEM_ALLOCATOR_MALLOC;
  if (PyStatus_Exception(Py_PreInitialize(&preconfig)))
    throw std::runtime_error("cannot pre-initialize the Python interpreter " + executable);
#endif
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  PyStatus status = PyConfig_SetBytesString(&config, &config.executable, executable.c_str());
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw std::runtime_error("cannot configure the Python interpreter " + executable);
  }
  py::initialize_interpreter(&config, 0, nullptr, false);
}

// OpenBLAS (NumPy's BLAS) starts its threads when NumPy loads, and each spins on sched_yield for 2^28 TSC ticks
// (about 0.1 s) before it sleeps: 20-30 ms of CPU in every parity process, which does no BLAS work of its own
// before its first scenario, and a quarter of a short compare's. A timeout of 2^4 ticks lets them sleep at once;
// what a BLAS call computes does not depend on it. Set only for the load (OpenBLAS reads it once then), and only
// when the user has not set it: scenarios and what they start see the environment they were given.
class OpenBlasQuietStart {
 public:
  OpenBlasQuietStart() : set_(std::getenv(kTimeout) == nullptr) {
    if (set_) ::setenv(kTimeout, "4", 0);
  }
  // NumPy is loaded: out of the C environment and of os.environ, Python's copy of it.
  void done() {
    if (!set_) return;
    ::unsetenv(kTimeout);
    py::module_::import("os").attr("environ").attr("pop")(kTimeout, py::none());
    set_ = false;
  }
  ~OpenBlasQuietStart() {
    if (set_) ::unsetenv(kTimeout);
  }

 private:
  static constexpr const char* kTimeout = "OPENBLAS_THREAD_TIMEOUT";
  bool set_;
};

}  // namespace

InterpreterPaths configured_paths() {
  const Resources& found = resources();
  return {found.python_executable, found.python_package, found.fixtures};
}

void import_numpy_api(const std::string& python) {
  if (_import_array() < 0) {
    std::string why = "NumPy's C API could not be imported by " + python;
    if (PyErr_Occurred()) why += std::string(": ") + py::error_already_set().what();
    throw std::runtime_error(why);
  }
}

namespace {
// start_python started the interpreter and start_interpreter has not completed it yet. An interpreter that is running
// otherwise is complete, or is a Python process's own (the Python API's extension module, parity._core), which
// start_interpreter leaves as it is: its sys.path and its registered backends are the caller's.
bool bare = false;
}  // namespace

void start_python() {
  if (Py_IsInitialized()) return;
  initialize(configured_paths().python_executable);
  bare = true;
}

void start_interpreter() {
  if (Py_IsInitialized() && !bare) return;
  const InterpreterPaths paths = configured_paths();
  OpenBlasQuietStart blas;  // before NumPy loads, which start_python does not do
  start_python();
  import_numpy_api(paths.python_executable);
  blas.done();
  // Empty when pip installed the package into the interpreter's site-packages.
  if (!paths.python_package.empty()) py::module_::import("sys").attr("path").attr("insert")(0, paths.python_package);
  py::module_::import("parity.backend").attr("register_fixtures")(paths.fixtures);
  bare = false;
}

}  // namespace parity
