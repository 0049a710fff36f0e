// kgym::result::read_result: the typed Result shared by feedback, rewards and the service.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kgym/result/feedback.hpp"
#include "kgym/result/result.hpp"

namespace {

using kgym::result::read_result;
using kgym::result::read_result_leniently;
using kgym::result::ResultError;
using kgym::result::Severity;
using nlohmann::json;

json summary(double median) {
  return {{"samples", 5},     {"median_ms", median}, {"mean_ms", median},
          {"min_ms", median}, {"max_ms", median},    {"p25_ms", median},
          {"p75_ms", median}, {"mad_ms", 0.0},       {"cv", 0.0}};
}

// Every field the producers write (check::evaluate's base_result and assemble_result).
json full_result() {
  return {
      {"schema", "kgym.result/1"},
      {"task_id", "01_relu"},
      {"status", "ok"},
      {"judge", {{"torch_compute", "strict"}, {"process", "separate"}}},
      {"compiled", true},
      {"correct", true},
      {"hacked", false},
      {"findings",
       {{{"rule", "low-triton-share"}, {"severity", "warn"}, {"line", nullptr}, {"detail", "d"}},
        {{"rule", "style"}, {"severity", "warn"}, {"line", 7}, {"detail", "e"}}}},
      {"correctness",
       {{"trials", 5},
        {"passed", 5},
        {"atol", 0.01},
        {"rtol", 0.02},
        {"max_abs_error", 1e-6},
        {"max_rel_error", 2e-6},
        {"first_failed_trial", nullptr},
        {"mismatch", nullptr},
        {"weights_copied", true},
        {"sizes", "gpu"},
        {"input_seeds", "drawn from the OS for every call"}}},
      {"timing",
       {{"available", true},
        {"reference", summary(2.0)},
        {"candidate", summary(1.0)},
        {"speedup", 2.0},
        {"speedup_ci", {1.9, 2.1}},
        {"confidence", 0.95},
        {"compile", summary(1.5)},
        {"speedup_vs_compile", 1.5},
        {"speedup_vs_compile_ci", {1.4, 1.6}},
        {"method", {{"clock", "cuda_event"}}}}},
      {"profile",
       {{"available", true},
        {"triton_share", 0.75},
        {"total_kernel_ms", 4.0},
        {"triton_kernel_ms", 3.0},
        {"calls_profiled", 3},
        {"kernels",
         {{{"name", "k"}, {"triton", true}, {"calls", 3}, {"total_ms", 3.0}},
          {{"name", "memset"}, {"triton", false}, {"calls", 3}, {"total_ms", 1.0}}}}}},
      {"error", nullptr},
      {"device", {{"kind", "cuda"}, {"name", "H100"}}},
      {"durations_ms", {{"load", 10.0}, {"timing", 20.0}, {"total", 40.0}, {"harness_x", 1}}},
      {"sandbox", {{"network_isolated", true}, {"exit_code", 0}}},
      {"extraction", {{"rule", "fenced_block"}, {"ok", true}, {"chars", 100}}},
  };
}

// The message read_result gives for `r`, or "" when it reads.
std::string error_of(const json& r) {
  try {
    read_result(r);
  } catch (const ResultError& e) {
    return e.what();
  }
  return "";
}

std::string error_after(const std::function<void(json&)>& mutate) {
  json r = full_result();
  mutate(r);
  return error_of(r);
}

TEST(ReadResult, FullResultReadsEveryField) {
  const auto r = read_result(full_result());
  EXPECT_EQ(r.schema, "kgym.result/1");
  EXPECT_EQ(r.task_id, "01_relu");
  EXPECT_EQ(r.status, "ok");
  EXPECT_TRUE(r.compiled);
  EXPECT_TRUE(r.correct);
  EXPECT_FALSE(r.hacked);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].rule, "low-triton-share");
  EXPECT_EQ(r.findings[0].severity, Severity::kWarn);
  EXPECT_FALSE(r.findings[0].line);
  EXPECT_EQ(r.findings[1].line, 7);
  EXPECT_EQ(r.findings[1].detail, "e");
  ASSERT_TRUE(r.correctness);
  EXPECT_EQ(r.correctness->trials, 5);
  EXPECT_EQ(r.correctness->passed, 5);
  EXPECT_DOUBLE_EQ(r.correctness->atol, 0.01);
  EXPECT_DOUBLE_EQ(r.correctness->rtol, 0.02);
  EXPECT_EQ(r.correctness->max_abs_error, 1e-6);
  EXPECT_EQ(r.correctness->max_rel_error, 2e-6);
  EXPECT_FALSE(r.correctness->first_failed_trial);
  EXPECT_FALSE(r.correctness->mismatch);
  EXPECT_EQ(r.correctness->weights_copied, true);
  EXPECT_EQ(r.correctness->sizes, "gpu");
  ASSERT_TRUE(r.timing);
  EXPECT_TRUE(r.timing->available);
  EXPECT_EQ(r.timing->speedup, 2.0);
  ASSERT_TRUE(r.timing->speedup_ci);
  EXPECT_EQ(r.timing->speedup_ci->low, 1.9);
  EXPECT_EQ(r.timing->speedup_ci->high, 2.1);
  EXPECT_EQ(r.timing->confidence, 0.95);
  EXPECT_EQ(r.timing->speedup_vs_compile, 1.5);
  ASSERT_TRUE(r.timing->speedup_vs_compile_ci);
  ASSERT_TRUE(r.timing->reference && r.timing->candidate && r.timing->compile);
  EXPECT_EQ(r.timing->reference->median_ms, 2.0);
  EXPECT_EQ(r.timing->reference->samples, 5u);
  EXPECT_EQ(r.timing->candidate->median_ms, 1.0);
  EXPECT_EQ(r.timing->method["clock"], "cuda_event");
  ASSERT_TRUE(r.profile);
  EXPECT_TRUE(r.profile->available);
  EXPECT_EQ(r.profile->triton_share, 0.75);
  EXPECT_EQ(r.profile->total_kernel_ms, 4.0);
  EXPECT_EQ(r.profile->triton_kernel_ms, 3.0);
  EXPECT_EQ(r.profile->calls_profiled, 3);
  ASSERT_EQ(r.profile->kernels.size(), 2u);
  EXPECT_EQ(r.profile->kernels[0].name, "k");
  EXPECT_TRUE(r.profile->kernels[0].triton);
  EXPECT_EQ(r.profile->kernels[1].calls, 3);
  EXPECT_EQ(r.profile->kernels[1].total_ms, 1.0);
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.durations_ms.at("total"), 40.0);
  EXPECT_EQ(r.durations_ms.at("harness_x"), 1.0);
  EXPECT_EQ(r.judge["process"], "separate");
  EXPECT_EQ(r.device["kind"], "cuda");
  EXPECT_EQ(r.sandbox["exit_code"], 0);
  EXPECT_EQ(r.extraction["rule"], "fenced_block");
}

