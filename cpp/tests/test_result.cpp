#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kgym/check/evaluate.hpp"
#include "kgym/check/job.hpp"
#include "kgym/result/feedback.hpp"
#include "kgym/result/status.hpp"
#include "kgym/sandbox/report_token.hpp"

using kgym::check::assemble_result;
using kgym::check::CheckJob;
using kgym::sandbox::ChildOutcome;
using nlohmann::json;

namespace {
constexpr std::string_view kToken = "0123456789abcdef";

std::string sealed(const std::string& payload) {
  return kgym::sandbox::seal_record(kToken, payload);
}

ChildOutcome clean_exit(const std::string& report) {
  ChildOutcome o;
  o.started = true;
  o.exited = true;
  o.exit_code = 0;
  o.report = report;
  return o;
}

json ok_report() {
  return json::parse(R"({
    "type": "report", "status": "ok", "compiled": true, "correct": true, "findings": [],
    "correctness": {"trials": 5, "passed": 5, "max_abs_error": 1e-6},
    "timing": {"available": true,
               "samples": {"reference": [2.0, 2.1, 2.0, 1.9, 2.0], "candidate": [1, 1, 1, 1, 1]}},
    "profile": {"available": true, "kernels": [
      {"name": "k", "triton": true, "calls": 3, "total_ms": 3.0},
      {"name": "memset", "triton": false, "calls": 3, "total_ms": 1.0}]}
  })");
}
}  // namespace

TEST(Status, NamesRoundTrip) {
  for (const char* name : {"ok", "rejected", "compile_error", "runtime_error", "incorrect",
                           "timeout", "crashed", "infra_error"}) {
    const auto s = kgym::result::parse_status(name);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(kgym::result::status_name(*s), name);
  }
  EXPECT_FALSE(kgym::result::parse_status("fine").has_value());
}

TEST(Assemble, OkReportGetsStatisticsComputedHere) {
  CheckJob job;
  job.task_id = "t";
  const auto r = assemble_result(
      job,
      clean_exit(sealed("{\"type\":\"phase\",\"phase\":\"load\"}") + sealed(ok_report().dump())),
      json::object(), kToken);
  EXPECT_EQ(r["schema"], "kgym.result/1");
  EXPECT_EQ(r["status"], "ok");
  EXPECT_TRUE(r["correct"].get<bool>());
  EXPECT_DOUBLE_EQ(r["timing"]["speedup"].get<double>(), 2.0);
  EXPECT_EQ(r["timing"]["reference"]["samples"], 5);
  EXPECT_DOUBLE_EQ(r["profile"]["triton_share"].get<double>(), 0.75);
  EXPECT_EQ(r["profile"]["kernels"][0]["name"], "k");
}

TEST(Assemble, RejectFindingMeansRejectedAndHacked) {
  auto report = ok_report();
  report["findings"] = {{{"rule", "input-mutated"}, {"severity", "reject"}, {"detail", "x"}}};
  CheckJob job;
  const auto r = assemble_result(job, clean_exit(sealed(report.dump())), json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
  EXPECT_TRUE(r["hacked"].get<bool>());
  EXPECT_FALSE(r["correct"].get<bool>());
}

TEST(Assemble, CrashNamesSignalAndPhase) {
  ChildOutcome o;
  o.started = true;
  o.signal = SIGSEGV;
  o.report = sealed("{\"type\":\"phase\",\"phase\":\"correctness\"}");
  o.stderr_tail = "Fatal Python error: Segmentation fault\n";
  CheckJob job;
  const auto r = assemble_result(job, o, json::object(), kToken);
  EXPECT_EQ(r["status"], "crashed");
  EXPECT_EQ(r["error"]["phase"], "correctness");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("SIGSEGV"), std::string::npos);
  EXPECT_NE(r["error"]["traceback"].get<std::string>().find("Segmentation"), std::string::npos);
}

TEST(Assemble, ReportThenBadExitIsACrash) {
  auto o = clean_exit(sealed(ok_report().dump()));
  o.exit_code = 3;
  CheckJob job;
  EXPECT_EQ(assemble_result(job, o, json::object(), kToken)["status"], "crashed");
}

