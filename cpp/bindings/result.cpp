// kgym._core.result_view: what every Python reader of a Result needs, read by the C++ reader
// (result/result.hpp) that rewards and feedback use, so that Python and C++ agree on what a
// Result says (a speedup only where timing is available, PR only where a profile is, one
// definition of honest).
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nlohmann/json.hpp>

#include "kgym/result/result.hpp"

namespace nb = nanobind;

namespace kgym::bindings {

namespace {

template <typename T>
nb::object optional(const std::optional<T>& value) {
  return value ? nb::cast(*value) : nb::none();
}

nb::dict result_view(const std::string& text) {
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded()) throw nb::value_error("result_view: the Result is not JSON");
  const auto r = result::read_result_leniently(parsed);
  nb::dict view;
  view["status"] = r.status;
  view["compiled"] = r.compiled;
  view["correct"] = r.correct;
  view["hacked"] = r.hacked;
  view["honest"] = result::honest(r);
  nb::list rules;
  for (const auto& f : r.findings) {
    if (f.severity == result::Severity::kReject) rules.append(f.rule);
  }
  view["reject_rules"] = rules;
  const bool timed = r.timing && r.timing->available;
  view["timed"] = timed;
  view["speedup"] = timed ? optional(r.timing->speedup) : nb::none();
  view["speedup_ci"] =
      timed && r.timing->speedup_ci
          ? nb::cast(std::vector<double>{r.timing->speedup_ci->low, r.timing->speedup_ci->high})
          : nb::none();
  view["speedup_vs_compile"] = timed ? optional(r.timing->speedup_vs_compile) : nb::none();
  const bool profiled = r.profile && r.profile->available;
  view["triton_share"] = profiled ? optional(r.profile->triton_share) : nb::none();
  view["max_abs_error"] = r.correctness ? optional(r.correctness->max_abs_error) : nb::none();
  view["correct_on_task_inputs"] =
      r.correctness ? optional(r.correctness->correct_on_task_inputs) : nb::none();
  const auto total = r.durations_ms.find("total");
  view["total_ms"] = total != r.durations_ms.end() ? nb::cast(total->second) : nb::none();
  return view;
}

}  // namespace

void bind_result(nb::module_& m) {
  m.def("result_view", &result_view, nb::arg("result_json"),
        "The facts every reader of a Result needs, as the C++ reader reads them (leniently).");
}

}  // namespace kgym::bindings
