// The fork server against run_child: the same outcome for the same job, whichever launched it
// (harness_jobs.hpp: the jobs and the server).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "harness_jobs.hpp"

namespace fs = std::filesystem;
using kgym::sandbox::ChildOutcome;
using kgym::sandbox::ChildSpec;
using kgym::sandbox::command_line;
using kgym::sandbox::ForkServer;
using nlohmann::json;
using namespace harness_jobs;

namespace {

// What a candidate prints about its own process at import, then it leaves.
constexpr const char* kIntrospect = R"(
import json, os, sys, tempfile
print(json.dumps({
    "env": dict(os.environ),
    "fds": sorted(os.listdir("/proc/self/fd")),
    "cwd": os.getcwd(),
    "pid": os.getpid(),
    "argv": sys.argv,
    "path": sys.path,
    "flags": list(sys.flags),
    "tempdir": tempfile.gettempdir(),
    "expanduser": os.path.expanduser("~"),
}), flush=True)
os._exit(0)
)";

}  // namespace

TEST(ForkServer, OnlyRunsTheHarness) {
  ForkServer server(kgym::check::fork_server_program("/nonexistent/python3"), {});
  ChildSpec spec;
  spec.program = command_line({"/bin/sh", "-c", "true"});
  spec.workdir = "/tmp";
  const auto out = server.run(spec);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("-m kgym.harness"), std::string::npos) << out.start_error;
  // Another interpreter, or the same one with other start-up options, is not the server's.
  for (const auto& program :
       {kgym::check::harness_program("/other/python3", {"job.json"}),
        kgym::sandbox::python_module("/nonexistent/python3", {"-I"}, "kgym.harness", {"j"})}) {
    spec.program = program;
    const auto other = server.run(spec);
    EXPECT_FALSE(other.started);
    EXPECT_NE(other.start_error.find("runs `/nonexistent/python3 -I -X faulthandler"),
              std::string::npos)
        << other.start_error;
  }
  // An argument that merely looks like the module is an argument, not the module.
  spec.program = command_line(
      {"/nonexistent/python3", "-I", "-X", "faulthandler", "-c", "x", "-m", "kgym.harness"});
  EXPECT_FALSE(server.run(spec).started);
  EXPECT_EQ(server.server_pid(), -1);  // refused before anything was started
}

TEST(ForkServer, TheHostsNcclAndNvshmemSettingsReachTheJobs) {
  const char* names[] = {"NCCL_NVLS_ENABLE", "NVSHMEM_DISABLE_NVLS",
                         "TORCH_SYMM_MEM_DISABLE_MULTICAST"};
  for (const char* name : names) ::setenv(name, "0", 1);
  kgym::check::CheckJob job;
  const auto env = kgym::check::child_environment(job, "/tmp/home");
  for (const char* name : names) ::unsetenv(name);
  for (const char* name : names) {
    bool found = false;
    for (const auto& [key, value] : env) found = found || (key == name && value == "0");
    EXPECT_TRUE(found) << name;
  }
}

TEST(ForkServer, NoKgymVariableReachesTheJobs) {
  ::setenv("KGYM_SOMETHING_ELSE", "1", 1);
  ::setenv("KGYM_TOKEN", "secret", 1);
  kgym::check::CheckJob job;
  const auto env = kgym::check::child_environment(job, "/tmp/home");
  ::unsetenv("KGYM_SOMETHING_ELSE");
  ::unsetenv("KGYM_TOKEN");
  for (const auto& [key, value] : env) EXPECT_FALSE(key.starts_with("KGYM_")) << key;
}

TEST(ForkServer, JobsGetOneCudaQueueUnlessTheOperatorSetsIt) {
  kgym::check::CheckJob job;
  auto value = [&] {
    std::vector<std::string> found;
    for (const auto& [key, v] : kgym::check::child_environment(job, "/tmp/home"))
      if (key == "CUDA_DEVICE_MAX_CONNECTIONS") found.push_back(v);
    return found;
  };
  const char* before = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  const std::string kept = before != nullptr ? before : "";
  ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  EXPECT_EQ(value(), std::vector<std::string>{"1"});
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", "8", 1);
  EXPECT_EQ(value(), std::vector<std::string>{"8"});  // the operator's, and only it
  if (before != nullptr) {
    ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", kept.c_str(), 1);
  } else {
    ::unsetenv("CUDA_DEVICE_MAX_CONNECTIONS");
  }
}

