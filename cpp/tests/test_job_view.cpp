// The job's namespaces and file-system view (sandbox/job_view.hpp), seen from inside a child.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "kgym/sandbox/child_process.hpp"

namespace fs = std::filesystem;
using kgym::sandbox::ChildOutcome;
using kgym::sandbox::ChildSpec;
using kgym::sandbox::command_line;
using kgym::sandbox::run_child;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kgym-view-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

ChildSpec shell_in(const fs::path& workdir, const std::string& script) {
  ChildSpec spec;
  spec.program = command_line({"/bin/sh", "-c", script});
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.workdir = workdir.string();
  spec.limits.wall_seconds = 20;
  return spec;
}

// Host processes whose command line contains `marker`.
int processes_with(const std::string& marker) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmdline.find(marker) != std::string::npos) ++n;
  }
  return n;
}

// Only a machine that refuses the namespaces themselves skips; a view that fails to build fails.
#define SKIP_WITHOUT_VIEW(out)                                                  \
  if (!(out).private_view && (out).view_note.starts_with("no mount namespace")) \
  GTEST_SKIP() << (out).view_note

}  // namespace

// The shell leaves root for the job's uid as the harness does (setpriv from util-linux).
const std::string kAsJobUid =
    "setpriv --reuid=$((100000 + $$)) --regid=$((100000 + $$)) --clear-groups -- ";

TEST(JobView, ShowsOnlyWhatTheJobNeeds) {
  TempDir job, outside;
  std::ofstream(outside.path / "secret") << "kgym-view-secret\n";
  ::chmod(job.path.c_str(), 0777);
  const auto out = run_child(
      shell_in(job.path, "cat " + (outside.path / "secret").string() +
                             " 2>/dev/null; cat /etc/shadow 2>/dev/null; echo host $(cat "
                             "/proc/sys/kernel/hostname); echo tmp $(ls -A /tmp " +
                             outside.path.parent_path().string() +
                             "); echo dev $(ls /dev | grep -vc nvidia); echo x > mine && echo "
                             "job-writable; " +
                             kAsJobUid + "sh -c 'echo procs $(ls /proc | grep -c \"^[0-9]\")'"));
  ASSERT_TRUE(out.started) << out.start_error;
  SKIP_WITHOUT_VIEW(out);
  EXPECT_TRUE(out.view_note.empty());
  EXPECT_EQ(out.stdout_tail.find("kgym-view-secret"), std::string::npos) << out.stdout_tail;
  EXPECT_EQ(out.stdout_tail.find("root:"), std::string::npos) << out.stdout_tail;
  EXPECT_NE(out.stdout_tail.find("host kgym-job\n"), std::string::npos) << out.stdout_tail;
  // The host's /tmp is not there: at most the job directory's own path.
  EXPECT_EQ(out.stdout_tail.find(outside.path.filename().string()), std::string::npos)
      << out.stdout_tail;
  // null zero full random urandom shm fd stdin stdout stderr
  EXPECT_NE(out.stdout_tail.find("dev 10\n"), std::string::npos) << out.stdout_tail;
  EXPECT_NE(out.stdout_tail.find("job-writable\n"), std::string::npos) << out.stdout_tail;
  // Out of root, the job's /proc shows its own processes only: the shell and its substitutions.
  const auto procs = out.stdout_tail.find("procs ");
  ASSERT_NE(procs, std::string::npos) << out.stdout_tail;
  EXPECT_LT(std::stoi(out.stdout_tail.substr(procs + 6)), 6) << out.stdout_tail;
  EXPECT_TRUE(fs::exists(job.path / "mine"));
  EXPECT_FALSE(fs::exists(job.path / ".view"));  // the staging directory is removed after
}

TEST(JobView, NothingOfTheJobsUidOutlivesTheJob) {
  TempDir job;
  const std::string marker = "4242.1717";
  // Double fork and a new session: out of the job's process group, but not out of its uid.
  const auto out =
      run_child(shell_in(job.path, kAsJobUid + "setsid sh -c 'sleep " + marker +
                                       "' </dev/null >/dev/null 2>&1 & sleep 0.3; echo spawned"));
  ASSERT_TRUE(out.started) << out.start_error;
  SKIP_WITHOUT_VIEW(out);
  EXPECT_EQ(out.stdout_tail, "spawned\n");
  int left = processes_with(marker);
  for (int i = 0; i < 40 && left > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    left = processes_with(marker);
  }
  EXPECT_EQ(left, 0);
}

TEST(JobView, ExitStatusAndSignalsPassThroughTheNamespace) {
  TempDir job;
  auto code = run_child(shell_in(job.path, "exit 7"));
  SKIP_WITHOUT_VIEW(code);
  EXPECT_TRUE(code.exited);
  EXPECT_EQ(code.exit_code, 7);
  auto killed = run_child(shell_in(job.path, "kill -ABRT $$"));
  EXPECT_FALSE(killed.exited);
  EXPECT_EQ(kgym::sandbox::signal_name(killed.signal), "SIGABRT");
}

TEST(JobView, HiddenDirectoriesAreEmptyAndReadOnlyPathsReadOnly) {
  TempDir job, installed;
  fs::create_directories(installed.path / "pkg" / "solutions");
  std::ofstream(installed.path / "pkg" / "solutions" / "answer.py") << "ANSWER = 42\n";
  std::ofstream(installed.path / "pkg" / "module.py") << "VALUE = 1\n";
  auto spec = shell_in(job.path, "cat " + (installed.path / "pkg/module.py").string() + "; ls -A " +
                                     (installed.path / "pkg/solutions").string() + "; echo y > " +
                                     (installed.path / "pkg/new").string() +
                                     " 2>/dev/null || echo read-only");
  spec.view_readonly = {installed.path.string()};
  spec.view_hidden = {(installed.path / "pkg" / "solutions").string()};
  const auto out = run_child(spec);
  SKIP_WITHOUT_VIEW(out);
  EXPECT_EQ(out.stdout_tail, "VALUE = 1\nread-only\n");
}

TEST(JobView, CanBeTurnedOff) {
  TempDir job;
  auto spec = shell_in(job.path, "cat /proc/sys/kernel/hostname");
  spec.limits.private_view = false;
  const auto out = run_child(spec);
  EXPECT_FALSE(out.private_view);
  EXPECT_TRUE(out.view_note.empty());
  EXPECT_NE(out.stdout_tail, "kgym-job\n");
}
