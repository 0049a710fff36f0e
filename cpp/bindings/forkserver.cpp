// The fork server (sandbox/fork_server.hpp) from Python: the server's loop, which runs inside the
// warm interpreter (kgym.harness.forkserver), and the supervisor's ForkServer, for tests and
// for Python callers that evaluate many candidates.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/interpreter_view.hpp"
#include "kgym/check/job.hpp"
#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/fork_server.hpp"

namespace nb = nanobind;
using nlohmann::json;

namespace kgym::bindings {
namespace {

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

// Child output is arbitrary bytes; a test wants text.
nb::str to_text(const std::string& s) {
  return nb::steal<nb::str>(
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace"));
}

// Server side: loops in C++ (receive, fork, wait, report) and returns only in a job child, with
// the job, or None when the supervisor has gone and the server should exit.
nb::object forkserver_serve(int control_fd) {
  sandbox::ForkHooks hooks;
  // The same bookkeeping as os.fork(): the interpreter's locks, at-fork callbacks (random's
  // reseed among them) and thread states.
  hooks.before_fork = [] { PyOS_BeforeFork(); };
  hooks.after_fork_parent = [] { PyOS_AfterFork_Parent(); };
  hooks.after_fork_child = [] { PyOS_AfterFork_Child(); };
  // SIGINT and friends: Python's handlers run here; one that raises ends the server.
  hooks.interrupted = [] { return PyErr_CheckSignals() != 0; };
  sandbox::ServedJob job;
  const auto end = sandbox::serve_fork_requests(control_fd, hooks, job);
  if (end == sandbox::ServeEnd::kInterrupted) throw nb::python_error();
  if (end == sandbox::ServeEnd::kClosed) return nb::none();
  nb::list env;
  for (const auto& [key, value] : job.env)
    env.append(nb::make_tuple(to_bytes(key), to_bytes(value)));
  nb::dict d;
  d["args"] = job.args;
  d["env"] = env;
  d["workdir"] = job.workdir;
  return d;
}

template <typename T>
T get_or(const nb::dict& d, const char* key, T fallback) {
  return d.contains(key) ? nb::cast<T>(d[key]) : fallback;
}

// {"executable", "options", "module", "args"}: sandbox::Program's parts.
sandbox::Program program_from_dict(const nb::dict& d) {
  sandbox::Program p;
  p.executable = nb::cast<std::string>(d["executable"]);
  p.options = get_or<std::vector<std::string>>(d, "options", {});
  p.module = get_or<std::string>(d, "module", "");
  p.args = get_or<std::vector<std::string>>(d, "args", {});
  return p;
}

sandbox::ChildSpec spec_from_dict(const nb::dict& d) {
  sandbox::ChildSpec spec;
  spec.program = program_from_dict(nb::cast<nb::dict>(d["program"]));
  spec.env = get_or<std::vector<std::pair<std::string, std::string>>>(d, "env", {});
  spec.workdir = nb::cast<std::string>(d["workdir"]);
  spec.writable_paths = get_or<std::vector<std::string>>(d, "writable_paths", {});
  spec.token = get_or<std::string>(d, "token", "");
  if (d.contains("limits")) {
    const nb::dict l = nb::cast<nb::dict>(d["limits"]);
    auto& limits = spec.limits;
    limits.wall_seconds = get_or(l, "wall_seconds", limits.wall_seconds);
    limits.max_file_bytes = get_or(l, "max_file_bytes", limits.max_file_bytes);
    limits.max_processes = get_or(l, "max_processes", limits.max_processes);
    limits.max_address_space_bytes =
        get_or(l, "max_address_space_bytes", limits.max_address_space_bytes);
    limits.max_report_bytes = get_or(l, "max_report_bytes", limits.max_report_bytes);
    limits.output_tail_bytes = get_or(l, "output_tail_bytes", limits.output_tail_bytes);
    limits.isolate_network = get_or(l, "isolate_network", limits.isolate_network);
    limits.confine_writes = get_or(l, "confine_writes", limits.confine_writes);
    limits.private_view = get_or(l, "private_view", limits.private_view);
    limits.sandbox_uid = get_or(l, "sandbox_uid", limits.sandbox_uid);
  }
  // The view holds the interpreter's installation unless the caller says what it holds.
  if (d.contains("view_readonly")) {
    spec.view_readonly = nb::cast<std::vector<std::string>>(d["view_readonly"]);
    spec.view_hidden = get_or<std::vector<std::string>>(d, "view_hidden", {});
  } else if (spec.limits.private_view && !spec.program.executable.empty()) {
    const auto& installed = check::interpreter_view(spec.program.executable);
    spec.view_readonly = installed.readonly;
    spec.view_hidden = installed.hidden;
  }
  return spec;
}

nb::dict outcome_to_dict(const sandbox::ChildOutcome& o) {
  nb::dict d;
  d["started"] = o.started;
  d["start_error"] = to_text(o.start_error);
  d["timed_out"] = o.timed_out;
  d["exited"] = o.exited;
  d["exit_code"] = o.exit_code;
  d["signal"] = o.signal;
  d["network_isolated"] = o.network_isolated;
  d["network_note"] = o.network_note;
  d["writes_confined"] = o.writes_confined;
  d["writes_note"] = o.writes_note;
  d["private_view"] = o.private_view;
  d["view_note"] = o.view_note;
  d["report"] = to_text(o.report);
  d["report_truncated"] = o.report_truncated;
  d["stdout_tail"] = to_text(o.stdout_tail);
  d["stderr_tail"] = to_text(o.stderr_tail);
  d["stdout_bytes"] = o.stdout_bytes;
  d["stderr_bytes"] = o.stderr_bytes;
  d["wall_ms"] = o.wall_ms;
  return d;
}

sandbox::ChildOutcome launch(const sandbox::ChildSpec& spec, sandbox::ForkServer* server) {
  nb::gil_scoped_release release;
  return server != nullptr ? server->run(spec) : sandbox::run_child(spec);
}

// For tests: one job directory's harness run through the given launcher (run_child when server
// is None), and the Result the supervisor makes of it.
nb::dict run_harness(const std::string& job_json, const nb::dict& spec_dict,
                     sandbox::ForkServer* server) {
  const json parsed = json::parse(job_json, nullptr, false);
  if (parsed.is_discarded()) throw std::invalid_argument("the job is not valid JSON");
  const auto job = check::job_from_json(parsed);
  const auto spec = spec_from_dict(spec_dict);
  const auto outcome = launch(spec, server);
  nb::dict d;
  d["outcome"] = outcome_to_dict(outcome);
  d["result"] = check::assemble_result(job, outcome, json::object(), spec.token).dump();
  return d;
}

// The job as a fork server serves it: `auto` resolved to the device the harness will take
// (harness/__main__.py), since the server imports triton under that device's environment
// (TRITON_INTERPRET on a CPU), which a job forked from it cannot change.
check::CheckJob served_job(const json& parsed) {
  auto job = check::job_from_json(parsed);
  if (job.device == "auto") job.device = check::gpu_visible() ? "cuda" : "cpu";
  return job;
}

}  // namespace

void bind_forkserver(nb::module_& m) {
  m.def("forkserver_serve", &forkserver_serve, nb::arg("control_fd"),
        "Fork server only: serve jobs on the control socket. Returns the job (args, env, workdir) "
        "in each sandboxed job child, None in the server when the supervisor has gone.");
  nb::class_<sandbox::ForkServer>(m, "ForkServer",
                                  "A warm harness interpreter that forks one sandboxed child per "
                                  "job (the supervisor's side).")
      .def(
          "__init__",
          [](sandbox::ForkServer* s, const nb::dict& program,
             std::vector<std::pair<std::string, std::string>> env) {
            new (s) sandbox::ForkServer(program_from_dict(program), std::move(env));
          },
          nb::arg("program"), nb::arg("env"),
          "program: {executable, options, module, args}, as sandbox::Program.")
      .def(
          "start",
          [](sandbox::ForkServer& s) {
            nb::gil_scoped_release release;
            return s.start();
          },
          "Start the server now; returns '' or why it could not start.")
      .def(
          "run",
          [](sandbox::ForkServer& s, const nb::dict& spec) {
            return outcome_to_dict(launch(spec_from_dict(spec), &s));
          },
          nb::arg("spec"), "Run one child spec (a dict like ChildSpec); returns the outcome.")
      .def("close", &sandbox::ForkServer::close,
           "Stop the server: later runs fail (the process is reaped when the object goes).")
      .def_prop_ro("restarts", &sandbox::ForkServer::restarts)
      .def_prop_ro("server_pid", &sandbox::ForkServer::server_pid)
      .def_prop_ro("server_log", &sandbox::ForkServer::server_log);
  m.def(
      "job_fork_server",
      [](const std::string& job_json, const std::string& home) {
        const json parsed = json::parse(job_json, nullptr, false);
        if (parsed.is_discarded()) throw std::invalid_argument("the job is not valid JSON");
        const auto job = served_job(parsed);
        return new sandbox::ForkServer(check::fork_server_program(job.python),
                                       check::child_environment(job, home));
      },
      nb::arg("job_json"), nb::arg("home"), nb::rv_policy::take_ownership,
      "A fork server for jobs like this one (its interpreter, device and environment, as the "
      "service starts one per worker), not started yet; `home` is its private HOME.");
  m.def(
      "job_environment",
      [](const std::string& job_json) {
        const json parsed = json::parse(job_json, nullptr, false);
        if (parsed.is_discarded()) throw std::invalid_argument("the job is not valid JSON");
        return check::child_environment(served_job(parsed), "");
      },
      nb::arg("job_json"),
      "The environment a job child gets (HOME and TMPDIR empty): what a fork server's imports "
      "see, so jobs whose environments differ need servers of their own.");
  m.def(
      "sandbox_run_child",
      [](const nb::dict& spec) { return outcome_to_dict(launch(spec_from_dict(spec), nullptr)); },
      nb::arg("spec"), "Tests: run one child spec with run_child (a fresh exec).");
  m.def("sandbox_run_harness", &run_harness, nb::arg("job_json"), nb::arg("spec"),
        nb::arg("server").none(),
        "Tests: run a prepared job directory through run_child (server=None) or a ForkServer; "
        "returns {'outcome': dict, 'result': Result JSON text}.");
}

}  // namespace kgym::bindings