TEST(ForkServer, ServerThatCannotStartIsAStartError) {
  ForkServer server(command_line({"/bin/sh", "-c", "echo import failed >&2; exit 3"}), {});
  ChildSpec spec;
  spec.program = kgym::sandbox::Program{"/bin/sh", {}, "kgym.harness", {"job.json"}};
  spec.workdir = "/tmp";
  const auto out = server.run(spec);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("exited with code 3"), std::string::npos) << out.start_error;
  EXPECT_NE(out.start_error.find("import failed"), std::string::npos) << out.start_error;
  // Each run tries again: a second attempt is a restart.
  const auto again = server.run(spec);
  EXPECT_FALSE(again.started);
  EXPECT_EQ(server.restarts(), 1);
}

TEST(ForkServer, CloseEndsAStartThatIsStillImporting) {
  // A server that never says it is ready (as one busy importing): close() from another thread
  // ends the wait at once, and nothing of the server is left.
  ForkServer server(command_line({"/bin/sh", "-c", "exec sleep 60"}), {});
  std::string why;
  const auto began = std::chrono::steady_clock::now();
  std::thread starter([&] { why = server.start(); });
  pid_t pid = -1;
  for (int i = 0; i < 200 && pid <= 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pid = server.server_pid();
  }
  ASSERT_GT(pid, 0);
  server.close();
  starter.join();
  const auto waited = std::chrono::steady_clock::now() - began;
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_NE(why.find("closed while it started"), std::string::npos) << why;
  EXPECT_TRUE(server.closed());
  EXPECT_EQ(server.server_pid(), -1);
  EXPECT_NE(::kill(pid, 0), 0);                                 // killed and reaped
  EXPECT_NE(server.start().find("closed"), std::string::npos);  // and it does not start again
}

TEST(ForkServer, MissingServerProgramIsAStartError) {
  ForkServer server(kgym::check::fork_server_program("/nonexistent/python3"), {});
  EXPECT_NE(server.start().find("exited with code 127"), std::string::npos);
}

TEST_F(ForkServerHarness, SameResultAsRunChild) {
  const std::string correct = solution();
  std::string incorrect = correct;
  incorrect.replace(incorrect.find("tl.where(x > 0.0, x, 0.0)"), 25, "tl.where(x > 0.0, x, 1.0)");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"correct", correct},
      {"incorrect", incorrect},
      {"segfault", "import ctypes\nctypes.string_at(0)\n"},
      {"os_exit", "import os\nos._exit(3)\n"},
      {"raises", "raise RuntimeError('no model here')\n"},
  };
  const pid_t server_pid = server_->server_pid();
  for (const auto& [name, candidate] : cases) {
    SCOPED_TRACE(name);
    std::vector<std::string> exec_lines, fork_lines;
    const auto a = make_job(candidate);
    const auto exec_outcome = kgym::sandbox::run_child(
        a->spec, [&](const std::string& line) { exec_lines.push_back(line); });
    const auto b = make_job(candidate);
    const auto fork_outcome =
        server_->run(b->spec, [&](const std::string& line) { fork_lines.push_back(line); });
    EXPECT_EQ(fork_lines.size(), exec_lines.size());  // the same records, each sealed
    ASSERT_TRUE(fork_outcome.started) << fork_outcome.start_error;
    EXPECT_EQ(fork_outcome.exited, exec_outcome.exited);
    EXPECT_EQ(fork_outcome.exit_code, exec_outcome.exit_code);
    EXPECT_EQ(fork_outcome.signal, exec_outcome.signal);
    EXPECT_EQ(fork_outcome.network_isolated, exec_outcome.network_isolated);
    EXPECT_EQ(fork_outcome.writes_confined, exec_outcome.writes_confined);
    const json ra = result_of(*a, exec_outcome);
    const json rb = result_of(*b, fork_outcome);
    for (const char* key : {"status", "compiled", "correct", "hacked", "findings", "correctness"}) {
      EXPECT_EQ(verdict_part(rb, key), verdict_part(ra, key))
          << key << "\nexec: " << ra.dump() << "\nfork: " << rb.dump();
    }
    EXPECT_EQ(rb["error"].is_null(), ra["error"].is_null());
    if (ra["error"].is_object() && rb["error"].is_object()) {
      EXPECT_EQ(rb["error"]["type"], ra["error"]["type"]);
      EXPECT_EQ(rb["error"]["phase"], ra["error"]["phase"]);
    }
  }
  EXPECT_EQ(server_->server_pid(), server_pid);  // crashes end the job child, not the server
  EXPECT_EQ(server_->restarts(), 0);
}

