#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "kgym/sandbox/child_process.hpp"

using kgym::sandbox::ChildSpec;
using kgym::sandbox::command_line;
using kgym::sandbox::run_child;

namespace {
ChildSpec shell(const std::string& script, double seconds = 10.0) {
  ChildSpec spec;
  spec.program = command_line({"/bin/sh", "-c", script});
  spec.env = {{"PATH", "/usr/bin:/bin"}, {"KGYM_MARK", "1"}};
  spec.workdir = "/tmp";
  spec.limits.wall_seconds = seconds;
  return spec;
}
}  // namespace

TEST(ChildProcess, CollectsReportStdoutAndExitCode) {
  const auto out = run_child(shell("echo out; echo err >&2; echo '{\"a\":1}' >&3; exit 7"));
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_TRUE(out.exited);
  EXPECT_EQ(out.exit_code, 7);
  EXPECT_EQ(out.report, "{\"a\":1}\n");
  EXPECT_EQ(out.stdout_tail, "out\n");
  EXPECT_EQ(out.stderr_tail, "err\n");
  EXPECT_FALSE(out.timed_out);
}

TEST(ChildProcess, LineCallbackSeesEachReportLine) {
  std::vector<std::string> lines;
  run_child(shell("printf 'a\\nb\\n' >&3; printf 'c\\n' >&3"),
            [&](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ChildProcess, ScrubbedEnvironment) {
  setenv("KGYM_SECRET_TEST", "leak", 1);
  const auto out = run_child(shell("env"));
  EXPECT_NE(out.stdout_tail.find("KGYM_MARK=1"), std::string::npos);
  EXPECT_EQ(out.stdout_tail.find("KGYM_SECRET_TEST"), std::string::npos);
}

TEST(ChildProcess, OnlyStandardDescriptorsAndReportAreOpen) {
  const auto out = run_child(shell("ls /proc/self/fd"));
  // 0, 1, 2, 3 and the descriptor ls opens to read the directory itself.
  EXPECT_EQ(out.stdout_tail.find("\n5\n"), std::string::npos) << out.stdout_tail;
}

TEST(ChildProcess, SignalIsReported) {
  const auto out = run_child(shell("kill -SEGV $$"));
  EXPECT_FALSE(out.exited);
  EXPECT_EQ(out.signal, SIGSEGV);
  EXPECT_EQ(kgym::sandbox::signal_name(out.signal), "SIGSEGV");
}

TEST(ChildProcess, HangIsKilledAtTheDeadline) {
  const auto out = run_child(shell("sleep 30", 0.5));
  EXPECT_TRUE(out.timed_out);
  EXPECT_LT(out.wall_ms, 5000);
}

TEST(ChildProcess, BackgroundChildrenDoNotOutliveTheJob) {
  // The grandchild keeps the output pipe open; the supervisor must not wait for it.
  const auto out = run_child(shell("sleep 30 & echo started", 10.0));
  EXPECT_TRUE(out.exited);
  EXPECT_LT(out.wall_ms, 5000);
  EXPECT_EQ(out.stdout_tail, "started\n");
}

TEST(ChildProcess, OutputFloodKeepsOnlyTheTail) {
  auto spec = shell("yes kgym | head -c 5000000; echo END");
  spec.limits.output_tail_bytes = 1024;
  const auto out = run_child(spec);
  EXPECT_EQ(out.stdout_bytes, 5000004u);
  EXPECT_LE(out.stdout_tail.size(), 1024u);
  EXPECT_NE(out.stdout_tail.find("END"), std::string::npos);
}

TEST(ChildProcess, ReportFloodIsCut) {
  auto spec = shell("yes kgym >&3");
  spec.limits.max_report_bytes = 1 << 20;
  const auto out = run_child(spec);
  EXPECT_TRUE(out.report_truncated);
  EXPECT_LE(out.report.size(), 1u << 20);
}

TEST(ChildProcess, FileSizeLimitApplies) {
  auto spec = shell("head -c 2000000 /dev/zero > /tmp/kgym_fsize_test; echo $?");
  spec.limits.max_file_bytes = 1 << 20;
  const auto out = run_child(spec);
  std::remove("/tmp/kgym_fsize_test");
  EXPECT_NE(out.stdout_tail, "0\n");
}

TEST(ChildProcess, NoRealTimePolicyOrNegativeNiceOfItsOwn) {
  // RLIMIT_RTPRIO and RLIMIT_NICE both 0 in the job whatever the supervisor's are: without
  // privilege the job cannot raise itself. Where the supervisor's are 0 too (the usual default,
  // and raising a hard limit needs CAP_SYS_RESOURCE) there is nothing to show.
  rlimit rtprio{}, nice{};
  getrlimit(RLIMIT_RTPRIO, &rtprio);
  getrlimit(RLIMIT_NICE, &nice);
  if (rtprio.rlim_cur == 0 && nice.rlim_cur == 0)
    GTEST_SKIP() << "this process's own limits are 0 already";
  const auto out = run_child(
      shell("grep -E '^Max (realtime priority|nice priority)' /proc/self/limits | tr -s ' '"));
  EXPECT_EQ(out.stdout_tail, "Max nice priority 0 0 \nMax realtime priority 0 0 \n");
}

TEST(ChildProcess, MissingProgramIsAStartError) {
  ChildSpec spec;
  spec.program = command_line({"/nonexistent/python3"});
  spec.workdir = "/tmp";
  const auto out = run_child(spec);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("execve"), std::string::npos) << out.start_error;
}

TEST(ChildProcess, BadWorkdirIsAStartError) {
  auto spec = shell("true");
  spec.workdir = "/nonexistent-dir";
  const auto out = run_child(spec);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("chdir"), std::string::npos);
}

