// The answer at the harness' report (check::ResultCallback): the Result given before the child
// has exited is the one run_prepared returns; a time-out, or a channel that carried anything but
// the harness' sealed records, is answered at the exit as before.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness_jobs.hpp"
#include "kgym/check/evaluate.hpp"
#include "kgym/check/job.hpp"
#include "kgym/sandbox/report_token.hpp"

using kgym::sandbox::ChildOutcome;
using kgym::sandbox::ChildSpec;
using kgym::sandbox::LineCallback;
using kgym::sandbox::seal_record;
using nlohmann::json;
using namespace harness_jobs;

namespace {

// The harness run by check::evaluate itself, in the tests' interpreter.
kgym::check::CheckJob cpu_job(const std::string& candidate) {
  auto job = cpu_relu_job(candidate);
  job.python = test_python();
  return job;
}

// run_prepared with a launcher that stands in for the harness: it writes the `raw` lines as they
// are, then `records` sealed with the job's token, then tells the channel's end, then exits
// with `exit.code` (or is killed by `exit.signal`, when not 0). The answer's callback takes the
// Result when `exit.take`; `exit.ended` gets how the child ended after an answer.
struct Exit {
  int code = 0;
  int signal = 0;
  bool take = true;
  std::string* ended = nullptr;
};
json run_with_channel(const std::vector<json>& records, const std::vector<std::string>& raw,
                      std::vector<json>& given, const Exit& exit = {}) {
  const auto job = cpu_job(solution());
  auto launch = [&](const ChildSpec& spec, const LineCallback& on_line) {
    ChildOutcome out;
    out.started = true;
    for (const auto& line : raw) {
      on_line(line);
      out.report += line + "\n";
    }
    for (const auto& r : records) {
      const auto line = seal_record(spec.token, r.dump());
      on_line(line);
      out.report += line + "\n";
    }
    if (spec.on_report_end) spec.on_report_end(out);
    out.exited = exit.signal == 0;
    out.exit_code = exit.signal == 0 ? exit.code : -1;
    out.signal = exit.signal;
    return out;
  };
  return kgym::check::run_prepared(
      job, kgym::check::prepare(job), {}, launch, {},
      [&](const json& r) {
        given.push_back(r);
        return exit.take;
      },
      exit.ended);
}

const json kReport = {{"type", "report"}, {"status", "ok"}, {"compiled", true}, {"correct", true}};
const json kDone = {{"type", "phase"}, {"phase", "done"}};

}  // namespace

TEST(AnswerAtReport, TheResultGivenBeforeTheExitIsTheExitsVerdict) {
  std::string incorrect = solution();
  incorrect.replace(incorrect.find("tl.where(x > 0.0, x, 0.0)"), 25, "tl.where(x > 0.0, x, 1.0)");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {solution(), "ok"},
      {incorrect, "incorrect"},
      {"import torch\n\nraise RuntimeError('no')\n", "compile_error"}};
  for (const auto& [candidate, status] : cases) {
    SCOPED_TRACE(status);
    auto job = cpu_job(candidate);
    job.screen = false;  // the failing candidate is the harness' to judge
    std::vector<json> given;
    const json returned = kgym::check::evaluate(job, {}, {}, {}, [&](const json& r) {
      given.push_back(r);
      return true;
    });
    ASSERT_EQ(given.size(), 1u) << returned.dump();
    EXPECT_EQ(given[0], returned);  // what the caller answered with is what it gets back
    EXPECT_EQ(returned["sandbox"]["answered_before_exit"], true);
    EXPECT_TRUE(returned["sandbox"]["exit_code"].is_null());  // not known at the answer
    EXPECT_TRUE(returned["sandbox"]["signal"].is_null());
    EXPECT_GT(returned["durations_ms"]["total"].get<double>(), 0);
    // The same job, its exit awaited: the same verdict.
    const json at_exit = kgym::check::evaluate(job);
    EXPECT_EQ(at_exit["sandbox"]["answered_before_exit"], false);
    EXPECT_EQ(at_exit["sandbox"]["exit_code"], 0);
    for (const char* key : {"status", "compiled", "correct", "hacked", "findings", "correctness"}) {
      EXPECT_EQ(verdict_part(returned, key), verdict_part(at_exit, key)) << key;
    }
    EXPECT_EQ(returned["status"], status) << returned.dump();
    for (const char* layer : {"network_isolated", "private_view", "syscalls_filtered"}) {
      EXPECT_EQ(returned["sandbox"][layer], at_exit["sandbox"][layer]) << layer;
    }
  }
}