TEST_F(ForkServerHarness, ProcessLooksLikeAnExecdChild) {
  const auto a = make_job(kIntrospect);
  const auto exec_outcome = kgym::sandbox::run_child(a->spec);
  const auto b = make_job(kIntrospect);
  const auto fork_outcome = server_->run(b->spec);
  ASSERT_TRUE(fork_outcome.started) << fork_outcome.start_error;
  const json ea = json::parse(exec_outcome.stdout_tail, nullptr, false);
  const json eb = json::parse(fork_outcome.stdout_tail, nullptr, false);
  ASSERT_TRUE(ea.is_object()) << exec_outcome.stdout_tail << exec_outcome.stderr_tail;
  ASSERT_TRUE(eb.is_object()) << fork_outcome.stdout_tail << fork_outcome.stderr_tail;
  // Everything but the job directory's name is the same.
  auto normalise = [](const json& e, const fs::path& dir) {
    std::string text = e.dump();
    for (size_t p; (p = text.find(dir.string())) != std::string::npos;) {
      text.replace(p, dir.string().size(), "<job>");
    }
    return json::parse(text);
  };
  const json na = normalise(ea, a->dir.path);
  const json nb = normalise(eb, b->dir.path);
  for (const char* key :
       {"env", "fds", "cwd", "pid", "argv", "path", "flags", "tempdir", "expanduser"}) {
    EXPECT_EQ(nb[key], na[key]) << key;
  }
  // The candidate runs in its runner's private directory, as PID 2 of a PID namespace of its
  // own (its init is PID 1), away from the judge that is the job's process.
  EXPECT_EQ(nb["env"]["HOME"], "<job>/runner-candidate");
  EXPECT_EQ(nb["env"]["TMPDIR"], "<job>/runner-candidate");
  EXPECT_EQ(nb["pid"], 2);
  // The runner keeps stdin, stdout, stderr, its socket to the judge and its audit descriptor;
  // one more is listdir's own.
  EXPECT_EQ(nb["fds"].size(), na["fds"].size());
}

TEST_F(ForkServerHarness, HangIsKilledAtTheDeadline) {
  const auto j = make_job("import time\ntime.sleep(60)\n", 3.0);
  pid_t group = -1;
  j->spec.on_started = [&](pid_t pgid) { group = pgid; };
  const auto out = server_->run(j->spec);
  EXPECT_TRUE(out.started) << out.start_error;
  EXPECT_TRUE(out.timed_out);
  EXPECT_EQ(out.signal, SIGKILL);
  EXPECT_LT(out.wall_ms, 8000);
  ASSERT_GT(group, 0);
  EXPECT_EQ(live_in_group(group), 0);  // nothing of the job is left
  EXPECT_EQ(result_of(*j, out)["status"], "timeout");
  const auto next = server_->run(make_job("import os\nos._exit(0)\n")->spec);
  EXPECT_TRUE(next.started) << next.start_error;
  EXPECT_EQ(server_->restarts(), 0);
}

TEST_F(ForkServerHarness, KilledServerFailsTheJobAndIsRestarted) {
  // The candidate sleeps in its runner: nothing of the job (judge, runners) may outlive the
  // server. (It cannot start a child of its own: its audit hook stops that.)
  const auto j = make_job("import time\ntime.sleep(60)\n", 60.0);
  pid_t group = -1;
  std::atomic<pid_t> victim{-1};
  j->spec.on_started = [&](pid_t pgid) { group = pgid; };
  const int restarts = server_->restarts();
  victim = server_->server_pid();
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    ::kill(victim.load(), SIGKILL);
  });
  const auto out = server_->run(j->spec);
  killer.join();
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("fork server died during the job"), std::string::npos)
      << out.start_error;
  EXPECT_NE(out.start_error.find("SIGKILL"), std::string::npos) << out.start_error;
  EXPECT_LT(out.wall_ms, 10000);
  ASSERT_GT(group, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(live_in_group(group), 0);  // the job's whole group is gone
  EXPECT_EQ(result_of(*j, out)["status"], "infra_error");

  const auto next = make_job(solution());
  const auto again = server_->run(next->spec);
  ASSERT_TRUE(again.started) << again.start_error;
  EXPECT_EQ(result_of(*next, again)["status"], "ok");
  EXPECT_EQ(server_->restarts(), restarts + 1);
  EXPECT_NE(server_->server_pid(), victim.load());
}
