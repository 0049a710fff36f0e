// The standby launcher: a slot's next job handed to a child started ahead, with the same Result
// as a child started for it; any other job runs as before; nothing of a standby outlives it.
#include "kgym/check/standby_launcher.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness_jobs.hpp"
#include "kgym/sandbox/deferred_start.hpp"

using kgym::check::StandbyLauncher;
using kgym::sandbox::DeferredStart;
using namespace harness_jobs;

namespace {

// The job directories under `parent` other than the test's own (the standby's).
std::vector<fs::path> standby_dirs(const fs::path& parent) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(parent)) {
    if (e.path().filename().string().starts_with("kgym-job-")) out.push_back(e.path());
  }
  return out;
}

// The live processes whose parent is `pid` (the fork server's job children).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& p : process_table()) {
    if (p.parent == pid && p.state != 'Z') out.push_back(p.pid);
  }
  return out;
}

// Waits until the standby has forked (one job child under the server), up to 30 s.
bool standby_forked(pid_t server) {
  for (int i = 0; i < 300; ++i) {
    if (!children_of(server).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class StandbyLauncherTest : public ForkServerHarness {
 protected:
  TempDir parent_;
};

}  // namespace

TEST(DeferredStart, BeginsOnceAndNotAfterACancel) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  DeferredStart start;
  // A begin before the socket is there waits for it.
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    start.attach(pair[1]);
  });
  EXPECT_FALSE(start.begun_at());
  std::vector<std::string> lines;
  EXPECT_TRUE(start.begin("token", 5, [&](const std::string& l) { lines.push_back(l); }));
  late.join();
  EXPECT_TRUE(start.begun_at());
  EXPECT_EQ(start.wall_seconds(), 5);
  EXPECT_FALSE(start.begin("again", 5, {}));
  char buf[16] = {};
  EXPECT_EQ(::read(pair[0], buf, sizeof buf), 5);  // the token, then the end: the pipe closed
  EXPECT_EQ(std::string(buf, 5), "token");
  EXPECT_EQ(::read(pair[0], buf, sizeof buf), 0);
  start.forward("a line");
  EXPECT_EQ(lines, std::vector<std::string>{"a line"});
  start.cancel();  // too late: it has begun
  EXPECT_FALSE(start.cancelled());
  ::close(pair[0]);

  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  DeferredStart cancelled;
  cancelled.attach(pair[1]);
  cancelled.forward("dropped: no job yet");
  cancelled.cancel();
  EXPECT_TRUE(cancelled.cancelled());
  EXPECT_FALSE(cancelled.begin("token", 5, {}));
  EXPECT_EQ(::read(pair[0], buf, sizeof buf), 0);  // closed without a token
  ::close(pair[0]);
}

TEST(DeferredStart, ARunThatEndedWithoutASocketIsNoBegin) {
  DeferredStart start;
  std::thread ended([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    start.run_ended();
  });
  EXPECT_FALSE(start.begin("token", 5, {}));
  ended.join();
}

TEST(DeferredStart, AChildThatHasGoneIsNoBeginAndNoSignal) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  ::close(pair[0]);
  DeferredStart start;
  start.attach(pair[1]);
  EXPECT_FALSE(start.begin("token", 5, {}));  // EPIPE, not SIGPIPE
}

TEST(DeferredStart, RunChildRefusesIt) {
  ChildSpec spec;
  spec.program = kgym::sandbox::command_line({"/bin/true"});
  spec.deferred_start = std::make_shared<DeferredStart>();
  const auto out = kgym::sandbox::run_child(spec);
  EXPECT_FALSE(out.started);
  EXPECT_NE(out.start_error.find("fork server"), std::string::npos);
}

