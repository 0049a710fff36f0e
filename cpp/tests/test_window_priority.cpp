// A timing window's threads raised to SCHED_FIFO and back (sandbox/window_priority.hpp): only
// threads of the job's process group, whatever they start is ordinary, and the end of the window
// (or of the object) lowers them.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness_jobs.hpp"
#include "kgym/check/evaluate.hpp"
#include "kgym/check/job.hpp"
#include "kgym/sandbox/report_token.hpp"
#include "kgym/sandbox/window_priority.hpp"

using kgym::sandbox::ChildOutcome;
using kgym::sandbox::ChildSpec;
using kgym::sandbox::LineCallback;
using kgym::sandbox::process_group_of;
using kgym::sandbox::seal_record;
using kgym::sandbox::WindowPriority;
using nlohmann::json;

namespace {

// What a process started by a raised thread gets.
struct Inherited {
  int policy = -1;
  int nice = 99;
};

// A child in a process group of its own that, told to, forks once and writes its child's
// scheduling policy and nice value to `report`; it then waits to be killed.
struct Child {
  pid_t pid = -1;
  int go = -1;
  int report = -1;

  Child() {
    int ready[2], go_pipe[2], report_pipe[2];
    if (pipe(ready) != 0 || pipe(go_pipe) != 0 || pipe(report_pipe) != 0) return;
    pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      const char r = 'r';
      if (write(ready[1], &r, 1) != 1) _exit(1);
      char c = 0;
      if (read(go_pipe[0], &c, 1) == 1) {
        const pid_t grandchild = fork();
        if (grandchild == 0) {
          Inherited got;
          got.policy = sched_getscheduler(0);
          got.nice = getpriority(PRIO_PROCESS, 0);
          if (write(report_pipe[1], &got, sizeof got) != sizeof got) _exit(1);
          _exit(0);
        }
        waitpid(grandchild, nullptr, 0);
      }
      while (true) pause();
    }
    char c = 0;
    if (read(ready[0], &c, 1) != 1) pid = -1;
    close(ready[0]);
    close(ready[1]);
    close(go_pipe[0]);
    close(report_pipe[1]);
    go = go_pipe[1];
    report = report_pipe[0];
  }
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    close(go);
    close(report);
  }
  Inherited grandchild() const {
    const char c = 'g';
    Inherited got;
    if (write(go, &c, 1) != 1 || read(report, &got, sizeof got) != sizeof got) return {};
    return got;
  }
};

bool refused_for_lack_of_privilege(const std::string& note) {
  return note.find("Operation not permitted") != std::string::npos;
}

}  // namespace

TEST(WindowPriority, ReadsAProcessGroup) {
  EXPECT_EQ(process_group_of(getpid()), getpgrp());
  EXPECT_EQ(process_group_of(-5), -1);
}

TEST(WindowPriority, RaisesTheJobsThreadsAndLowersThemAgain) {
  Child child;
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(process_group_of(child.pid), child.pid);
  WindowPriority priority;
  const auto note = priority.raise(child.pid, {child.pid});
  if (refused_for_lack_of_privilege(note)) GTEST_SKIP() << "no CAP_SYS_NICE here: " << note;
  if (priority.policy() != "SCHED_FIFO")  // FallsBackToTheOrdinaryPolicysStrongestSettings
    GTEST_SKIP() << "SCHED_FIFO refused here; got " << priority.policy();
  EXPECT_EQ(note, "");
  EXPECT_EQ(priority.raised(), 1);
  const int policy = sched_getscheduler(child.pid);
  EXPECT_EQ(policy & ~SCHED_RESET_ON_FORK, SCHED_FIFO);
  EXPECT_NE(policy & SCHED_RESET_ON_FORK, 0);
  // What the raised thread starts is ordinary.
  EXPECT_EQ(child.grandchild().policy, SCHED_OTHER);
  priority.lower();
  EXPECT_EQ(priority.raised(), 0);
  EXPECT_EQ(sched_getscheduler(child.pid), SCHED_OTHER);
  priority.lower();  // twice: nothing more
}

TEST(WindowPriority, FallsBackToTheOrdinaryPolicysStrongestSettings) {
  Child child;
  ASSERT_GT(child.pid, 0);
  WindowPriority priority(/*try_realtime=*/false);
  const auto note = priority.raise(child.pid, {child.pid});
  if (refused_for_lack_of_privilege(note)) GTEST_SKIP() << "no CAP_SYS_NICE here: " << note;
  EXPECT_EQ(note, "");
  EXPECT_EQ(priority.policy(), "nice -20, 0.1 ms slice");
  EXPECT_EQ(sched_getscheduler(child.pid) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
  EXPECT_NE(sched_getscheduler(child.pid) & SCHED_RESET_ON_FORK, 0);
  errno = 0;
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(child.pid)), -20);
  const auto started = child.grandchild();  // reset on fork: ordinary, at nice 0
  EXPECT_EQ(started.policy, SCHED_OTHER);
  EXPECT_EQ(started.nice, 0);
  priority.lower();
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(child.pid)), 0);
  EXPECT_EQ(sched_getscheduler(child.pid), SCHED_OTHER);
}

TEST(WindowPriority, LowersOnlyWhatIsStillInTheJobsProcessGroup) {
  // A raised pid that has left the group by the window's end (in the supervisor: the job is
  // gone and another process took the pid) is not touched.
  Child child;
  ASSERT_GT(child.pid, 0);
  WindowPriority priority(/*try_realtime=*/false);
  const auto note = priority.raise(child.pid, {child.pid});
  if (refused_for_lack_of_privilege(note)) GTEST_SKIP() << "no CAP_SYS_NICE here: " << note;
  ASSERT_EQ(setpgid(child.pid, getpgrp()), 0);
  priority.lower();
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(child.pid)), -20);
}

