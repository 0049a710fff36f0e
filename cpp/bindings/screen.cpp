// Binding of the static screen: kgym._core.screen(source) -> list of finding dicts.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "kgym/screen/screen.hpp"

namespace nb = nanobind;

namespace kgym::bindings {
namespace {

nb::list screen(const std::string& source) {
  std::vector<screen::Finding> findings;
  {
    nb::gil_scoped_release release;
    findings = screen::screen_candidate(source);
  }
  nb::list out;
  for (const auto& f : findings) {
    nb::dict d;
    d["rule"] = f.rule;
    d["severity"] = f.severity;
    d["line"] = f.line > 0 ? nb::object(nb::int_(f.line)) : nb::none();
    d["detail"] = f.detail;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_screen(nb::module_& m) {
  m.def("screen", &screen, nb::arg("source"),
        "Static screen of a candidate's source: [{'rule', 'severity', 'line', 'detail'}]. "
        "severity is 'reject' or 'warn'; line is None for whole-file findings.");
}

}  // namespace kgym::bindings