TEST(ReadResult, ErrorObjectAndFailedCorrectness) {
  json j = full_result();
  j["status"] = "runtime_error";
  j["error"] = {
      {"phase", "correctness"}, {"type", "ValueError"}, {"message", "boom"}, {"traceback", "tb"}};
  j["correctness"]["passed"] = 2;
  j["correctness"]["first_failed_trial"] = 2;
  j["correctness"]["mismatch"] = "trial 2: values differ";
  const auto r = read_result(j);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->phase, "correctness");
  EXPECT_EQ(r.error->type, "ValueError");
  EXPECT_EQ(r.error->message, "boom");
  EXPECT_EQ(r.error->traceback, "tb");
  EXPECT_EQ(r.correctness->first_failed_trial, 2);
  EXPECT_EQ(r.correctness->mismatch, "trial 2: values differ");
}

TEST(ReadResult, MinimalResultNeedsOnlyTheVerdict) {
  const json j = {
      {"status", "incorrect"}, {"compiled", true}, {"correct", false}, {"hacked", false}};
  const auto r = read_result(j);
  EXPECT_EQ(r.status, "incorrect");
  EXPECT_TRUE(r.findings.empty());
  EXPECT_FALSE(r.correctness);
  EXPECT_FALSE(r.timing);
  EXPECT_FALSE(r.profile);
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.judge.is_null());
  EXPECT_TRUE(r.durations_ms.empty());
}