TEST_F(StandbyLauncherTest, TheNextJobIsHandedToTheStandbyWithTheSameResult) {
  StandbyLauncher launcher(server_);
  const auto first = make_job(solution(), 120.0, parent_.path);
  std::vector<std::string> first_lines;
  const auto a =
      launcher.launch(first->spec, [&](const std::string& l) { first_lines.push_back(l); });
  ASSERT_TRUE(a.started) << a.start_error;
  EXPECT_EQ(a.standby_used, false);
  EXPECT_NE(a.standby_note.find("no standby"), std::string::npos) << a.standby_note;
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  ASSERT_EQ(standby_dirs(parent_.path).size(), 1u);  // the next job's directory, made ahead

  const auto second = make_job(solution(), 120.0, parent_.path);
  pid_t group = -1;
  second->spec.on_started = [&](pid_t pgid) { group = pgid; };
  std::vector<std::string> second_lines;
  const auto b =
      launcher.launch(second->spec, [&](const std::string& l) { second_lines.push_back(l); });
  ASSERT_TRUE(b.started) << b.start_error;
  EXPECT_EQ(b.standby_used, true) << b.standby_note;
  EXPECT_EQ(b.standby_note, "");
  EXPECT_GT(group, 0);  // the standby's group, told to the job's caller (its cancel)
  EXPECT_EQ(second_lines.size(), first_lines.size());
  const json ra = result_of(*first, a);
  const json rb = result_of(*second, b);
  for (const char* key : {"status", "compiled", "correct", "hacked", "findings", "correctness"})
    EXPECT_EQ(verdict_part(rb, key), verdict_part(ra, key)) << key << "\n" << rb.dump();
  EXPECT_EQ(rb["status"], "ok");
  EXPECT_EQ(rb["sandbox"]["standby"]["used"], true);
  EXPECT_EQ(rb["sandbox"]["exit_code"], 0);
  EXPECT_EQ(rb["sandbox"]["network_isolated"], ra["sandbox"]["network_isolated"]);
  EXPECT_EQ(rb["sandbox"]["private_view"], ra["sandbox"]["private_view"]);
  // The set-up done ahead is reported under names of its own, not as the job's load.
  EXPECT_TRUE(rb["durations_ms"].contains("harness_standby_load")) << rb["durations_ms"].dump();
  EXPECT_TRUE(rb["durations_ms"].contains("harness_standby_wait"));

  // Closing ends the third child (the standby readied after the second job) and its directory.
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  launcher.close();
  EXPECT_TRUE(children_of(server_->server_pid()).empty());
  EXPECT_TRUE(standby_dirs(parent_.path).empty());
}

TEST_F(StandbyLauncherTest, TheOutcomeAtTheReportsEndSaysWhetherTheStandbyRanIt) {
  // The answer before the exit (check::ResultCallback) carries the standby's use as the
  // outcome after the exit does, for a fresh child and for a standby alike; so do its layers.
  StandbyLauncher launcher(server_);
  std::vector<kgym::sandbox::ChildOutcome> at_end;
  auto tell = [&](kgym::sandbox::ChildSpec& spec) {
    spec.on_report_end = [&](const kgym::sandbox::ChildOutcome& so_far) {
      at_end.push_back(so_far);
    };
  };
  const auto first = make_job(solution(), 120.0, parent_.path);
  tell(first->spec);
  const auto a = launcher.launch(first->spec, {});
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  const auto second = make_job(solution(), 120.0, parent_.path);
  tell(second->spec);
  const auto b = launcher.launch(second->spec, {});
  ASSERT_EQ(at_end.size(), 2u);
  EXPECT_EQ(at_end[0].standby_used, false);
  EXPECT_EQ(at_end[0].standby_note, a.standby_note);
  EXPECT_EQ(at_end[1].standby_used, true) << b.standby_note;
  for (size_t i = 0; i < 2; ++i) {
    const auto& done = i == 0 ? a : b;
    EXPECT_EQ(at_end[i].report, done.report);  // the whole channel, sealed report and done
    EXPECT_EQ(at_end[i].network_isolated, done.network_isolated);
    EXPECT_EQ(at_end[i].private_view, done.private_view);
    EXPECT_EQ(at_end[i].syscalls_filtered, done.syscalls_filtered);
  }
  EXPECT_EQ(result_of(*second, b)["status"], "ok");
  launcher.close();
}

TEST_F(StandbyLauncherTest, AJobThatAsksForOtherSetUpRunsInAChildOfItsOwn) {
  StandbyLauncher launcher(server_);
  const auto first = make_job(solution(), 120.0, parent_.path);
  ASSERT_TRUE(launcher.launch(first->spec, {}).started);
  ASSERT_TRUE(standby_forked(server_->server_pid()));

  // The runners warm the profiler or not: a job with the other choice cannot use the standby.
  const auto profiled = make_job(solution(), 120.0, parent_.path);
  json harness = json::parse(read_file(profiled->dir.path / "job.json"));
  harness["profile"] = true;
  std::ofstream(profiled->dir.path / "job.json") << harness.dump();
  const auto out = launcher.launch(profiled->spec, {});
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_EQ(out.standby_used, false);
  EXPECT_EQ(out.standby_note, "the job's profile differs");
  EXPECT_EQ(result_of(*profiled, out)["status"], "ok");

  // A job with another environment neither.
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  const auto other_env = make_job(solution(), 120.0, parent_.path);
  other_env->spec.env.emplace_back("OMP_NUM_THREADS", "1");
  const auto out2 = launcher.launch(other_env->spec, {});
  EXPECT_EQ(out2.standby_used, false);
  EXPECT_EQ(out2.standby_note, "the job's environment differs");
  EXPECT_EQ(result_of(*other_env, out2)["status"], "ok");
  launcher.close();
  EXPECT_TRUE(children_of(server_->server_pid()).empty());
  EXPECT_TRUE(standby_dirs(parent_.path).empty());
}

