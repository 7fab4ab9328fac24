// Hands the compare JSON to the Jinja2 renderer in the Python package; the template does all the markup.
#include "html_report.h"

#include <pybind11/embed.h>

#include <stdexcept>

#include "json_output.h"
#include "resources.h"

namespace py = pybind11;

namespace parity {

std::string report_to_html(const nlohmann::json& report) {
  // As text: the renderer reads it with json.loads, which is faster than converting node by node.
  const std::string text = dump_json(report, -1);
  try {
    py::object render = py::module_::import("parity.html_report").attr("render");
    return render(text, resources().templates).cast<std::string>();
  } catch (py::error_already_set& e) {
    // The exception's own text, without pybind11's "At:" trace: the template's complaint is what a person needs.
    const std::string type = py::str(e.type().attr("__name__"));
    throw std::runtime_error("the HTML report could not be rendered: " + type + ": " + std::string(py::str(e.value())));
  }
}

}  // namespace parity
