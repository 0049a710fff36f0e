// Bindings for extraction, sandboxed evaluation and feedback. Results cross the boundary as JSON
// text, the same bytes the service and the CLI print, so there is one serialisation to trust.
#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <stdexcept>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/options.hpp"
#include "kgym/result/feedback.hpp"
#include "kgym/result/status.hpp"
#include "kgym/sandbox/fork_server.hpp"
#include "kgym/text/extract.hpp"

namespace nb = nanobind;
using nlohmann::json;

namespace kgym::bindings {
namespace {

json parse_or_throw(const std::string& text, const char* what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw std::invalid_argument(std::string(what) + " is not valid JSON");
  return j;
}

nb::dict extract(const std::string& completion, const std::string& rule) {
  const auto parsed = text::parse_extract_rule(rule);
  if (!parsed) {
    throw std::invalid_argument(
        "extract rule must be auto, last_python_block, answer_tag or whole");
  }
  const auto e = text::extract_candidate(completion, *parsed);
  nb::dict d;
  d["ok"] = e.ok;
  d["code"] = e.code;
  d["rule"] = e.rule_used;
  d["error"] = e.error;
  return d;
}

std::string evaluate(const std::string& job_json,
                     std::optional<std::function<void(const std::string&)>> on_phase,
                     sandbox::ForkServer* server) {
  const auto job = check::job_from_json(parse_or_throw(job_json, "the job"));
  json result;
  {
    nb::gil_scoped_release release;
    check::PhaseCallback callback;
    if (on_phase) {
      callback = [&on_phase](const std::string& phase) {
        nb::gil_scoped_acquire acquire;
        try {
          (*on_phase)(phase);
        } catch (const std::exception&) {
          // A failing progress printer must not abort an evaluation.
        }
      };
    }
    check::Launcher launch;
    if (server != nullptr) {
      launch = [server](const sandbox::ChildSpec& spec, const sandbox::LineCallback& on_line) {
        return server->run(spec, on_line);
      };
    }
    result = check::evaluate(job, callback, launch);
  }
  return result.dump();
}

std::string feedback(const std::string& result_json) {
  return result::render_feedback(parse_or_throw(result_json, "the result"));
}

}  // namespace

void bind_check(nb::module_& m) {
  m.def("extract", &extract, nb::arg("completion"), nb::arg("rule") = "auto",
        "Reduce a completion to candidate code: {'ok', 'code', 'rule', 'error'}.");
  m.def("evaluate", &evaluate, nb::arg("job_json"), nb::arg("on_phase") = nb::none(),
        nb::arg("server").none() = nb::none(),
        "Evaluate a candidate in a sandboxed harness child, forked from `server` (a ForkServer "
        "made by job_fork_server) or started fresh; returns the Result as JSON text.");
  m.def("render_feedback", &feedback, nb::arg("result_json"),
        "The compact feedback text a model sees for a Result (JSON text).");
  m.def(
      "option_table", [] { return check::option_table_json().dump(); },
      "The evaluation options (name, kind, default, bounds, choices, help, service, cli) as "
      "JSON text: the one table every front end derives from.");
  m.def(
      "normalize_job",
      [](const std::string& job_json) {
        return check::job_to_json(check::job_from_json(parse_or_throw(job_json, "the job"))).dump();
      },
      nb::arg("job_json"),
      "The job with every option filled in and validated (raises ValueError naming the field).");
  m.def("default_python", &check::default_python,
        "The interpreter kgym-gym uses for harness children when none is given.");
  m.attr("RESULT_SCHEMA") = std::string(result::kSchemaVersion);
}

}  // namespace kgym::bindings