TEST_F(StandbyLauncherTest, TheWallTimeLimitCountsFromTheHandOver) {
  StandbyLauncher launcher(server_);
  ASSERT_TRUE(launcher.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  // The standby waits longer than the next job's limit before the job comes.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const auto hang = make_job("import time\ntime.sleep(60)\n", 3.0, parent_.path);
  pid_t group = -1;
  hang->spec.on_started = [&](pid_t pgid) { group = pgid; };
  const auto out = launcher.launch(hang->spec, {});
  EXPECT_EQ(out.standby_used, true) << out.standby_note;
  EXPECT_TRUE(out.timed_out);
  EXPECT_GT(out.wall_ms, 2900);
  EXPECT_LT(out.wall_ms, 8000);
  EXPECT_EQ(result_of(*hang, out)["status"], "timeout");
  ASSERT_GT(group, 0);
  EXPECT_EQ(live_in_group(group), 0);
  launcher.close();
}

TEST_F(StandbyLauncherTest, AStandbyKilledBeforeItsJobIsReplacedByAFreshChild) {
  StandbyLauncher launcher(server_);
  ASSERT_TRUE(launcher.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  // Whatever killed it, the job runs: in a child of its own, and the note says why.
  for (const pid_t child : children_of(server_->server_pid())) ::kill(-child, SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto job = make_job(solution(), 120.0, parent_.path);
  const auto out = launcher.launch(job->spec, {});
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_EQ(out.standby_used, false);
  EXPECT_EQ(out.standby_note, "the standby had ended before the job came");
  EXPECT_EQ(result_of(*job, out)["status"], "ok");
  launcher.close();
  EXPECT_TRUE(standby_dirs(parent_.path).empty());
}

TEST_F(StandbyLauncherTest, AJobReadiesAStandbyOnEachIdlePeerOfItsGroup) {
  // A second slot of the same GPU: its own fork server, started as the fixture's is.
  auto peer_server = cpu_fork_server(parent_.path);
  ASSERT_EQ(peer_server->start(), "");
  auto group = std::make_shared<StandbyLauncher::Group>();
  StandbyLauncher slot(server_, group);
  StandbyLauncher peer(peer_server, group);
  StandbyLauncher outsider(peer_server);  // no group: it takes no offer
  slot.join_group();
  peer.join_group();
  ASSERT_TRUE(slot.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  // Both slots now have a standby: the first job's own, and the peer's from its offer.
  ASSERT_TRUE(standby_forked(server_->server_pid()));
  ASSERT_TRUE(standby_forked(peer_server->server_pid()));
  EXPECT_EQ(standby_dirs(parent_.path).size(), 2u);
  const auto job = make_job(solution(), 120.0, parent_.path);
  const auto out = peer.launch(job->spec, {});
  EXPECT_EQ(out.standby_used, true) << out.standby_note;
  EXPECT_EQ(result_of(*job, out)["status"], "ok");
  peer.close();
  slot.close();
  EXPECT_TRUE(children_of(server_->server_pid()).empty());
  EXPECT_TRUE(children_of(peer_server->server_pid()).empty());
  EXPECT_TRUE(standby_dirs(parent_.path).empty());
}

TEST_F(StandbyLauncherTest, AJobFileTheStandbyCannotTakeIsReportedNotACrash) {
  StandbyLauncher launcher(server_);
  ASSERT_TRUE(launcher.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  // The warm values agree, the rest of the file does not hold what the harness reads after.
  const auto job = make_job(solution(), 120.0, parent_.path);
  json harness = json::parse(read_file(job->dir.path / "job.json"));
  harness.erase("seed");
  std::ofstream(job->dir.path / "job.json") << harness.dump();
  const auto out = launcher.launch(job->spec, {});
  EXPECT_EQ(out.standby_used, true) << out.standby_note;
  const json r = result_of(*job, out);
  EXPECT_EQ(r["status"], "infra_error") << r.dump();
  EXPECT_EQ(r["error"]["type"], "KeyError") << r.dump();
  launcher.close();
}

TEST_F(StandbyLauncherTest, TheJobSeesNoFileOfTheStandbysOwn) {
  StandbyLauncher launcher(server_);
  ASSERT_TRUE(launcher.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  // The candidate lists its job's directory (its runner's parent) at import, then leaves.
  const auto job = make_job(
      "import json, os\nprint(json.dumps(sorted(os.listdir(os.path.dirname(os.getcwd())))), "
      "flush=True)\n"
      "os._exit(0)\n",
      120.0, parent_.path);
  const auto out = launcher.launch(job->spec, {});
  EXPECT_EQ(out.standby_used, true) << out.standby_note;
  const json listed = json::parse(out.stdout_tail, nullptr, false);
  ASSERT_TRUE(listed.is_array()) << result_of(*job, out).dump();
  // Its own source, and neither the standby's file nor the job's plan (the judge deletes the
  // job file once read: the trials and the timing are not the candidate's to know).
  EXPECT_NE(std::find(listed.begin(), listed.end(), "candidate.py"), listed.end()) << listed.dump();
  EXPECT_EQ(std::find(listed.begin(), listed.end(), "job.json"), listed.end()) << listed.dump();
  EXPECT_EQ(std::find(listed.begin(), listed.end(), "standby.json"), listed.end()) << listed.dump();
  launcher.close();
}

TEST_F(StandbyLauncherTest, ASetUpThatFailsInAStandbyIsItsJobsInfraError) {
  StandbyLauncher launcher(server_);
  // A lock file that is not there: the judge cannot open it, in a fresh child or a standby.
  auto broken = [&] {
    auto j = make_job(solution(), 120.0, parent_.path);
    json harness = json::parse(read_file(j->dir.path / "job.json"));
    harness["timing_lock"] = (parent_.path / "no-such.lock").string();
    std::ofstream(j->dir.path / "job.json") << harness.dump();
    return j;
  };
  const auto first = broken();
  const auto a = launcher.launch(first->spec, {});
  EXPECT_EQ(a.standby_used, false);
  const auto second = broken();
  const auto b = launcher.launch(second->spec, {});
  EXPECT_EQ(b.standby_used, true) << b.standby_note;
  // The same verdict as the fresh child's: the gym's failure (which the service runs again),
  // not a crash of the candidate.
  const json ra = result_of(*first, a);
  const json rb = result_of(*second, b);
  EXPECT_EQ(ra["status"], "infra_error") << ra.dump();
  EXPECT_EQ(rb["status"], "infra_error") << rb.dump();
  EXPECT_EQ(rb["error"]["type"], ra["error"]["type"]);
  launcher.close();
}

TEST_F(StandbyLauncherTest, CloseDuringALaunchLeavesNoStandbyBehind) {
  StandbyLauncher launcher(server_);
  ASSERT_TRUE(launcher.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  const auto hang = make_job("import time\ntime.sleep(60)\n", 3.0, parent_.path);
  std::thread job([&] { EXPECT_TRUE(launcher.launch(hang->spec, {}).timed_out); });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  launcher.close();  // the shutdown's: the running job finishes, no standby is made after it
  job.join();
  EXPECT_TRUE(children_of(server_->server_pid()).empty());
  EXPECT_TRUE(standby_dirs(parent_.path).empty());
}

TEST_F(StandbyLauncherTest, AForkServerThatDiesUnderAStandbyIsStartedAgainForTheJob) {
  auto server = cpu_fork_server(parent_.path);
  ASSERT_EQ(server->start(), "");
  StandbyLauncher launcher(server);
  ASSERT_TRUE(launcher.launch(make_job(solution(), 120.0, parent_.path)->spec, {}).started);
  ASSERT_TRUE(standby_forked(server->server_pid()));
  ::kill(server->server_pid(), SIGKILL);  // the standby dies with it
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto job = make_job(solution(), 120.0, parent_.path);
  const auto out = launcher.launch(job->spec, {});
  EXPECT_EQ(out.standby_used, false);
  EXPECT_EQ(out.standby_note, "the standby had ended before the job came");
  ASSERT_TRUE(out.started) << out.start_error;
  EXPECT_EQ(result_of(*job, out)["status"], "ok");
  EXPECT_EQ(server->restarts(), 1);
  launcher.close();
}
