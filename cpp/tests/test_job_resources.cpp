// A job's resources as the kernel bounds them: its cgroup (memory, pids) and its directory's
// tmpfs, with what a job that crosses them leaves behind. Needs root and a cgroup hierarchy with
// memory and pids (as the service does); skipped where there is none.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kgym/sandbox/job_cgroup.hpp"
#include "kgym/sandbox/job_directory.hpp"

namespace {

namespace fs = std::filesystem;
using kgym::sandbox::cgroup_support;
using kgym::sandbox::JobCgroup;
using kgym::sandbox::JobDirectory;
using kgym::sandbox::ResourceLimits;

bool cgroups_here() {
  return ::geteuid() == 0 && cgroup_support().has_memory() && cgroup_support().has_pids();
}

// Forks a child that joins `cgroup` and runs `body`; returns its wait status.
template <typename Body>
int run_in(const JobCgroup& cgroup, Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& procs : cgroup.procs_files()) {
      std::ofstream(procs) << "0";
    }
    body();
    _exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(JobCgroup, MemoryOverTheLimitIsKilledWithinTheJobAndSaid) {
  if (!cgroups_here()) GTEST_SKIP() << cgroup_support().note;
  ResourceLimits limits;
  limits.memory_bytes = 64ull << 20;
  JobCgroup cgroup("test-memory", limits);
  ASSERT_TRUE(cgroup.active()) << cgroup.note();
  const int status = run_in(cgroup, [] {
    const std::size_t n = 256ull << 20;  // four times the limit, every page touched
    auto* block = static_cast<char*>(::malloc(n));
    if (block != nullptr) std::memset(block, 1, n);
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(cgroup.breach(), "memory");
  EXPECT_GE(cgroup.memory_peak(), 32ull << 20);
}

TEST(JobCgroup, ForksPastThePidsLimitAreRefusedAndSaid) {
  if (!cgroups_here()) GTEST_SKIP() << cgroup_support().note;
  ResourceLimits limits;
  limits.pids = 16;
  JobCgroup cgroup("test-pids", limits);
  ASSERT_TRUE(cgroup.active()) << cgroup.note();
  const int status = run_in(cgroup, [] {
    for (int i = 0; i < 64; ++i) {
      const pid_t child = ::fork();
      if (child == 0) {
        ::pause();
        _exit(0);
      }
      if (child < 0) _exit(errno == EAGAIN ? 3 : 4);
    }
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_EQ(cgroup.breach(), "pids");
  // The paused children are still in the leaf: killing the job kills them, wherever they went.
  bool any = false;
  for (const auto& procs : cgroup.procs_files()) {
    std::ifstream in(procs);
    std::string line;
    any = any || static_cast<bool>(std::getline(in, line));
  }
  EXPECT_TRUE(any);
  cgroup.kill_all();
  for (const auto& procs : cgroup.procs_files()) {
    std::ifstream in(procs);
    std::string line;
    EXPECT_FALSE(std::getline(in, line)) << procs << ": " << line;
  }
}

TEST(JobCgroup, AJobWithinItsLimitsBreachesNothingAndLeavesNoLeaf) {
  if (!cgroups_here()) GTEST_SKIP() << cgroup_support().note;
  std::vector<std::string> dirs;
  {
    ResourceLimits limits;
    limits.memory_bytes = 256ull << 20;
    limits.pids = 64;
    limits.cpu_weight = 50;
    JobCgroup cgroup("test-within", limits);
    ASSERT_TRUE(cgroup.active()) << cgroup.note();
    EXPECT_EQ(run_in(cgroup, [] {}), 0);
    EXPECT_EQ(cgroup.breach(), "");
    for (const auto& procs : cgroup.procs_files()) dirs.push_back(fs::path(procs).parent_path());
  }
  for (const auto& dir : dirs) EXPECT_FALSE(fs::exists(dir)) << dir;
}

TEST(JobCgroup, NoLimitsNoLeaf) {
  JobCgroup cgroup("test-none", ResourceLimits{});
  EXPECT_FALSE(cgroup.active());
  EXPECT_EQ(cgroup.breach(), "");
}

TEST(JobCgroup, AV2SubtreeWithMemoryButNoPidsLimitsMemory) {
  // A container may delegate memory and cpu but not pids (an H200 host's did): its jobs get
  // their memory limit there, and RLIMIT_NPROC holds their threads (evaluate.cpp). The cgroup
  // file system is played by plain files, which the detection and the leaf only read and write.
  const auto root = fs::temp_directory_path() / ("kgym-test-cgroupfs-" + std::to_string(getpid()));
  const auto own = root / "container";
  fs::create_directories(own);
  std::ofstream(own / "cgroup.controllers") << "cpu memory\n";
  std::ofstream(own / "cgroup.subtree_control") << "";
  const std::string mountinfo =
      "30 25 0:26 / " + root.string() + " rw,nosuid,nodev - cgroup2 cgroup2 rw\n";
  const auto s = kgym::sandbox::detect_cgroup_support(mountinfo, "0::/container\n");
  ASSERT_EQ(s.name(), "v2") << s.note;
  EXPECT_TRUE(s.has_memory());
  EXPECT_FALSE(s.has_pids());
  EXPECT_TRUE(s.has_cpu());
  EXPECT_NE(s.note.find("RLIMIT_NPROC"), std::string::npos) << s.note;
  auto text = [](const fs::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(own / "cgroup.subtree_control"), "+memory +cpu");
  EXPECT_EQ(text(own / "kgym-jobs" / "cgroup.subtree_control"), "+memory +cpu");
  ResourceLimits limits;
  limits.memory_bytes = 1u << 30;
  limits.pids = 64;
  {
    JobCgroup cgroup(s, "fake", limits);
    ASSERT_TRUE(cgroup.active()) << cgroup.note();
    ASSERT_EQ(cgroup.procs_files().size(), 1u);
    const auto leaf = fs::path(cgroup.procs_files()[0]).parent_path();
    EXPECT_EQ(text(leaf / "memory.max"), std::to_string(1u << 30));
    EXPECT_FALSE(fs::exists(leaf / "pids.max"));
    EXPECT_EQ(cgroup.pids_peak(), 0u);
    // The supervisor counts the leaf's threads instead: one under the limit is no breach, a
    // job seen at its limit (RLIMIT_NPROC refused the next) ran into it.
    auto threads = [&](int n) {
      std::ofstream out(leaf / "cgroup.threads");
      for (int i = 0; i < n; ++i) out << 1000 + i << "\n";
    };
    threads(63);
    cgroup.sample();
    EXPECT_EQ(cgroup.breach(), "");
    EXPECT_EQ(cgroup.pids_peak(), 63u);
    threads(64);
    cgroup.sample();
    threads(3);
    cgroup.sample();
    EXPECT_EQ(cgroup.breach(), "pids");
    EXPECT_EQ(cgroup.pids_peak(), 64u);
  }
  // Without a memory controller there is no cgroup to use, and the note says what was offered.
  std::ofstream(own / "cgroup.controllers") << "cpu pids\n";
  const auto none = kgym::sandbox::detect_cgroup_support(mountinfo, "0::/container\n");
  EXPECT_EQ(none.name(), "none");
  EXPECT_NE(none.note.find("not memory"), std::string::npos) << none.note;
  fs::remove_all(root);
}

TEST(JobDirectory, ATmpfsOfItsSizeThatIsRemovedWithItsMounts) {
  const auto scratch =
      fs::temp_directory_path() / ("kgym-test-scratch-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  std::string path;
  {
    JobDirectory dir(scratch.string(), 8u << 20);
    path = dir.path();
    EXPECT_TRUE(fs::is_directory(path));
    EXPECT_EQ(fs::path(path).filename().string().rfind("kgym-job-", 0), 0u);
    if (::geteuid() == 0) {
      ASSERT_TRUE(dir.size_limited()) << dir.note();
      struct statfs st {};
      ASSERT_EQ(::statfs(path.c_str(), &st), 0);
      EXPECT_LE(static_cast<std::uint64_t>(st.f_blocks) * st.f_bsize, 8u << 20);
      // Writing past its size fails there, not on the host's disk.
      std::ofstream big(path + "/big", std::ios::binary);
      const std::string chunk(1 << 20, 'x');
      for (int i = 0; i < 16 && big; ++i) big << chunk << std::flush;
      EXPECT_FALSE(big);
    } else {
      EXPECT_FALSE(dir.size_limited());
      EXPECT_FALSE(dir.note().empty());
    }
  }
  EXPECT_FALSE(fs::exists(path));
  // What a crash leaves (a process that ends without its destructors): swept, mounts and all.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t crashed = ::fork();
  if (crashed == 0) {
    const JobDirectory dir(scratch.string(), 4u << 20);
    std::ofstream(dir.path() + "/candidate.py") << "x = 1\n";
    [[maybe_unused]] auto n = ::write(fds[1], dir.path().data(), dir.path().size());
    _exit(0);
  }
  ::close(fds[1]);
  char buf[4096];
  const auto got = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  ::waitpid(crashed, nullptr, 0);
  ASSERT_GT(got, 0);
  const std::string left(buf, static_cast<std::size_t>(got));
  ASSERT_TRUE(fs::exists(left + "/candidate.py"));
  fs::create_directories(scratch / "unrelated");
  EXPECT_EQ(kgym::sandbox::sweep_job_directories(scratch.string()), 1);
  EXPECT_FALSE(fs::exists(left));
  EXPECT_TRUE(fs::exists(scratch / "unrelated"));
  fs::remove_all(scratch);
}

TEST(JobDirectory, ASharedScratchIsSweptOfWhatDeadSupervisorsLeft) {
  // `kgym check` shares the temporary directory with other supervisors: only directories whose
  // supervisor is gone (their lock free) go, live ones and strangers stay.
  const auto scratch = fs::temp_directory_path() / ("kgym-test-shared-" + std::to_string(getpid()));
  fs::create_directories(scratch);
  {
    const JobDirectory live(scratch.string(), 4u << 20);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t killed = ::fork();
    if (killed == 0) {
      const JobDirectory dir(scratch.string(), 4u << 20);
      std::ofstream(dir.path() + "/candidate.py") << "x = 1\n";
      [[maybe_unused]] auto n = ::write(fds[1], dir.path().data(), dir.path().size());
      ::pause();  // killed with -9 below, as a supervisor would be
      _exit(0);
    }
    ::close(fds[1]);
    char buf[4096];
    const auto got = ::read(fds[0], buf, sizeof buf);
    ::close(fds[0]);
    ASSERT_GT(got, 0);
    const std::string left(buf, static_cast<std::size_t>(got));
    // While its supervisor lives, its directory is in use.
    EXPECT_EQ(kgym::sandbox::sweep_abandoned_job_directories(scratch.string(), 0), 0);
    EXPECT_TRUE(fs::exists(left + "/candidate.py"));
    ::kill(killed, SIGKILL);
    ::waitpid(killed, nullptr, 0);
    fs::create_directories(scratch / "kgym-job-nolock");  // no lock: not known to be abandoned
    // A lock younger than the minimum age is left: its directory may be being made.
    EXPECT_EQ(kgym::sandbox::sweep_abandoned_job_directories(scratch.string(), 3600), 0);
    EXPECT_EQ(kgym::sandbox::sweep_abandoned_job_directories(scratch.string(), 0), 1);
    EXPECT_FALSE(fs::exists(left));
    EXPECT_FALSE(fs::exists(left + ".lock"));
    EXPECT_TRUE(fs::exists(live.path()));
    EXPECT_TRUE(fs::exists(live.path() + ".lock"));
    EXPECT_TRUE(fs::exists(scratch / "kgym-job-nolock"));
  }
  fs::remove_all(scratch);
}

}  // namespace
