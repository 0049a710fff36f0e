#include "kgym/check/interpreter_view.hpp"

#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "kgym/sandbox/child_process.hpp"

namespace kgym::check {
namespace {

using nlohmann::json;

// find_spec locates the package without importing it (no torch, no _core).
constexpr const char* kProbe = R"(import importlib.util, json, os, sys
spec = importlib.util.find_spec("kgym")
places = list(spec.submodule_search_locations or []) if spec else []
print(json.dumps({
    "readonly": [p for p in sys.path if p] + [sys.prefix, sys.base_prefix, sys.exec_prefix,
                 sys.base_exec_prefix, os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))],
    "hidden": [os.path.join(p, "builtin_tasks", "solutions") for p in places],
}))
)";

InterpreterView ask(const std::string& python) {
  InterpreterView view;
  sandbox::ChildSpec spec;
  spec.program = sandbox::command_line({python, "-I", "-c", kProbe});
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  spec.workdir = "/";
  spec.limits.wall_seconds = 30;
  spec.limits.isolate_network = false;
  spec.limits.confine_writes = false;
  spec.limits.filter_syscalls = false;
  spec.limits.private_view = false;
  const auto out = sandbox::run_child(spec);
  const json answer = json::parse(out.stdout_tail, nullptr, false);
  if (!out.started || out.exit_code != 0 || !answer.is_object()) {
    view.error = "the interpreter " + python + " could not say where it is installed: " +
                 (out.start_error.empty() ? out.stderr_tail.substr(0, 500) : out.start_error);
    return view;
  }
  try {
    view.readonly = answer.at("readonly").get<std::vector<std::string>>();
    view.hidden = answer.at("hidden").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    view.error = std::string("the interpreter's answer is malformed: ") + e.what();
  }
  // The interpreter's own path (a venv's bin/python may be a link outside every prefix).
  view.readonly.push_back(python);
  return view;
}

}  // namespace

const InterpreterView& interpreter_view(const std::string& python) {
  static std::mutex mutex;
  static std::map<std::string, InterpreterView> cache;
  const std::lock_guard lock(mutex);
  auto it = cache.find(python);
  if (it == cache.end()) it = cache.emplace(python, ask(python)).first;
  return it->second;
}

}  // namespace kgym::check
