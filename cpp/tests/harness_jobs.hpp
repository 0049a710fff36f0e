// What the fork server's and the answer-at-report tests share: a job directory as
// check::run_prepared writes it, and a fork server started once per suite. Tests that need the
// real server (kgym.harness.forkserver) use the project's .venv, and are skipped when it cannot
// serve.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/interpreter_view.hpp"
#include "kgym/check/job.hpp"
#include "kgym/sandbox/child_process.hpp"
#include "kgym/sandbox/fork_server.hpp"
#include "kgym/sandbox/report_token.hpp"

namespace harness_jobs {

namespace fs = std::filesystem;
using kgym::sandbox::ChildOutcome;
using kgym::sandbox::ChildSpec;
using kgym::sandbox::ForkServer;
using nlohmann::json;

inline std::string test_python() { return KGYM_SOURCE_DIR "/.venv/bin/python"; }

// What two runs of one job must agree on: the verdict's fields, the correctness record without
// what the judge draws per evaluation (how many trials ran, each stress set's scaled atol).
inline json verdict_part(const json& result, const char* key) {
  json part = result.value(key, json(nullptr));
  if (std::string(key) != "correctness" || !part.is_object()) return part;
  part["all_passed"] = part.value("passed", -1) == part.value("trials", -2);
  part.erase("passed");
  part.erase("trials");
  // Where the values differ depends on the draw (the element furthest beyond the tolerance),
  // that they differ does not: the detail in parentheses is left out.
  if (part.contains("mismatch") && part["mismatch"].is_string()) {
    const auto text = part["mismatch"].get<std::string>();
    const auto at = text.find("beyond tolerance (");
    if (at != std::string::npos) part["mismatch"] = text.substr(0, at + 16);
  }
  if (part.contains("input_sets") && part["input_sets"].is_object()) {
    for (auto& [name, verdict] : part["input_sets"].items()) {
      verdict = verdict.is_object() ? verdict.value("passed", json(nullptr)) : json(nullptr);
    }
  }
  return part;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct TempDir {
  fs::path path;
  explicit TempDir(const fs::path& parent = fs::temp_directory_path()) {
    std::string pattern = (parent / "kgym-fs-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A job directory as check::evaluate writes it: task.py, candidate.py and the harness' job.json.
struct Job {
  explicit Job(const fs::path& parent) : dir(parent) {}
  TempDir dir;
  kgym::check::CheckJob job;
  ChildSpec spec;
};

// `candidate` against 01_relu on the CPU (Triton's interpreter), two trials, nothing timed.
inline kgym::check::CheckJob cpu_relu_job(const std::string& candidate) {
  return kgym::check::job_from_json(
      {{"task_id", "01_relu"},
       {"task_source", read_file(KGYM_SOURCE_DIR "/tasks/01_relu.py")},
       {"candidate", candidate},
       {"device", "cpu"},
       {"trials", 2},
       {"baseline", "none"},
       {"profile", false}});
}

inline std::unique_ptr<Job> make_job(const std::string& candidate, double seconds = 120.0,
                                     const fs::path& parent = fs::temp_directory_path()) {
  auto j = std::make_unique<Job>(parent);
  j->job = cpu_relu_job(candidate);
  const json harness = kgym::check::harness_job(j->job);
  const auto& d = j->dir.path;
  std::ofstream(d / "task.py") << j->job.task_source;
  std::ofstream(d / "candidate.py") << candidate;
  std::ofstream(d / "job.json") << harness.dump();

  auto& spec = j->spec;
  spec.program = kgym::check::harness_program(test_python(), {"job.json"});
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
              {"HOME", d.string()},
              {"TMPDIR", d.string()},
              {"PYTHONDONTWRITEBYTECODE", "1"},
              {"PYTHONUNBUFFERED", "1"},
              {"TRITON_CACHE_DIR", (d / ".triton").string()},
              {"TRITON_INTERPRET", "1"}};
  spec.workdir = d.string();
  const auto& installed = kgym::check::interpreter_view(test_python());
  spec.view_readonly = installed.readonly;
  spec.view_hidden = installed.hidden;
  spec.limits.wall_seconds = seconds;
  spec.token = kgym::sandbox::make_report_token();
  return j;
}

inline json result_of(const Job& j, const ChildOutcome& outcome) {
  return kgym::check::assemble_result(j.job, outcome, json::object(), j.spec.token);
}

// A process as /proc/<pid>/stat tells it.
struct ProcessEntry {
  pid_t pid;
  char state;
  pid_t parent;
  pid_t group;
};

// Every process of the machine (zombies included: state 'Z').
inline std::vector<ProcessEntry> process_table() {
  std::vector<ProcessEntry> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    const std::string stat = read_file(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    ProcessEntry e{static_cast<pid_t>(std::stoi(name)), 0, 0, 0};
    if (std::sscanf(stat.c_str() + close + 1, " %c %d %d", &e.state, &e.parent, &e.group) == 3)
      out.push_back(e);
  }
  return out;
}

// Processes of the group that are still alive (zombies left to a non-reaping init do not count).
inline int live_in_group(pid_t pgid) {
  int n = 0;
  for (const auto& p : process_table()) n += p.group == pgid && p.state != 'Z';
  return n;
}

inline std::string solution() { return read_file(KGYM_SOURCE_DIR "/tasks/solutions/01_relu.py"); }

// A fork server for CPU jobs (TRITON_INTERPRET), with `home` as its HOME; not started yet.
inline std::shared_ptr<ForkServer> cpu_fork_server(const fs::path& home) {
  return std::make_shared<ForkServer>(
      kgym::check::fork_server_program(test_python()),
      std::vector<std::pair<std::string, std::string>>{{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                                       {"HOME", home.string()},
                                                       {"TMPDIR", home.string()},
                                                       {"PYTHONDONTWRITEBYTECODE", "1"},
                                                       {"TRITON_INTERPRET", "1"}});
}

class ForkServerHarness : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    home_ = std::make_unique<TempDir>();
    server_ = cpu_fork_server(home_->path);
    start_error_ = server_->start();
  }
  static void TearDownTestSuite() {
    server_.reset();
    home_.reset();
  }
  void SetUp() override {
    if (!start_error_.empty()) GTEST_SKIP() << "no fork server: " << start_error_;
  }
  inline static std::unique_ptr<TempDir> home_;
  inline static std::shared_ptr<ForkServer> server_;
  inline static std::string start_error_;
};

}  // namespace harness_jobs