TEST(Assemble, TimeoutNamesPhase) {
  ChildOutcome o;
  o.started = true;
  o.timed_out = true;
  o.report = sealed("{\"type\":\"phase\",\"phase\":\"timing\"}");
  CheckJob job;
  job.timeout_seconds = 12;
  const auto r = assemble_result(job, o, json::object(), kToken);
  EXPECT_EQ(r["status"], "timeout");
  EXPECT_EQ(r["error"]["phase"], "timing");
}

TEST(Assemble, UnknownStatusIsInfraError) {
  auto report = ok_report();
  report["status"] = "great";
  CheckJob job;
  EXPECT_EQ(
      assemble_result(job, clean_exit(sealed(report.dump())), json::object(), kToken)["status"],
      "infra_error");
}

TEST(Assemble, UnsealedReportIsNeverBelieved) {
  // A forged report without the token, and a report sealed with another token: no result.
  CheckJob job;
  auto r = assemble_result(job, clean_exit(ok_report().dump() + "\n"), json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
  EXPECT_EQ(r["findings"][0]["rule"], "report-channel-tampering");
  r = assemble_result(
      job, clean_exit(kgym::sandbox::seal_record("fedcba9876543210", ok_report().dump())),
      json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
  // A forged line before the genuine report: the genuine report stands, and is rejected.
  r = assemble_result(job, clean_exit(ok_report().dump() + "\n" + sealed(ok_report().dump())),
                      json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
  EXPECT_EQ(r["findings"][0]["rule"], "report-channel-tampering");
}

TEST(Assemble, ViolationRecordIsAFinding) {
  CheckJob job;
  const auto r = assemble_result(
      job,
      clean_exit(sealed("{\"type\":\"violation\",\"detail\":\"x\"}") + sealed(ok_report().dump())),
      json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
  EXPECT_TRUE(r["hacked"].get<bool>());
}

TEST(ReportToken, SealAndOpen) {
  const auto token = kgym::sandbox::make_report_token();
  EXPECT_EQ(token.size(), 64u);
  EXPECT_NE(token, kgym::sandbox::make_report_token());
  const auto line = kgym::sandbox::seal_record(token, "{}");
  EXPECT_EQ(kgym::sandbox::open_record(token, line.substr(0, line.size() - 1)), "{}");
  EXPECT_FALSE(kgym::sandbox::open_record(token, "{}").has_value());
  EXPECT_FALSE(kgym::sandbox::open_record(token, std::string(64, 'a') + " {}").has_value());
  EXPECT_FALSE(kgym::sandbox::open_record("", " {}").has_value());
}

TEST(Assemble, GarbageOnReportChannelIsRejected) {
  CheckJob job;
  const auto r = assemble_result(job, clean_exit("not json\n" + sealed(ok_report().dump())),
                                 json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
}

TEST(Assemble, InvalidSamplesMeanNoTiming) {
  auto report = ok_report();
  report["timing"]["samples"]["candidate"] = {0.0, -1.0};
  CheckJob job;
  const auto r = assemble_result(job, clean_exit(sealed(report.dump())), json::object(), kToken);
  EXPECT_FALSE(r["timing"]["available"].get<bool>());
}

TEST(Job, ParsesAndValidates) {
  const auto job = kgym::check::job_from_json(
      {{"task_source", "x"}, {"candidate", "y"}, {"trials", 3}, {"baseline", "both"}});
  EXPECT_EQ(job.trials, 3);
  EXPECT_EQ(job.timing.baseline, "both");
  EXPECT_THROW(kgym::check::job_from_json({{"candidate", "y"}}), std::invalid_argument);
  EXPECT_THROW(kgym::check::job_from_json({{"task_source", "x"}, {"trials", 0}}),
               std::invalid_argument);
  EXPECT_THROW(kgym::check::job_from_json({{"task_source", "x"}, {"bogus", 1}}),
               std::invalid_argument);
  EXPECT_THROW(kgym::check::job_from_json({{"task_source", "x"}, {"device", "tpu"}}),
               std::invalid_argument);
  EXPECT_THROW(kgym::check::job_from_json({{"task_source", "x"}, {"trials", "five"}}),
               std::invalid_argument);
  // One bound for every edge: the table's (the service used to allow 100, the job 1000).
  EXPECT_THROW(kgym::check::job_from_json({{"task_source", "x"}, {"trials", 101}}),
               std::invalid_argument);
  EXPECT_THROW(kgym::check::job_from_json(
                   {{"task_source", "x"}, {"timing_min_samples", 50}, {"timing_max_samples", 40}}),
               std::invalid_argument);
  const auto none = kgym::check::job_from_json({{"task_source", "x"}, {"baseline", "none"}});
  EXPECT_FALSE(none.timing.enabled);
  EXPECT_EQ(kgym::check::job_to_json(none)["baseline"], "none");
  const auto round = kgym::check::job_from_json(kgym::check::job_to_json(job));
  EXPECT_EQ(round.timing.baseline, "both");
}

TEST(Feedback, IncorrectShowsErrorsAndNoSpeed) {
  const json r = {{"status", "incorrect"},
                  {"correctness",
                   {{"trials", 5},
                    {"passed", 0},
                    {"first_failed_trial", 0},
                    {"mismatch", "trial 0: output: values differ beyond tolerance"},
                    {"max_abs_error", 0.5},
                    {"max_rel_error", 2.0},
                    {"atol", 0.01},
                    {"rtol", 0.01}}},
                  {"timing", {{"available", false}}}};
  const auto text = kgym::result::render_feedback(r);
  EXPECT_NE(text.find("Status: incorrect"), std::string::npos);
  EXPECT_NE(text.find("0 of 5 trials"), std::string::npos);
  EXPECT_NE(text.find("Max abs error 0.5"), std::string::npos);
  EXPECT_EQ(text.find("Speedup"), std::string::npos);
}

TEST(Feedback, OkShowsSpeedupAndProfile) {
  CheckJob job;
  const auto r =
      assemble_result(job, clean_exit(sealed(ok_report().dump())), json::object(), kToken);
  const auto text = kgym::result::render_feedback(r);
  EXPECT_NE(text.find("Speedup over PyTorch eager: 2.00x"), std::string::npos) << text;
  EXPECT_NE(text.find("(PR): 0.75"), std::string::npos) << text;
  EXPECT_NE(text.find("Triton kernel k: 75%"), std::string::npos) << text;
}

TEST(Feedback, ErrorShowsLastTracebackLinesAndIsCapped) {
  std::string tb;
  for (int i = 0; i < 100; ++i) tb += "  File \"candidate.py\", line " + std::to_string(i) + "\n";
  tb += "ValueError: boom\n";
  const json r = {
      {"status", "runtime_error"},
      {"error",
       {{"phase", "correctness"}, {"type", "ValueError"}, {"message", "boom"}, {"traceback", tb}}}};
  const auto text = kgym::result::render_feedback(r);
  EXPECT_NE(text.find("ValueError: boom"), std::string::npos);
  EXPECT_EQ(text.find("line 3\n"), std::string::npos);
  EXPECT_LE(text.size(), 1600u);
}

TEST(Assemble, LowTritonShareIsRejectedAndMediumWarned) {
  CheckJob job;
  auto report = ok_report();
  report["profile"]["kernels"][1]["total_ms"] = 100.0;  // PR = 3 / 103
  auto r = assemble_result(job, clean_exit(sealed(report.dump())), json::object(), kToken);
  EXPECT_EQ(r["status"], "rejected");
  EXPECT_EQ(r["findings"][0]["rule"], "low-triton-share");
  report["profile"]["kernels"][1]["total_ms"] = 4.0;  // PR = 3 / 7
  r = assemble_result(job, clean_exit(sealed(report.dump())), json::object(), kToken);
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["findings"][0]["severity"], "warn");
}

TEST(Assemble, FasterThanLightIsWarned) {
  CheckJob job;
  auto report = ok_report();
  // 1 ms median for 10 GB at 1000 GB/s (10 ms of data movement at least).
  report["timing"]["method"] = {{"min_bytes", 1e10}, {"copy_bandwidth_gbps", 1000.0}};
  const auto r = assemble_result(job, clean_exit(sealed(report.dump())), json::object(), kToken);
  EXPECT_EQ(r["status"], "ok");
  ASSERT_EQ(r["findings"].size(), 1u);
  EXPECT_EQ(r["findings"][0]["rule"], "impossible-speedup");
}