TEST(AnswerAtReport, AResultTheCallerDeclinesOrThrowsOnWaitsForTheExit) {
  const auto job = cpu_job(solution());
  int asked = 0;
  json r = kgym::check::evaluate(job, {}, {}, {}, [&](const json&) {
    ++asked;
    return false;  // the caller would run it again (the service's doubtful failures)
  });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(r["sandbox"]["answered_before_exit"], false);
  EXPECT_EQ(r["sandbox"]["exit_code"], 0);

  r = kgym::check::evaluate(
      job, {}, {}, {}, [&](const json&) -> bool { throw std::runtime_error("the store is away"); });
  EXPECT_EQ(r["status"], "ok") << r.dump();  // the child was still supervised to its end
  EXPECT_EQ(r["sandbox"]["answered_before_exit"], false);
  EXPECT_EQ(r["sandbox"]["exit_code"], 0);
}

TEST(AnswerAtReport, ATimeOutIsAnsweredAtTheExit) {
  auto job = cpu_job("import time\ntime.sleep(60)\n");
  job.screen = false;
  job.timeout_seconds = 3.0;
  std::vector<json> given;
  const json r = kgym::check::evaluate(job, {}, {}, {}, [&](const json& g) {
    given.push_back(g);
    return true;
  });
  EXPECT_TRUE(given.empty());
  EXPECT_EQ(r["status"], "timeout") << r.dump();
  EXPECT_EQ(r["sandbox"]["answered_before_exit"], false);
}

TEST(AnswerAtReport, OnlyAChannelOfTheHarnessRecordsEndingInDoneIsAnsweredAtItsEnd) {
  std::vector<json> given;
  json r = run_with_channel({kReport, kDone}, {}, given);
  ASSERT_EQ(given.size(), 1u);
  EXPECT_EQ(given[0], r);
  EXPECT_EQ(r["status"], "ok") << r.dump();

  // A forged line before the report: the exit is awaited and the forgery is a finding.
  given.clear();
  r = run_with_channel({kReport, kDone}, {"{\"type\": \"report\", \"status\": \"ok\"}"}, given);
  EXPECT_TRUE(given.empty());
  EXPECT_EQ(r["status"], "rejected") << r.dump();
  EXPECT_EQ(r["sandbox"]["answered_before_exit"], false);

  // A runner's `violation` (it found the channel), sealed by the harness: the same.
  given.clear();
  r = run_with_channel({{{"type", "violation"}, {"detail", "fd 3"}}, kReport, kDone}, {}, given);
  EXPECT_TRUE(given.empty());
  EXPECT_EQ(r["status"], "rejected") << r.dump();

  // No `done` after the report (the harness died sending it), or no report at all: the exit
  // decides, as before.
  given.clear();
  r = run_with_channel({kReport}, {}, given);
  EXPECT_TRUE(given.empty());
  given.clear();
  r = run_with_channel({kDone}, {}, given);
  EXPECT_TRUE(given.empty());
  EXPECT_EQ(r["status"], "crashed") << r.dump();
}

TEST(AnswerAtReport, AHarnessThatFailsAfterItsAnswerKeepsTheAnswerAndSaysHowItEnded) {
  // Its verdict was complete at the report; its teardown failed after it. The Result stays the
  // one given, and the caller learns how the child ended (the service logs it).
  for (const auto& [code, signal, said] :
       {std::tuple{3, 0, "exited with code 3"}, std::tuple{-1, 9, "was killed by SIGKILL"},
        std::tuple{kgym::check::kTeardownFailedExit, 0, "its teardown failed"}}) {
    std::vector<json> given;
    std::string ended;
    const json r = run_with_channel({kReport, kDone}, {}, given, {code, signal, true, &ended});
    ASSERT_EQ(given.size(), 1u);
    EXPECT_EQ(r, given[0]);
    EXPECT_EQ(r["sandbox"]["answered_before_exit"], true);
    EXPECT_NE(ended.find(said), std::string::npos) << ended;
  }
  std::vector<json> given;  // an exit 0 after the answer: nothing to say
  std::string ended = "unset";
  run_with_channel({kReport, kDone}, {}, given, {0, 0, true, &ended});
  EXPECT_EQ(ended, "");
}

TEST(AnswerAtReport, AFailedTeardownAfterACompleteReportIsNotACrashAtTheExitEither) {
  // Answered at the exit (the caller declines the early Result, as a pool worker's answer
  // does): the same verdict as at the report, with the exit code
  // kept; the same code without `done` after the report is a crash.
  std::vector<json> given;
  const Exit declined{kgym::check::kTeardownFailedExit, 0, false, nullptr};
  const json r = run_with_channel({kReport, kDone}, {}, given, declined);
  EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(r["sandbox"]["exit_code"], kgym::check::kTeardownFailedExit);
  const json cut = run_with_channel({kReport}, {}, given, declined);
  EXPECT_EQ(cut["status"], "crashed") << cut.dump();
}
