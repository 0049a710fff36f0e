// What is left of a job's uid once the job has ended (sandbox/child_setup.hpp): live_process_of
// and kill_job_uid, with the job's own process kept a zombie as the supervisors keep it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "kgym/sandbox/child_setup.hpp"

using kgym::sandbox::Limits;
using kgym::sandbox::detail::job_uid;
using kgym::sandbox::detail::kill_job_uid;
using kgym::sandbox::detail::live_process_of;
using kgym::sandbox::detail::nproc_limit_for;

namespace {

// Far above any uid this machine gives out, below the largest a uid may be. ctest runs these
// tests side by side, so each test that puts processes under an unused uid has one of its own:
// with one shared, a test's "nothing of the uid is left" saw another test's process.
constexpr uid_t kUnusedUid = 3'999'000'000u;
constexpr uid_t kZombieTestUid = 3'999'000'001u;
constexpr uid_t kLeaderTestUid = 3'999'000'002u;
constexpr uid_t kProcessLimitTestUid = 3'999'000'003u;

// In a forked child: takes `uid` as every one of its ids, or exits.
void become(uid_t uid) {
  if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) _exit(1);
}

// A child that takes `uid` (or, with uid 0, the job uid of its own pid under `base`) and then
// either exits at once (a zombie until reaped) or waits to be killed.
pid_t child_as(uid_t uid, bool stay, std::int64_t base = 0) {
  const pid_t pid = fork();
  if (pid == 0) {
    become(uid != 0 ? uid : job_uid(base, getpid()));
    if (stay) {
      while (true) pause();
    }
    _exit(0);
  }
  return pid;
}

// Waits until `pid` has exited, without reaping it.
void wait_exited_unreaped(pid_t pid) {
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
}

// Whether /proc/<pid>/status comes to have a line that starts with `prefix` (within 1 s).
bool status_comes_to_show(pid_t pid, const std::string& prefix) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind(prefix, 0) == 0) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

bool becomes_live(uid_t uid) {
  for (int i = 0; i < 200; ++i) {
    if (live_process_of(uid, -1)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace

TEST(JobUidCleanup, ThisProcessIsLiveAndAnUnusedUidHasNone) {
  EXPECT_TRUE(live_process_of(geteuid(), -1));
  EXPECT_FALSE(live_process_of(kUnusedUid, -1));
}

TEST(JobUidCleanup, AZombieIsNotLive) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to take another uid";
  const pid_t zombie = child_as(kZombieTestUid, false);
  ASSERT_GT(zombie, 0);
  wait_exited_unreaped(zombie);
  EXPECT_FALSE(live_process_of(kZombieTestUid, -1));
  waitpid(zombie, nullptr, 0);

  const pid_t waiting = child_as(kZombieTestUid, true);
  ASSERT_GT(waiting, 0);
  EXPECT_TRUE(becomes_live(kZombieTestUid));
  EXPECT_FALSE(live_process_of(kZombieTestUid, waiting));  // the one excepted
  ::kill(waiting, SIGKILL);
  waitpid(waiting, nullptr, 0);
}

TEST(JobUidCleanup, ALeaderThatEndedAloneIsLiveWhileItsThreadsRun) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to take another uid";
  const pid_t pid = fork();
  if (pid == 0) {
    become(kLeaderTestUid);
    std::thread([] {
      while (true) pause();
    }).detach();
    syscall(SYS_exit, 0);  // this thread only: /proc shows the leader as a zombie
  }
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(status_comes_to_show(pid, "State:\tZ"));  // the leader, a zombie
  EXPECT_TRUE(live_process_of(kLeaderTestUid, -1));
  ::kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_FALSE(live_process_of(kLeaderTestUid, -1));
}

TEST(JobUidCleanup, KillsWhatIsLeftOfTheUidBesideTheJobsZombie) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to take another uid";
  Limits limits;
  limits.sandbox_uid = 3'000'000'000;
  // The job: takes its uid, leaves a process of that uid behind in a new session, and exits.
  const pid_t job = fork();
  if (job == 0) {
    become(job_uid(limits.sandbox_uid, getpid()));
    if (fork() == 0) {
      setsid();
      while (true) pause();
    }
    _exit(0);
  }
  ASSERT_GT(job, 0);
  const uid_t uid = job_uid(limits.sandbox_uid, job);
  wait_exited_unreaped(job);
  ASSERT_TRUE(becomes_live(uid));  // the survivor
  kill_job_uid(limits, job);       // returns once none is live, the job's zombie aside
  EXPECT_FALSE(live_process_of(uid, -1));
  waitpid(job, nullptr, 0);
}

TEST(JobUidCleanup, ANonRootSupervisorsProcessLimitCountsItsUidsThreads) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to take another uid";
  // A process of the uid with three threads, then a "supervisor" of the same uid asking.
  const pid_t busy = fork();
  if (busy == 0) {
    become(kProcessLimitTestUid);
    for (int i = 0; i < 2; ++i) {
      std::thread([] {
        while (true) pause();
      }).detach();
    }
    while (true) pause();
  }
  ASSERT_GT(busy, 0);
  ASSERT_TRUE(status_comes_to_show(busy, "Threads:\t3"));  // its two threads started
  const pid_t asking = fork();
  if (asking == 0) {
    become(kProcessLimitTestUid);
    Limits limits;
    limits.sandbox_uid = -1;
    limits.max_processes = 100;
    // Three threads of the busy process and this one: 4 of the uid, plus the headroom.
    _exit(nproc_limit_for(limits) == 104 ? 0 : 2);
  }
  int status = 0;
  waitpid(asking, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ::kill(busy, SIGKILL);
  waitpid(busy, nullptr, 0);
}
