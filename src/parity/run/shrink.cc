// `parity shrink`: hands the search to python/parity/shrink.py in the embedded interpreter (shrink.h).
#include "shrink.h"

#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <cstdio>

#include "interpreter.h"
#include "outcome.h"
#include "text.h"

namespace py = pybind11;

namespace parity {

int shrink_command(const ShrinkOptions& options) {
  start_interpreter();
  py::module_ shrink = py::module_::import("parity.shrink");
  try {
    const bool wrote = shrink
                           .attr("main")(options.program, options.id, options.backend, options.out, options.scenarios,
                                         options.max_examples, options.timeout, options.check, options.trusted_backends)
                           .cast<bool>();
    return wrote ? kExitFailed : kExitOk;  // a scenario written is a failure found, as compare counts it
  } catch (py::error_already_set& e) {
    // ShrinkError says what the user can act on; anything else is a fault of parity's, shown with its type.
    const bool refused = e.matches(shrink.attr("ShrinkError"));
    const std::string message = refused ? py::str(e.value()).cast<std::string>() : e.what();
    std::fprintf(stderr, "parity shrink: %s\n", printable(message, Newlines::kKeep).c_str());
    return kExitUsage;
  }
}

}  // namespace parity