TEST(ReadResult, RequiredFieldsNameTheirPath) {
  EXPECT_EQ(error_of(json::array()), "result: expected an object, got array");
  EXPECT_EQ(error_after([](json& r) { r.erase("status"); }), "result.status: missing");
  EXPECT_EQ(error_after([](json& r) { r["status"] = 3; }),
            "result.status: expected a string, got number");
  EXPECT_EQ(error_after([](json& r) { r["status"] = "great"; }),
            "result.status: unknown status 'great' (expected one of: ok, rejected, "
            "compile_error, runtime_error, incorrect, timeout, crashed, infra_error)");
  for (const char* key : {"compiled", "correct", "hacked"}) {
    EXPECT_EQ(error_after([&](json& r) { r.erase(key); }),
              fmt::format("result.{}: missing (a boolean is required)", key));
    EXPECT_EQ(error_after([&](json& r) { r[key] = "yes"; }),
              fmt::format("result.{}: expected a boolean, got string", key));
  }
  EXPECT_EQ(error_after([](json& r) { r["timing"].erase("available"); }),
            "result.timing.available: missing (a boolean is required)");
  EXPECT_EQ(error_after([](json& r) { r["profile"]["available"] = 1; }),
            "result.profile.available: expected a boolean, got number");
  EXPECT_EQ(error_after([](json& r) { r["timing"] = "fast"; }),
            "result.timing: expected an object, got string");
  EXPECT_EQ(error_after([](json& r) { r["correctness"].erase("trials"); }),
            "result.correctness.trials: missing (an integer is required)");
  EXPECT_EQ(error_after([](json& r) { r["correctness"]["passed"] = 2.5; }),
            "result.correctness.passed: expected an integer, got number");
  EXPECT_EQ(error_after([](json& r) { r["correctness"]["max_abs_error"] = "big"; }),
            "result.correctness.max_abs_error: expected a number or null, got string");
  EXPECT_EQ(error_after([](json& r) {
              r["error"] = {{"phase", "load"}, {"type", "E"}, {"message", "m"}};
            }),
            "result.error.traceback: missing (a string is required)");
  EXPECT_EQ(error_after([](json& r) { r["timing"]["speedup"] = "2x"; }),
            "result.timing.speedup: expected a number or null, got string");
  EXPECT_EQ(error_after([](json& r) { r["timing"]["speedup"] = -1.0; }),
            "result.timing.speedup: must be a finite number > 0, got -1");
  EXPECT_EQ(error_after([](json& r) { r["timing"]["speedup_ci"] = {1.0}; }),
            "result.timing.speedup_ci: expected two numbers [low, high] or null");
  EXPECT_EQ(error_after([](json& r) { r["timing"]["reference"].erase("median_ms"); }),
            "result.timing.reference.median_ms: missing (a number is required)");
  EXPECT_EQ(error_after([](json& r) { r["profile"]["triton_share"] = 1.5; }),
            "result.profile.triton_share: must lie in [0, 1], got 1.5");
  EXPECT_EQ(error_after([](json& r) { r["profile"]["kernels"][1].erase("name"); }),
            "result.profile.kernels[1].name: missing (a string is required)");
  EXPECT_EQ(error_after([](json& r) { r["durations_ms"]["load"] = "slow"; }),
            "result.durations_ms.load: expected a number or null, got string");
  EXPECT_EQ(error_after([](json& r) { r["judge"] = 1; }),
            "result.judge: expected an object, got number");
}

TEST(ReadResult, FindingSeverities) {
  json j = full_result();
  j["findings"].push_back({{"rule", "aliasing"}, {"severity", "reject"}, {"detail", "x"}});
  const auto read = read_result(j);
  ASSERT_EQ(read.findings.size(), 3u);
  EXPECT_EQ(read.findings[2].severity, Severity::kReject);
  EXPECT_FALSE(read.findings[2].line);

  EXPECT_EQ(error_after([](json& r) { r["findings"] = "none"; }),
            "result.findings: expected a list, got string");
  EXPECT_EQ(error_after([](json& r) { r["findings"][1] = 3; }),
            "result.findings[1]: expected an object");
  EXPECT_EQ(error_after([](json& r) { r["findings"][0].erase("severity"); }),
            "result.findings[0].severity: missing or not a string (expected \"reject\" or "
            "\"warn\")");
  EXPECT_EQ(error_after([](json& r) { r["findings"][1]["severity"] = "fatal"; }),
            "result.findings[1].severity: 'fatal' is not \"reject\" or \"warn\"");
  EXPECT_EQ(error_after([](json& r) { r["findings"][0].erase("rule"); }),
            "result.findings[0].rule: missing (a string is required)");
  EXPECT_EQ(error_after([](json& r) { r["findings"][0]["line"] = "7"; }),
            "result.findings[0].line: expected an integer or null, got string");
}

TEST(ReadResult, ExtraFieldsAreIgnored) {
  json j = full_result();
  j["schema_version"] = 1;
  j["something_new"] = {{"nested", true}};
  j["timing"]["reference_check"] = {{"drifted", false}};
  j["correctness"]["new_stat"] = "x";
  j["findings"][0]["confidence"] = 0.5;
  j["profile"]["kernels"][0]["stream"] = 7;
  const auto r = read_result(j);
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.profile->kernels.size(), 2u);
}