TEST(ChildProcess, WritesAreConfinedToTheJobDirectory) {
  char dir[] = "/tmp/kgym-fence-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string outside = std::string(dir) + "-outside";
  auto spec = shell(
      "echo in > inside && echo ok-inside; echo dev > /dev/null && echo ok-dev; "
      "echo out > " +
      outside + " 2>/dev/null || echo denied-outside; mkdir /tmp/kgym-fence-dir " +
      "2>/dev/null || echo denied-mkdir");
  spec.workdir = dir;
  const auto out = run_child(spec);
  std::remove((std::string(dir) + "/inside").c_str());
  const bool leaked = std::remove(outside.c_str()) == 0;
  ::rmdir("/tmp/kgym-fence-dir");
  ::rmdir(dir);
  if (!out.writes_confined) GTEST_SKIP() << out.writes_note;
  EXPECT_FALSE(leaked);
  EXPECT_EQ(out.stdout_tail, "ok-inside\nok-dev\ndenied-outside\ndenied-mkdir\n");
  EXPECT_TRUE(out.writes_note.empty());
}

TEST(ChildProcess, WriteFenceCanBeTurnedOff) {
  auto spec = shell("echo x > /tmp/kgym-fence-off && echo written");
  spec.workdir = "/var";
  spec.limits.confine_writes = false;
  const auto out = run_child(spec);
  std::remove("/tmp/kgym-fence-off");
  EXPECT_FALSE(out.writes_confined);
  EXPECT_EQ(out.stdout_tail, "written\n");
}

TEST(ChildProcess, ReportEndIsToldBeforeTheChildExits) {
  // The harness closes its report channel, then ends its runners and exits: the supervisor
  // can answer at the channel's end, a second before the exit here.
  auto spec = shell("echo out; printf 'r\\n' >&3; exec 3>&-; sleep 3; exit 3");
  std::optional<kgym::sandbox::ChildOutcome> at_end;
  const auto started = std::chrono::steady_clock::now();
  double told_after_s = -1;
  spec.on_report_end = [&](const kgym::sandbox::ChildOutcome& so_far) {
    at_end = so_far;
    told_after_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const auto out = run_child(spec);
  ASSERT_TRUE(at_end.has_value());
  EXPECT_LT(told_after_s, 2.5);
  EXPECT_TRUE(at_end->started);
  EXPECT_EQ(at_end->report, "r\n");
  EXPECT_EQ(at_end->stdout_tail, "out\n");
  EXPECT_FALSE(at_end->exited);  // not known then
  EXPECT_TRUE(out.exited);
  EXPECT_EQ(out.exit_code, 3);
}

TEST(ChildProcess, ReportEndIsNotToldOnceTheChildHasEnded) {
  // A process of the job's group kept the channel past the child's exit: its end comes after
  // the exit is known, and the caller has the exit's outcome then.
  auto spec = shell("printf 'r\\n' >&3; (sleep 5) & exit 0");
  bool told = false;
  spec.on_report_end = [&](const kgym::sandbox::ChildOutcome&) { told = true; };
  const auto out = run_child(spec);
  EXPECT_TRUE(out.exited);
  EXPECT_EQ(out.report, "r\n");
  EXPECT_FALSE(told);
}

TEST(ChildProcess, ReportEndIsNotToldForAFloodedChannel) {
  auto spec = shell("yes xxxxxxxxxxxxxxxx >&3");
  spec.limits.max_report_bytes = 1 << 16;
  bool told = false;
  spec.on_report_end = [&](const kgym::sandbox::ChildOutcome&) { told = true; };
  const auto out = run_child(spec);
  EXPECT_TRUE(out.report_truncated);
  EXPECT_FALSE(told);
}
