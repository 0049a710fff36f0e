#include "kgym/check/sandbox_layers.hpp"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "kgym/check/interpreter_view.hpp"
#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/job_directory.hpp"

namespace kgym::check {
namespace {

using nlohmann::json;

std::string note_or(const json& object, const char* key, const char* fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() && !it->get<std::string>().empty()
             ? it->get<std::string>()
             : fallback;
}

void gaps_of_outcome(bool net, const std::string& net_note, bool view, const std::string& view_note,
                     bool writes, const std::string& writes_note, bool syscalls,
                     const std::string& syscalls_note, std::vector<std::string>& gaps) {
  if (!net) gaps.push_back("network namespace: " + net_note);
  if (!view) gaps.push_back("mount namespace and file-system view: " + view_note);
  if (!writes) gaps.push_back("write fence: " + writes_note);
  if (!syscalls) gaps.push_back("system call filter: " + syscalls_note);
}

}  // namespace

std::vector<std::string> sandbox_gaps(const json& result) {
  std::vector<std::string> gaps;
  if (!result.is_object()) return gaps;
  const json sandbox = result.value("sandbox", json::object());
  if (!sandbox.is_object()) return {"sandbox: the Result has no sandbox record"};
  auto flag = [&](const char* key) { return sandbox.value(key, false) == true; };
  gaps_of_outcome(flag("network_isolated"), note_or(sandbox, "network_note", "not isolated"),
                  flag("private_view"), note_or(sandbox, "view_note", "not set up"),
                  flag("writes_confined"), note_or(sandbox, "writes_note", "not confined"),
                  flag("syscalls_filtered"), note_or(sandbox, "syscalls_note", "not filtered"),
                  gaps);
  const json resources = sandbox.value("resources", json(nullptr));
  if (!resources.is_object()) {
    gaps.push_back("resource limits: the Result has no resources record");
  } else {
    if (resources.value("limited", false) != true) {
      gaps.push_back("resource limits (cgroup): " +
                     note_or(resources, "note", "the job was not in a cgroup of its own"));
    }
    if (resources.value("disk_limited", false) != true) {
      gaps.push_back("job directory size: " +
                     note_or(resources, "disk_note", "not on a size-limited file system"));
    }
  }
  const json judge = result.value("judge", json(nullptr));
  if (judge.is_object() && judge.contains("unprivileged") && judge["unprivileged"] != true) {
    gaps.push_back("unprivileged uid: " + note_or(judge, "unprivileged_note", "runs as root"));
  }
  return gaps;
}

std::vector<std::string> probe_sandbox(const std::string& python, std::int64_t sandbox_uid) {
  std::vector<std::string> gaps;
  if (::geteuid() == 0 && sandbox_uid <= 0) {
    gaps.push_back("unprivileged uid: the service runs as root and no --sandbox-uid was given");
  }
  const auto& installed = interpreter_view(python);
  if (!installed.error.empty()) gaps.push_back("file-system view: " + installed.error);
  std::error_code ec;
  const auto dir = std::filesystem::temp_directory_path(ec) /
                   fmt::format("kgym-probe-{}-{}", ::getpid(), ::gettid());
  std::filesystem::create_directories(dir, ec);
  sandbox::ChildSpec spec;
  spec.program = sandbox::command_line({python, "-I", "-c", "import torch, triton, kgym.harness"});
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
              {"HOME", dir.string()},
              {"TMPDIR", dir.string()},
              {"TRITON_INTERPRET", "1"}};
  spec.workdir = dir.string();
  spec.view_readonly = installed.readonly;
  spec.view_hidden = installed.hidden;
  spec.limits.wall_seconds = 120;
  spec.limits.sandbox_uid = sandbox_uid;
  // The job's cgroup as every job gets one (limits a probe stays far from).
  spec.limits.resources.memory_bytes = 8ull << 30;
  spec.limits.resources.pids = 4096;
  spec.limits.resources.cpu_weight = 100;
  const auto out = sandbox::run_child(spec);
  std::filesystem::remove_all(dir, ec);
  {
    // A job directory of its own size: the mount that gives it.
    try {
      const sandbox::JobDirectory probe_dir(std::filesystem::temp_directory_path().string(),
                                            16u << 20);
      if (!probe_dir.size_limited()) gaps.push_back("job directory size: " + probe_dir.note());
    } catch (const std::exception& e) {
      gaps.push_back(std::string("job directory: ") + e.what());
    }
  }
  if (!out.started) {
    gaps.push_back("start: " + out.start_error);
    return gaps;
  }
  gaps_of_outcome(out.network_isolated, out.network_note, out.private_view, out.view_note,
                  out.writes_confined, out.writes_note, out.syscalls_filtered, out.syscalls_note,
                  gaps);
  if (!out.resources_limited) {
    gaps.push_back("resource limits (cgroup): " +
                   (out.resources_note.empty() ? std::string("the probe was not in a cgroup")
                                               : out.resources_note));
  }
  if (out.exit_code != 0) {
    gaps.push_back(
        fmt::format("the interpreter does not start in the sandbox (exit {}, signal {}): {}",
                    out.exit_code, out.signal, out.stderr_tail.substr(0, 600)));
  }
  return gaps;
}

}  // namespace kgym::check