TEST(ReadResult, NullOrUnavailableTimingAndProfile) {
  json j = full_result();
  j["timing"] = nullptr;
  j["profile"] = nullptr;
  auto r = read_result(j);
  EXPECT_FALSE(r.timing);
  EXPECT_FALSE(r.profile);
  j.erase("timing");
  j.erase("profile");
  r = read_result(j);
  EXPECT_FALSE(r.timing);
  EXPECT_FALSE(r.profile);
  // Unavailable: only the reason is read, whatever else is there.
  j["timing"] = {{"available", false}, {"reason", "CPU"}, {"speedup", "n/a"}};
  j["profile"] = {{"available", false}, {"triton_share", 7}};
  r = read_result(j);
  ASSERT_TRUE(r.timing && r.profile);
  EXPECT_FALSE(r.timing->available);
  EXPECT_EQ(r.timing->reason, "CPU");
  EXPECT_FALSE(r.timing->speedup);
  EXPECT_FALSE(r.profile->available);
  EXPECT_FALSE(r.profile->reason);
  EXPECT_FALSE(r.profile->triton_share);
  // Available but with nothing measured: the speedups and PR are null.
  j["timing"] = {{"available", true}, {"speedup", nullptr}};
  j["profile"] = {{"available", true}, {"triton_share", nullptr}};
  r = read_result(j);
  EXPECT_TRUE(r.timing->available);
  EXPECT_FALSE(r.timing->speedup);
  EXPECT_FALSE(r.profile->triton_share);
}

TEST(ReadResultLeniently, KeepsWhatCanBeReadAndNeverThrows) {
  const json j = {{"status", "great"},
                  {"compiled", "yes"},
                  {"findings",
                   {{{"severity", "warn"}, {"detail", "d"}},
                    {{"severity", "fatal"}},
                    3,
                    {{"severity", "reject"}, {"rule", "r"}, {"line", 4.0}}}},
                  {"correctness", {{"trials", 5.0}, {"passed", "x"}}},
                  {"timing", {{"available", true}, {"speedup", -1.0}, {"reference", 3}}},
                  {"profile", {{"available", true}, {"kernels", {{{"name", 1}}, 2}}}},
                  {"durations_ms", {{"load", "slow"}, {"total", 5}}}};
  EXPECT_THROW(read_result(j), ResultError);
  const auto r = read_result_leniently(j);
  EXPECT_EQ(r.status, "great");
  EXPECT_FALSE(r.compiled);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].rule, "?");
  EXPECT_EQ(r.findings[1].line, 4);
  EXPECT_EQ(r.correctness->trials, 5);
  EXPECT_EQ(r.correctness->passed, 0);
  EXPECT_EQ(r.timing->speedup, -1.0);  // out of range, kept as read
  EXPECT_FALSE(r.timing->reference);
  ASSERT_EQ(r.profile->kernels.size(), 1u);
  EXPECT_EQ(r.profile->kernels[0].name, "?");
  EXPECT_EQ(r.durations_ms.size(), 1u);
  EXPECT_EQ(read_result_leniently(json(nullptr)).status, "infra_error");
  EXPECT_EQ(read_result_leniently(json::array()).status, "infra_error");
}

TEST(Feedback, TypedAndJsonAgree) {
  const json j = full_result();
  const auto text = kgym::result::render_feedback(j);
  EXPECT_EQ(text, kgym::result::render_feedback(read_result(j)));
  EXPECT_EQ(text,
            "Status: ok\n"
            "Correctness: all 5 trials passed\n"
            "Max abs error 1e-06 (atol 0.01), max rel error 2e-06 (rtol 0.02)\n"
            "Speedup over PyTorch eager: 2.00x (reference 2 ms, yours 1 ms)\n"
            "Speedup over torch.compile: 1.50x\n"
            "Triton share of CUDA kernel time (PR): 0.75\n"
            "- Triton kernel k: 75% of kernel time\n"
            "- non-Triton kernel memset: 25% of kernel time\n"
            "Warning [low-triton-share]: d\n"
            "Warning [style]: e");
}

TEST(Feedback, DamagedResultStillGetsFeedback) {
  const json j = {{"status", "rejected"},
                  {"findings",
                   {{{"severity", "reject"}, {"line", 3}, {"detail", "aliasing"}},
                    {{"severity", "fatal"}, {"rule", "x"}}}},
                  {"error", {{"phase", 4}}},
                  {"timing", "fast"}};
  EXPECT_EQ(kgym::result::render_feedback(j),
            "Status: rejected\n"
            "Rejected by the integrity checks; no reward for speed:\n"
            "- [?] (line 3) aliasing\n"
            "Error in phase '?': Error: ");
  EXPECT_EQ(kgym::result::render_feedback(json::object()), "Status: infra_error");
}

}  // namespace