TEST(WindowPriority, RefusesThreadsOutsideTheJobsProcessGroup) {
  Child child;
  ASSERT_GT(child.pid, 0);
  WindowPriority priority;
  // This test's own process is not in the child's group; nor is a pid that does not exist.
  const auto note = priority.raise(child.pid, {getpid(), 0});
  EXPECT_NE(note.find("not in the job's process group"), std::string::npos) << note;
  EXPECT_EQ(priority.raised(), 0);
  EXPECT_EQ(sched_getscheduler(getpid()) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
}

TEST(WindowPriority, EndsWithTheObject) {
  Child child;
  ASSERT_GT(child.pid, 0);
  {
    WindowPriority priority(/*try_realtime=*/false);
    const auto note = priority.raise(child.pid, {child.pid});
    if (refused_for_lack_of_privilege(note)) GTEST_SKIP() << "no CAP_SYS_NICE here: " << note;
    ASSERT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(child.pid)), -20);
  }
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(child.pid)), 0);
  EXPECT_EQ(sched_getscheduler(child.pid), SCHED_OTHER);
}

namespace {

struct Observed {
  int during = -1;                // the judge's policy while its window lasts
  std::vector<int> named_during;  // the policy of each named pid while the window lasts
  int after = -1;                 // after its next record
  nlohmann::json window_priority;
};

// check::run_prepared with a launcher that stands in for the harness: `judge` (a process group
// of its own) sends the `timing` record naming `named`, then `done`, then its report.
Observed run_window(const Child& judge, const std::vector<pid_t>& named) {
  const auto job = kgym::check::job_from_json(
      {{"task_id", "01_relu"},
       {"task_source", harness_jobs::read_file(KGYM_SOURCE_DIR "/tasks/01_relu.py")},
       {"candidate", harness_jobs::read_file(KGYM_SOURCE_DIR "/tasks/solutions/01_relu.py")},
       {"device", "cpu"}});
  const auto prepared = kgym::check::prepare(job);
  Observed seen;
  if (prepared.settled) return seen;
  auto launch = [&](const ChildSpec& spec, const LineCallback& on_line) {
    spec.on_started(judge.pid);
    auto record = [&](const json& r) { return seal_record(spec.token, r.dump()); };
    on_line(record({{"type", "phase"}, {"phase", "timing"}, {"pids", named}}));
    seen.during = sched_getscheduler(judge.pid);
    for (const pid_t pid : named) seen.named_during.push_back(sched_getscheduler(pid));
    on_line(record({{"type", "phase"}, {"phase", "done"}}));
    seen.after = sched_getscheduler(judge.pid);
    ChildOutcome out;
    out.started = true;
    out.exited = true;
    out.exit_code = 0;
    out.report = record({{"type", "report"}, {"status", "ok"}}) + "\n";
    return out;
  };
  const auto result = kgym::check::run_prepared(job, prepared, {}, launch);
  seen.window_priority = result["sandbox"]["window_priority"];
  return seen;
}

}  // namespace

TEST(WindowPriority, TheSupervisorRaisesWhatTheJudgeNamesForItsWindow) {
  Child judge;
  ASSERT_GT(judge.pid, 0);
  const auto seen = run_window(judge, {judge.pid, getpid()});
  ASSERT_TRUE(seen.window_priority.is_object()) << seen.window_priority.dump();
  const auto note = seen.window_priority.value("note", json()).dump();
  if (refused_for_lack_of_privilege(note)) GTEST_SKIP() << "no CAP_SYS_NICE here: " << note;
  // Real-time where the machine allows it, else the ordinary policy's strongest settings.
  const auto policy = seen.window_priority.value("policy", "");
  EXPECT_EQ(seen.during & ~SCHED_RESET_ON_FORK, policy == "SCHED_FIFO" ? SCHED_FIFO : SCHED_OTHER)
      << policy;
  EXPECT_NE(seen.during & SCHED_RESET_ON_FORK, 0);
  EXPECT_EQ(seen.after, SCHED_OTHER);
  // This test's process was named too, but is not in the judge's group: left alone, and said.
  EXPECT_EQ(seen.window_priority["raised"], 1);
  EXPECT_NE(note.find("not in the job's process group"), std::string::npos) << note;
  EXPECT_EQ(sched_getscheduler(getpid()) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
}

TEST(WindowPriority, NoMoreThanTheWindowsThreeThreadsAreRaised) {
  // Task code runs in the judge and could send a sealed record of its own naming more.
  Child judge, second, third, fourth;
  ASSERT_GT(fourth.pid, 0);
  for (const auto* c : {&second, &third, &fourth}) ASSERT_EQ(setpgid(c->pid, judge.pid), 0);
  const auto seen = run_window(judge, {judge.pid, second.pid, third.pid, fourth.pid});
  const auto note = seen.window_priority.value("note", json()).dump();
  if (refused_for_lack_of_privilege(note)) GTEST_SKIP() << "no CAP_SYS_NICE here: " << note;
  EXPECT_EQ(seen.window_priority["raised"], 3) << seen.window_priority.dump();
  ASSERT_EQ(seen.named_during.size(), 4u);
  EXPECT_EQ(seen.named_during[3], SCHED_OTHER);  // the fourth: never raised
  EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(fourth.pid)), 0);
}

TEST(WindowPriority, ARecordThatNamesNoThreadRaisesNothing) {
  Child judge;
  ASSERT_GT(judge.pid, 0);
  const auto seen = run_window(judge, {});
  EXPECT_EQ(seen.during, SCHED_OTHER);
  EXPECT_EQ(seen.window_priority["raised"], 0);
  EXPECT_EQ(seen.window_priority["note"], "the judge named no threads to raise");
}
